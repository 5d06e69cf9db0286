package apiserver

import (
	"container/heap"
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quotad/quotad/internal/auth"
)

// Long reads (un-paged lists and watches' initial events beyond their first 64) are
// bounded in how much of the machine they take at once, as kube-apiserver's API Priority
// and Fairness gives a list a width in seats by its size: each further storage page of
// such a list (its read, its encoding and its writing to the client), and each 64
// initial objects of such a watch (their decoding), take one of MaxLongReads seats,
// waiting for it within the request's deadline. A list of 40 pages so takes 40 turns,
// and cheap requests, which take no such seat, keep the cores those reads leave free. A
// free seat goes to the waiting read that started first, so that lists end one after
// another instead of all together late (or all cut off by their deadlines).
//
// Long reads are background work while anybody else is served: a seat given back then
// rests LongReadRestFactor times as long as it was held (at most MaxLongReadRest) before
// the next page takes it, so long reads take at most a quarter of their seats' time while
// other requests are in flight or were within LongReadRestWindow; alone, they run at
// full speed. A page whose writing blocks on its client for MaxLongReadWriteHold gives
// its seat back at once (a slow or stalled reader holds no seat), without rest.
//
// The long reads of system:masters take no seat and never rest (pacedLongReads), as
// upstream's API Priority and Fairness exempts that group: the cluster's own components
// holding admin credentials (an informer's relist is an un-paged list of everything it
// follows) and an administrator are served at once.

const (
	// LongReadRestFactor is how many times as long as a page held its seat the seat rests.
	LongReadRestFactor = 3
	// MaxLongReadRest bounds the rest of a seat after a page.
	MaxLongReadRest = 100 * time.Millisecond
	// LongReadRestWindow is how long after another request long reads still rest.
	LongReadRestWindow = time.Second
	// MaxLongReadWriteHold is how long a page's writing may hold its seat.
	MaxLongReadWriteHold = 50 * time.Millisecond
)

// pacedLongReads reports whether the long reads of the request of ctx take seats of long
// reads: all but those of system:masters (exempt, as in upstream's API Priority and
// Fairness).
func pacedLongReads(ctx context.Context) bool {
	u, ok := auth.UserFrom(ctx)
	return !ok || !exempt(u)
}

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
	// others counts the requests in flight that are not long reads; lastOther is when
	// the last of them ended (unix nanoseconds).
	others, lastOther atomic.Int64
	// after runs f after d (time.AfterFunc; tests see the rests).
	after func(d time.Duration, f func())
}

// otherStarts and otherEnds mark a request that is not a long read in flight.
func (p *pager) otherStarts() { p.others.Add(1) }

func (p *pager) otherEnds() {
	p.lastOther.Store(time.Now().UnixNano())
	p.others.Add(-1)
}

// othersActive reports whether requests other than long reads are in flight or were
// within LongReadRestWindow.
func (p *pager) othersActive() bool {
	return p.others.Load() > 0 || time.Since(time.Unix(0, p.lastOther.Load())) < LongReadRestWindow
}

// longSeat is a seat of long reads held by a page.
type longSeat struct {
	p    *pager
	at   time.Time
	once sync.Once
	stop func() bool
}

// take waits for a seat until ctx ends.
func (p *pager) take(ctx context.Context, ticket uint64) (*longSeat, error) {
	if err := p.acquire(ctx, ticket); err != nil {
		return nil, err
	}
	return &longSeat{p: p, at: time.Now()}, nil
}

// writing tells the seat its page is being written to the client: if that blocks for
// MaxLongReadWriteHold, the seat goes back at once, without rest.
func (s *longSeat) writing() {
	t := time.AfterFunc(MaxLongReadWriteHold, func() { s.once.Do(s.p.release) })
	s.stop = t.Stop
}

// done gives the seat back (if writing has not): after resting as long as it was held
// when others are active.
func (s *longSeat) done() {
	if s.stop != nil {
		s.stop()
	}
	s.once.Do(func() {
		held := time.Since(s.at)
		if !s.p.othersActive() || held <= 0 {
			s.p.release()
			return
		}
		s.p.after(min(LongReadRestFactor*held, MaxLongReadRest), s.p.release)
	})
}

func newPager(n int, waiting func(int)) *pager {
	return &pager{free: n, waiting: waiting, after: func(d time.Duration, f func()) { time.AfterFunc(d, f) }}
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

// HeavyWorkBytes is the size of input (a patch and the object it patches) from which a
// request's work is done holding a seat of long reads: patching costs about its input
// (bounded as internal/jsonpatch and MaxStrategicMergeCost say), and from 64 KiB that is
// milliseconds of a core, which wait their turn instead of taking them from other
// tenants' requests.
const HeavyWorkBytes = 64 << 10

// workSeat charges one request's work to a seat of long reads, taken at most once.
type workSeat struct {
	s    *Server
	ctx  context.Context
	seat *longSeat
}

func (s *Server) workSeat(ctx context.Context) *workSeat { return &workSeat{s: s, ctx: ctx} }

// take takes the seat (waiting within the request's deadline), unless already held or the
// request's long reads are not paced.
func (w *workSeat) take() error {
	if w.seat != nil || !pacedLongReads(w.ctx) {
		return nil
	}
	seat, err := w.s.pager.take(w.ctx, w.s.requestTicket(w.ctx))
	if err != nil {
		return err
	}
	w.seat = seat
	return nil
}

// done gives the seat back, if taken.
func (w *workSeat) done() {
	if w.seat != nil {
		w.seat.done()
		w.seat = nil
	}
}

// work runs f, holding a seat of long reads while it runs when size is HeavyWorkBytes or
// more (waiting for the seat within ctx). f may take the seat itself through the
// workSeat when its work turns out heavy.
func (s *Server) work(ctx context.Context, size int, f func(*workSeat) error) error {
	ws := s.workSeat(ctx)
	defer ws.done()
	if size >= HeavyWorkBytes {
		if err := ws.take(); err != nil {
			return err
		}
	}
	return f(ws)
}
