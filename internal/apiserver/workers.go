package apiserver

import (
	"context"
	"sync"
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

// serving counts the requests inside ServeHTTP, so that a shutdown can wait for them (Drain):
// a request's audit event is written as ServeHTTP returns, and http.Server.Shutdown does not
// wait for an HTTP/2 stream the client reset (a stopped watch) whose handler still runs.
type serving struct {
	n atomic.Int64
	// draining is set once Drain waits; then the request that brings n to 0 closes idle.
	draining atomic.Bool
	mu       sync.Mutex
	idle     chan struct{}
}

func (s *serving) begin() { s.n.Add(1) }

func (s *serving) end() {
	if s.n.Add(-1) == 0 && s.draining.Load() {
		s.mu.Lock()
		if s.idle != nil {
			close(s.idle)
			s.idle = nil
		}
		s.mu.Unlock()
	}
}

// Drain waits until no request is inside ServeHTTP, or ctx ends. Called after the HTTP
// server's Shutdown, so that no request starts meanwhile.
func (s *Server) Drain(ctx context.Context) {
	sv := &s.serving
	sv.mu.Lock()
	if sv.idle == nil {
		sv.idle = make(chan struct{})
	}
	idle := sv.idle
	sv.draining.Store(true)
	sv.mu.Unlock()
	// A request ending before draining was set did not look at idle: count again.
	if sv.n.Load() == 0 {
		return
	}
	select {
	case <-idle:
	case <-ctx.Done():
	}
}
