// Package integration holds quotad's integration tests: a real server in-process on embedded
// etcd in t.TempDir(), driven by real client-go. Every test ends with the quota invariant
// checker (servertest).
//
// Every test runs in parallel with the others (t.Parallel(), 8 at once unless go test's
// -parallel says otherwise: see main_test.go) on servers of its own, except the few that
// measure the whole test process (its heap, its goroutines), which run alone first.
package integration
