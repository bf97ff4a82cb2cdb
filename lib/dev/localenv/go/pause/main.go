// Command pause is the process that holds a pod's namespaces (the node's sandbox image): it sleeps
// until SIGINT or SIGTERM and, being PID 1 of the pod's PID namespace when that is shared, reaps
// the zombies handed to it.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	// Only from here on does SIGTERM end it cleanly: before Notify, Go's runtime would re-raise the
	// signal, which a PID 1 ignores, and exit 2. Saying so lets a caller wait for this point.
	os.Stderr.WriteString("pause: ready\n")
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
