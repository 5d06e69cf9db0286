package apiserver

import (
	"context"
	"testing"
	"time"

	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestSeatsServeFlowsInTurn: with the one seat taken, flow a queues three requests and
// flow b one; as seats are set free they go a, b, a, a (b's request is not served behind
// all of a's), and the seat is free again once nobody waits.
func TestSeatsServeFlowsInTurn(t *testing.T) {
	queued := make(chan int, 16)
	s := newSeats(1, 10, func(d int) { queued <- d })
	hold, err := s.acquire(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan string, 8)
	enqueue := func(flow, name string) {
		go func() {
			release, err := s.acquire(context.Background(), flow)
			if err != nil {
				served <- "refused " + name
				return
			}
			served <- name
			_ = release // released by the test, in order
		}()
		if d := <-queued; d != 1 {
			t.Fatalf("%s: waiting %+d", name, d)
		}
	}
	enqueue("a", "a1")
	enqueue("a", "a2")
	enqueue("a", "a3")
	enqueue("b", "b1")
	var order []string
	for i := 0; i < 4; i++ {
		hold()
		order = append(order, <-served)
		<-queued // the served request stopped waiting
		hold = s.release
	}
	if got, want := order, []string{"a1", "b1", "a2", "a3"}; !equalStrings(got, want) {
		t.Errorf("served %v, want %v", got, want)
	}
	hold()
	if s.free != 1 || s.ring.Len() != 0 || len(s.flows) != 0 {
		t.Errorf("after every release: free %d, ring %d, flows %d", s.free, s.ring.Len(), len(s.flows))
	}
}

// TestSeatsRefuse: a flow's queue is bounded; without queues a full bound refuses at
// once; a request whose context ends while it waits is refused and leaves no trace.
func TestSeatsRefuse(t *testing.T) {
	queued := make(chan int, 16)
	s := newSeats(1, 1, func(d int) { queued <- d })
	hold, _ := s.acquire(context.Background(), "a")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := s.acquire(ctx, "a"); done <- err }()
	<-queued
	if _, err := s.acquire(context.Background(), "a"); err != errNoSeat {
		t.Errorf("past the queue length: %v", err)
	}
	cancel()
	if err := <-done; err != errNoSeat {
		t.Errorf("cancelled waiter: %v", err)
	}
	hold()
	if s.free != 1 || s.ring.Len() != 0 {
		t.Errorf("free %d ring %d", s.free, s.ring.Len())
	}
	plain := newSeats(1, 0, nil)
	hold, _ = plain.acquire(context.Background(), "a")
	if _, err := plain.acquire(context.Background(), "b"); err != errNoSeat {
		t.Errorf("no queues: %v", err)
	}
	hold()
	if newSeats(0, 5, nil) != nil {
		t.Error("a zero bound is no bound")
	}
}

// TestPenaltyBudget: a client may be refused Burst times without waiting; past that each
// request waits for the debt (at most MaxDelay) until the budget refills; other clients
// are untouched; waiting requests are bounded.
func TestPenaltyBudget(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	p := newPenaltyBox(Penalties{Burst: 3, Rate: 2, MaxDelay: time.Second, MaxWaiting: 1}, clk)
	for i := 0; i < 3; i++ {
		if d, ok, done := p.delay("c"); d != 0 || !ok {
			t.Fatalf("refusal %d: delay %s %v", i, d, ok)
		} else {
			done()
		}
		p.refused("c")
	}
	if d, _, done := p.delay("c"); d != 0 {
		t.Fatalf("budget spent to zero: delay %s", d)
	} else {
		done()
	}
	p.refused("c")
	d, ok, done := p.delay("c")
	if d != 500*time.Millisecond || !ok {
		t.Errorf("one refusal in debt at 2/s: delay %s %v", d, ok)
	}
	if _, ok, _ := p.delay("c"); ok {
		t.Error("a second waiter past MaxWaiting 1 was allowed")
	}
	done()
	if d, _, done := p.delay("other"); d != 0 {
		t.Errorf("another client waits %s", d)
	} else {
		done()
	}
	for i := 0; i < 100; i++ {
		p.refused("c")
	}
	if d, _, done := p.delay("c"); d != time.Second {
		t.Errorf("deep debt: delay %s, want MaxDelay", d)
	} else {
		done()
	}
	clk.SetTime(clk.Now().Add(time.Second))
	if d, _, done := p.delay("c"); d != 0 {
		t.Errorf("after the debt's time: delay %s", d)
	} else {
		done()
	}
	clk.SetTime(clk.Now().Add(time.Hour))
	if d, _, done := p.delay("c"); d != 0 || len(p.clients) != 0 {
		t.Errorf("refilled: delay %s, %d clients remembered", d, len(p.clients))
	} else {
		done()
	}
	if newPenaltyBox(Penalties{Burst: 1}, clock.RealClock{}) != nil {
		t.Error("a zero rate is no penalty")
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
