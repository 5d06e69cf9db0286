// Command etcdmain is etcd's own server main, built from the etcd server module this project
// already depends on, so that the high-availability tests (package ha) run a real
// multi-member etcd cluster as separate processes without an etcd binary on the machine.
// It takes etcd's flags.
package main
