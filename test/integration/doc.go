// Package integration holds quotad's integration tests: a real server in-process on embedded
// etcd in t.TempDir(), driven by real client-go. Every test ends with the quota invariant
// checker (servertest).
package integration
