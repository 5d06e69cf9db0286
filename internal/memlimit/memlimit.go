package memlimit

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// Default is quotad's policy when GOMEMLIMIT is not set: a soft limit of twice the live
// heap, and never under 320 MiB. With 100,000 pods (a live heap near 150 MB) the process
// stays under 400 MB; a live heap of 1 GB may grow to 2 GB between collections
// (docs/benchmarks.md).
var Default = Policy{Floor: 320 << 20, Factor: 2}

// Policy says what soft limit a live heap gets.
type Policy struct {
	// Floor is the least limit, whatever the live heap.
	Floor uint64
	// Factor times the live heap is the limit when that is above Floor.
	Factor float64
}

// Limit is the soft limit for a live heap of live bytes.
func (p Policy) Limit(live uint64) int64 {
	l := uint64(float64(live) * p.Factor)
	return int64(max(l, p.Floor))
}

// Follow sets the runtime's soft memory limit by p now and after every collection, until
// ctx ends (the limit then stays as last set); the channel it returns is closed when the
// first collection after that has seen it end. It learns of collections from a finalizer
// armed anew each cycle, so it costs nothing between them.
func Follow(ctx context.Context, p Policy) <-chan struct{} {
	stopped := make(chan struct{})
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	apply := func() {
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			debug.SetMemoryLimit(p.Limit(sample[0].Value.Uint64()))
		}
	}
	apply()
	var arm func()
	arm = func() {
		s := new(sentinel)
		runtime.SetFinalizer(s, func(*sentinel) {
			if ctx.Err() != nil {
				close(stopped)
				return
			}
			apply()
			arm()
		})
	}
	arm()
	return stopped
}

// sentinel is an object made only to be collected: its finalizer runs after the cycle that
// found it unreachable. It has a field so that it is a heap object of its own (a zero-size
// allocation shares one address and is never collected).
type sentinel struct{ _ int64 }
