// Command etcd is etcd's own server main (etcdmain), built here because the etcd module's
// command lives in a module with replace directives that `go install` refuses.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
