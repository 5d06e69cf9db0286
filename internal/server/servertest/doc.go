// Package servertest starts a real quotad in-process for tests: embedded etcd in
// t.TempDir(), HTTPS on a free loopback port, and a real client-go clientset. Every server
// it starts runs the quota invariant checker (design.md §2) when the test ends.
package servertest
