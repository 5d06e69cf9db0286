package apiserver

import (
	"context"
	"sync"
	"testing"
)

// TestPagerOrder: with every seat taken, a freed seat goes to the waiting page of the
// earliest ticket, whatever order the pages came in; a page whose context ends stops
// waiting and takes no seat.
func TestPagerOrder(t *testing.T) {
	tests := []struct {
		name    string
		arrive  []uint64 // tickets, in the order their pages start waiting
		cancel  uint64   // a ticket whose context ends while it waits (0: none)
		granted []uint64 // the order seats are given, one release at a time
	}{
		{name: "in order", arrive: []uint64{1, 2, 3}, granted: []uint64{1, 2, 3}},
		{name: "reversed", arrive: []uint64{3, 2, 1}, granted: []uint64{1, 2, 3}},
		{name: "mixed", arrive: []uint64{5, 2, 9, 4}, granted: []uint64{2, 4, 5, 9}},
		{name: "cancelled", arrive: []uint64{3, 1, 2}, cancel: 1, granted: []uint64{2, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			waiting, left := make(chan struct{}, len(tc.arrive)), make(chan struct{}, len(tc.arrive))
			p := newPager(1, func(d int) {
				if d > 0 {
					waiting <- struct{}{}
				} else {
					left <- struct{}{}
				}
			})
			if err := p.acquire(context.Background(), 0); err != nil {
				t.Fatal(err)
			}
			got := make(chan uint64, len(tc.arrive))
			var wg sync.WaitGroup
			cancels := map[uint64]context.CancelFunc{}
			for _, tk := range tc.arrive {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				cancels[tk] = cancel
				wg.Add(1)
				go func() {
					defer wg.Done()
					if p.acquire(ctx, tk) == nil {
						got <- tk
					}
				}()
				<-waiting
			}
			if tc.cancel != 0 {
				cancels[tc.cancel]()
				<-left
			}
			for _, want := range tc.granted {
				p.release()
				if g := <-got; g != want {
					t.Fatalf("seat given to %d, want %d", g, want)
				}
			}
			wg.Wait()
			p.release()
			// Every seat is back: one can be taken at once.
			if p.free != 1 || len(p.waiters) != 0 {
				t.Errorf("free %d, waiters %d after all released", p.free, len(p.waiters))
			}
		})
	}
}
