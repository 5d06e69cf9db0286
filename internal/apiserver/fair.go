package apiserver

import (
	"container/heap"
	"context"
	"runtime"
	"sync"
)

// Long reads (un-paged lists and watches' initial events beyond their first page) are
// bounded in how much of the machine they take at once, as kube-apiserver's API Priority
// and Fairness gives a list a width in seats by its size: each further storage page of
// such a list (its read, decode and encoding; not its writing to the client), and each 64
// initial objects of such a watch (their decoding), take one of MaxLongReads seats,
// waiting for it within the request's deadline. A list of 40 pages so takes 40 turns,
// and cheap requests, which take no such seat, keep the cores those reads leave free. A
// free seat goes to the waiting read that started first, so that lists end one after
// another instead of all together late (or all cut off by their deadlines).

// heavySeats is how many pages of long reads are read and encoded at once by default:
// half the cores the Go runtime uses, at least one.
func heavySeats() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// pager hands out the seats of long reads.
type pager struct {
	mu      sync.Mutex
	free    int
	waiters waiterHeap
	next    uint64
	// waiting, when set, is told when a page starts (+1) and stops (-1) waiting for a seat.
	waiting func(delta int)
}

func newPager(n int, waiting func(int)) *pager {
	return &pager{free: n, waiting: waiting}
}

// ticket orders a long read among the others: earlier tickets get seats first.
func (p *pager) ticket() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	return p.next
}

// waiter is a page waiting for a seat; granted is closed when it is given one.
type waiter struct {
	ticket  uint64
	granted chan struct{}
	index   int
}

// acquire waits for a seat until ctx ends.
func (p *pager) acquire(ctx context.Context, ticket uint64) error {
	p.mu.Lock()
	if p.free > 0 && len(p.waiters) == 0 {
		p.free--
		p.mu.Unlock()
		return nil
	}
	w := &waiter{ticket: ticket, granted: make(chan struct{})}
	heap.Push(&p.waiters, w)
	p.mu.Unlock()
	if p.waiting != nil {
		p.waiting(1)
		defer p.waiting(-1)
	}
	select {
	case <-w.granted:
		return nil
	case <-ctx.Done():
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-w.granted:
		// Given a seat as the context ended: pass it on.
		p.releaseLocked()
	default:
		heap.Remove(&p.waiters, w.index)
	}
	return ctx.Err()
}

// release gives a seat back, to the earliest waiting ticket if any.
func (p *pager) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.releaseLocked()
}

func (p *pager) releaseLocked() {
	if len(p.waiters) > 0 {
		w := heap.Pop(&p.waiters).(*waiter)
		close(w.granted)
		return
	}
	p.free++
}

// waiterHeap orders waiters by ticket.
type waiterHeap []*waiter

func (h waiterHeap) Len() int           { return len(h) }
func (h waiterHeap) Less(i, j int) bool { return h[i].ticket < h[j].ticket }
func (h waiterHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *waiterHeap) Push(x any) {
	w := x.(*waiter)
	w.index = len(*h)
	*h = append(*h, w)
}
func (h *waiterHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return w
}
