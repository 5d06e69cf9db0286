// Command etcdmain is etcd's own server main, built from the etcd server module this project
// already depends on, so that the high-availability tests run a real multi-member etcd
// cluster as separate processes without an etcd binary on the machine.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
