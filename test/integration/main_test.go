package integration

import (
	"flag"
	"os"
	"strconv"
	"testing"
)

// defaultParallel is how many tests run at once unless -test.parallel (go test -parallel) is
// given. Every test calls t.Parallel(): each starts its own servers (or takes a namespace of
// a shared one) on its own ports and data dirs, and most of a test's time is spent waiting on
// a server (timeouts, leases, watches), not on the CPU, so more tests than cores run at once.
const defaultParallel = 8

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(defaultParallel)); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
