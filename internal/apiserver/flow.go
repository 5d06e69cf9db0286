package apiserver

import (
	"container/list"
	"context"
	"errors"
	"sync"
	"time"
)

// The in-flight bounds (kube-apiserver's --max-requests-inflight and
// --max-mutating-requests-inflight) are shared fairly among the clients asking for them,
// as upstream's API Priority and Fairness shares a priority level's seats among its
// flows: a request that finds every seat taken waits in its flow's queue (a flow is one
// user; every unauthenticated request is one flow), and a seat set free goes to the
// queues in turn, one request each, so a client holding many connections gets no more of
// the server than one holding a single connection. A request waits at most its deadline
// and at most maxQueueWait; it is refused with upstream's 429 when its wait ends, when its
// flow already has queueLength requests waiting, or when queueing is off (queueLength 0:
// kube-apiserver's plain max-in-flight filter).

// maxQueueWait bounds how long a request waits for a seat: upstream's APF lets a request
// wait a quarter of the request timeout (15 s by default).
const maxQueueWait = 15 * time.Second

// DefaultQueueLength is how many requests of one flow may wait for a seat of one bound,
// APF's default queue length per queue.
const DefaultQueueLength = 50

// errNoSeat is a request refused a seat (the in-flight 429).
var errNoSeat = errors.New("no seat")

// seats is one in-flight bound with its fair queues; a nil *seats is no bound.
type seats struct {
	mu sync.Mutex
	// free seats; while any flow waits, free is 0.
	free int
	// queueLength bounds each flow's waiters; 0 refuses at once.
	queueLength int
	// flows holds the queue of every flow with waiters, ring their turn order.
	flows map[string]*flowQueue
	ring  *list.List
	// waiting, when set, is told when a request starts (+1) and stops (-1) waiting.
	waiting func(delta int)
}

// flowQueue is one flow's waiting requests, first come first served.
type flowQueue struct {
	key     string
	waiters *list.List // of *seatWaiter
	turn    *list.Element
}

type seatWaiter struct {
	granted chan struct{}
	q       *flowQueue
	elem    *list.Element
}

func newSeats(n, queueLength int, waiting func(int)) *seats {
	if n <= 0 {
		return nil
	}
	return &seats{free: n, queueLength: queueLength, flows: map[string]*flowQueue{}, ring: list.New(), waiting: waiting}
}

// acquire takes a seat for a request of flow, waiting within ctx and maxQueueWait; it
// returns the seat's release, or errNoSeat.
func (s *seats) acquire(ctx context.Context, flow string) (func(), error) {
	if s == nil {
		return func() {}, nil
	}
	s.mu.Lock()
	if s.free > 0 {
		s.free--
		s.mu.Unlock()
		return s.release, nil
	}
	q := s.flows[flow]
	if s.queueLength == 0 || (q != nil && q.waiters.Len() >= s.queueLength) {
		s.mu.Unlock()
		return nil, errNoSeat
	}
	if q == nil {
		q = &flowQueue{key: flow, waiters: list.New()}
		q.turn = s.ring.PushBack(q)
		s.flows[flow] = q
	}
	w := &seatWaiter{granted: make(chan struct{}), q: q}
	w.elem = q.waiters.PushBack(w)
	s.mu.Unlock()
	if s.waiting != nil {
		s.waiting(1)
		defer s.waiting(-1)
	}
	timer := time.NewTimer(maxQueueWait)
	defer timer.Stop()
	select {
	case <-w.granted:
		return s.release, nil
	case <-ctx.Done():
	case <-timer.C:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-w.granted:
		// Granted while giving up: the seat is ours; hand it on.
		s.releaseLocked()
	default:
		s.removeLocked(w)
	}
	return nil, errNoSeat
}

// release gives a seat back: to the next flow's first waiter in turn, or to the free ones.
func (s *seats) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked()
}

func (s *seats) releaseLocked() {
	front := s.ring.Front()
	if front == nil {
		s.free++
		return
	}
	q := front.Value.(*flowQueue)
	w := q.waiters.Front().Value.(*seatWaiter)
	s.removeLocked(w)
	if q.waiters.Len() > 0 {
		// The flow still waits: its next request's turn comes after every other flow's.
		s.ring.MoveToBack(q.turn)
	}
	close(w.granted)
}

// removeLocked takes a waiter out of its queue, and the queue out of the ring once empty.
func (s *seats) removeLocked(w *seatWaiter) {
	q := w.q
	q.waiters.Remove(w.elem)
	if q.waiters.Len() == 0 {
		s.ring.Remove(q.turn)
		delete(s.flows, q.key)
	}
}

// inflight is the two bounds, as kube-apiserver's max-in-flight filter: one for reads,
// one for writes.
type inflight struct {
	readOnly, mutating *seats
}

func newInflight(readOnly, mutating, queueLength int, waiting func(int)) *inflight {
	return &inflight{readOnly: newSeats(readOnly, queueLength, waiting), mutating: newSeats(mutating, queueLength, waiting)}
}

// acquire takes a seat of the request's bound for flow, waiting in the flow's queue
// within ctx; ok is false when the request is refused.
func (l *inflight) acquire(ctx context.Context, mutating bool, flow string) (release func(), ok bool) {
	s := l.readOnly
	if mutating {
		s = l.mutating
	}
	release, err := s.acquire(ctx, flow)
	return release, err == nil
}
