package apiserver

import (
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
