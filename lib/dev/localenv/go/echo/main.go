// Command echo is the end-to-end tests' backend: it answers every HTTP request on $PORT (default
// 8080) with 200 and a JSON body naming the pod (from $POD_NAME, set through the downward API, else
// the hostname) and describing the request, so a test can tell which pod a Service picked.
package main

import (
	"encoding/json"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
)

type answer struct {
	Pod     string            `json:"pod"`
	Name    string            `json:"name"`
	Address string            `json:"address"`
	Host    string            `json:"host"`
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
}

func main() {
	pod := os.Getenv("POD_NAME")
	if pod == "" {
		pod, _ = os.Hostname()
	}
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers := map[string]string{}
		for k, v := range r.Header {
			if len(v) > 0 {
				headers[k] = v[0]
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(answer{
			Pod: pod, Name: pod, Address: r.Context().Value(http.LocalAddrContextKey).(net.Addr).String(),
			Host: r.Host, Method: r.Method, Path: r.URL.RequestURI(), Headers: headers,
		})
	})
	server := &http.Server{Addr: ":" + port, Handler: handler}
	go func() {
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
		<-stop
		_ = server.Close()
	}()
	log.Printf("echo: pod %s listening on :%s", pod, port)
	if err := server.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
}
