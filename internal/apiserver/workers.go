package apiserver

import (
	"sync/atomic"
	"time"
)

// handlerWorkers runs request handlers (withDeadline) on goroutines kept between requests.
// A handler needs a stack of tens of KB (decoding, validation, admission, the commit); a
// new goroutine starts with a few and copies its whole stack each time it doubles, which
// was 6% of the CPU of a create (docs/benchmarks.md). A kept worker's stack stays grown:
// the collector halves an idle one's at most once per cycle. Workers are not capped —
// the requests that reach a handler are (fair.go) — and one idle for workerIdle exits.
type handlerWorkers struct {
	// tasks hands a handler to a worker waiting for one; unbuffered, so a send succeeds
	// only when a worker is idle.
	tasks chan func()
	// spawned counts the workers started.
	spawned atomic.Int64
}

// workerIdle is how long a worker waits for its next handler before it exits.
const workerIdle = 10 * time.Second

func newHandlerWorkers() *handlerWorkers {
	return &handlerWorkers{tasks: make(chan func())}
}

// run runs f on an idle worker, or on a new one when none is idle. f must not panic
// (withDeadline's handler recovers its own).
func (hw *handlerWorkers) run(f func()) {
	select {
	case hw.tasks <- f:
	default:
		hw.spawned.Add(1)
		go hw.work(f)
	}
}

// work runs f, then the handlers it is handed, until none comes for workerIdle.
func (hw *handlerWorkers) work(f func()) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		f()
		f = nil
		idle.Reset(workerIdle)
		select {
		case f = <-hw.tasks:
		case <-idle.C:
			return
		}
	}
}
