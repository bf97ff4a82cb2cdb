// Command etcd is etcd's own server entry point, built from go.etcd.io/etcd/server/v3 at the
// version pinned in go.mod, so the test environment needs no prebuilt download.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
