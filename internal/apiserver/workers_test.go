package apiserver

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestHandlerWorkersAreKept: a handler handed over while a worker is idle runs on it; one
// handed over while all are busy gets a new worker; an idle worker exits after workerIdle.
func TestHandlerWorkersAreKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hw := newHandlerWorkers()
		ran := make(chan int, 4)
		block := make(chan struct{})
		hw.run(func() { ran <- 1 })
		synctest.Wait()
		hw.run(func() { <-block; ran <- 2 })
		if got := hw.spawned.Load(); got != 1 {
			t.Fatalf("second handler, with a worker idle: %d workers started, want 1", got)
		}
		synctest.Wait()
		hw.run(func() { ran <- 3 })
		if got := hw.spawned.Load(); got != 2 {
			t.Fatalf("third handler, the only worker busy: %d workers started, want 2", got)
		}
		close(block)
		synctest.Wait()
		time.Sleep(workerIdle + time.Second)
		synctest.Wait()
		hw.run(func() { ran <- 4 })
		if got := hw.spawned.Load(); got != 3 {
			t.Fatalf("after workerIdle: %d workers started, want 3 (the idle ones exited)", got)
		}
		synctest.Wait()
		close(ran)
		var got []int
		for n := range ran {
			got = append(got, n)
		}
		if len(got) != 4 {
			t.Fatalf("handlers run: %v, want all four", got)
		}
		time.Sleep(workerIdle + time.Second) // the last worker exits, ending the bubble
	})
}

// TestDrainWaitsForRequests: Drain returns at once with no request being served, waits for
// the last one otherwise, and gives up when its context ends.
func TestDrainWaitsForRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &Server{}
		s.Drain(t.Context()) // none: returns at once
		s.serving.begin()
		s.serving.begin()
		drained := make(chan struct{})
		go func() { s.Drain(t.Context()); close(drained) }()
		synctest.Wait()
		s.serving.end()
		synctest.Wait()
		select {
		case <-drained:
			t.Fatal("Drain returned with a request still served")
		default:
		}
		s.serving.end()
		synctest.Wait()
		select {
		case <-drained:
		default:
			t.Fatal("Drain did not return after the last request")
		}
		s.serving.begin()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		s.Drain(ctx) // returns when ctx ends
		if ctx.Err() == nil {
			t.Fatal("Drain returned before its context ended with a request served")
		}
		s.serving.end()
	})
}
