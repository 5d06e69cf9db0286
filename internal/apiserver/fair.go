package apiserver

import (
	"context"
	"runtime"
)

// Long reads (un-paged lists beyond their first page) are bounded in how much of the
// machine they take at once, as kube-apiserver's API Priority and Fairness gives a list a
// width in seats by its size: each further storage page of such a list (its read, decode
// and encoding; not its writing to the client) takes one of heavySeats seats, waiting for
// it within the request's deadline. A list of 40 pages so takes 40 turns, interleaved
// with the other long lists, and cheap requests, which take no such seat, keep the cores
// those lists leave free.

// heavySeats is how many pages of long reads are read and encoded at once: half the
// cores the Go runtime uses, at least one.
func heavySeats() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// pager hands out the seats of long reads.
type pager struct {
	seats chan struct{}
	// waiting, when set, is told when a page starts (+1) and stops (-1) waiting for a seat.
	waiting func(delta int)
}

func newPager(n int, waiting func(int)) *pager {
	return &pager{seats: make(chan struct{}, n), waiting: waiting}
}

// acquire waits for a seat until ctx ends.
func (p *pager) acquire(ctx context.Context) error {
	select {
	case p.seats <- struct{}{}:
		return nil
	default:
	}
	if p.waiting != nil {
		p.waiting(1)
		defer p.waiting(-1)
	}
	select {
	case p.seats <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *pager) release() { <-p.seats }
