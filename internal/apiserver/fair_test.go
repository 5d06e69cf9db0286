package apiserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
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

// TestLongSeatRest: a seat given back while no other request is about goes back at once;
// while one is in flight (or was within LongReadRestWindow) it rests first, so that the
// next page waits; a page whose writing blocks gives its seat back without waiting for
// done, and done then gives back nothing more.
func TestLongSeatRest(t *testing.T) {
	ctx := context.Background()
	t.Run("alone", func(t *testing.T) {
		p := newPager(1, nil)
		s, err := p.take(ctx, p.ticket())
		if err != nil {
			t.Fatal(err)
		}
		s.done()
		if p.free != 1 {
			t.Errorf("free %d right after done with nobody else about, want 1", p.free)
		}
	})
	t.Run("others active", func(t *testing.T) {
		p := newPager(1, nil)
		var rest time.Duration
		var restEnds func()
		p.after = func(d time.Duration, f func()) { rest, restEnds = d, f }
		p.otherStarts()
		defer p.otherEnds()
		s, err := p.take(ctx, p.ticket())
		if err != nil {
			t.Fatal(err)
		}
		s.at = s.at.Add(-10 * time.Millisecond) // held for at least 10ms
		s.done()
		if p.free != 0 || restEnds == nil {
			t.Fatalf("free %d right after done with another request in flight, want 0 (resting)", p.free)
		}
		if want := min(LongReadRestFactor*10*time.Millisecond, MaxLongReadRest); rest < want || rest > MaxLongReadRest {
			t.Errorf("rest %s after a page held 10ms, want %s (at most %s)", rest, want, MaxLongReadRest)
		}
		// The rest ends: the next page gets the seat.
		restEnds()
		if _, err := p.take(ctx, p.ticket()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("recently active", func(t *testing.T) {
		p := newPager(1, nil)
		p.otherStarts()
		p.otherEnds()
		if !p.othersActive() {
			t.Fatal("a request that just ended does not count as recent")
		}
		p.lastOther.Store(time.Now().Add(-2 * LongReadRestWindow).UnixNano())
		if p.othersActive() {
			t.Error("a request that ended before the window still counts")
		}
	})
	t.Run("blocked write", func(t *testing.T) {
		p := newPager(1, nil)
		p.otherStarts()
		defer p.otherEnds()
		s, err := p.take(ctx, p.ticket())
		if err != nil {
			t.Fatal(err)
		}
		s.writing()
		// The writing never ends here (done is not called): the seat comes back anyway.
		next, err := p.take(ctx, p.ticket())
		if err != nil {
			t.Fatal(err)
		}
		s.done()
		next.done()
		// One seat in all: after the rest, exactly one is free.
		if _, err := p.take(ctx, p.ticket()); err != nil {
			t.Fatal(err)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.free != 0 || len(p.waiters) != 0 {
			t.Errorf("free %d, waiters %d with the only seat taken", p.free, len(p.waiters))
		}
	})
}

// TestOtherRequestsMarked: requests other than un-paged lists make long reads rest; an
// un-paged list does not.
func TestOtherRequestsMarked(t *testing.T) {
	s, store, _ := listServer(t)
	mkConfigMaps(t, store, "a", 3)
	get := func(path string) {
		t.Helper()
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
		}
	}
	for _, path := range []string{"/api/v1/namespaces/a/configmaps", "/api/v1/configmaps?limit=0"} {
		get(path)
		if s.pager.othersActive() {
			t.Errorf("after the un-paged list %s, long reads rest", path)
		}
	}
	get("/api/v1/namespaces/a/configmaps?limit=2")
	if !s.pager.othersActive() {
		t.Error("after a paged list, long reads do not rest")
	}
}

// TestRequestTicket: a request keeps the ticket it first took for all its seats (its
// selector's parse, then its pages), ahead of requests that took theirs after it.
func TestRequestTicket(t *testing.T) {
	s := &Server{pager: newPager(1, nil)}
	first := withQuery(httptest.NewRequest(http.MethodGet, "/api/v1/pods?labelSelector=a", nil))
	t1 := s.requestTicket(first.Context())
	later := withQuery(httptest.NewRequest(http.MethodGet, "/api/v1/pods", nil))
	t2 := s.requestTicket(later.Context())
	if again := s.requestTicket(first.Context()); again != t1 {
		t.Errorf("the first request's second seat has ticket %d, want its first %d", again, t1)
	}
	if t2 <= t1 {
		t.Errorf("the later request's ticket %d is not after the first's %d", t2, t1)
	}
	// Outside a request, every call is a new ticket.
	if a, b := s.requestTicket(context.Background()), s.requestTicket(context.Background()); a == b {
		t.Errorf("two tickets outside a request are both %d", a)
	}
}
