package apiserver

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/auth"
)

// A client whose requests keep being refused (credentials that do not verify, bodies
// that do not decode or validate) is slowed down, so that a loop of
// cheap refusals cannot take the cores everybody else's requests need: each client has a
// budget of refusals that refills at a steady rate, and once it is spent, each of the
// client's requests waits, before any work is done for it, until the budget is back to
// zero. A client that is refused now and then never waits. Clients are users; a request
// whose credentials do not verify belongs to the address it comes from (its own request,
// not the address's authenticated users, waits). The server's own identities
// (system:masters) are never slowed down, as upstream's API Priority and Fairness
// exempts them.

// Penalties size the refusal budget of each client.
type Penalties struct {
	// Burst is how many refusals a client may have before it is slowed down; Rate how
	// many a second the budget regains.
	Burst, Rate float64
	// MaxDelay bounds one request's wait (the debt a client can build up is MaxDelay's
	// worth of refusals).
	MaxDelay time.Duration
	// MaxWaiting bounds a client's requests waiting at once; past it, the client's
	// requests are refused with the in-flight 429 without waiting.
	MaxWaiting int
	// Clock is the clock the budgets refill by (nil: the server's).
	Clock clock.PassiveClock
}

// DefaultPenalties: 100 refusals at once, 20 a second after that, a second's wait at most.
var DefaultPenalties = Penalties{Burst: 100, Rate: 20, MaxDelay: time.Second, MaxWaiting: 64}

// maxPenaltyClients bounds the clients remembered; past it, clients whose budget is
// whole are forgotten, and if none is, new clients share one budget.
const maxPenaltyClients = 1 << 16

// penaltyBox holds the budgets of the clients that were refused recently.
type penaltyBox struct {
	cfg   Penalties
	clock clock.PassiveClock

	mu      sync.Mutex
	clients map[string]*budget
	// overflow is the budget shared by new clients while clients is full.
	overflow budget
}

// budget is one client's refusals: tokens at last, and the requests waiting on it.
type budget struct {
	tokens  float64
	last    time.Time
	waiting int
}

func newPenaltyBox(cfg Penalties, clk clock.PassiveClock) *penaltyBox {
	if cfg.Rate <= 0 || cfg.Burst <= 0 {
		return nil
	}
	if cfg.Clock != nil {
		clk = cfg.Clock
	}
	return &penaltyBox{cfg: cfg, clock: clk, clients: map[string]*budget{}}
}

// refillLocked brings b's tokens up to now.
func (p *penaltyBox) refillLocked(b *budget, now time.Time) {
	if b.last.IsZero() {
		b.tokens, b.last = p.cfg.Burst, now
		return
	}
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(p.cfg.Burst, b.tokens+d.Seconds()*p.cfg.Rate)
		b.last = now
	}
}

// budgetLocked returns client's budget, making room in the map when it is full.
func (p *penaltyBox) budgetLocked(client string, now time.Time, create bool) *budget {
	if b := p.clients[client]; b != nil {
		return b
	}
	if !create {
		return nil
	}
	if len(p.clients) >= maxPenaltyClients {
		for k, b := range p.clients {
			p.refillLocked(b, now)
			if b.tokens >= p.cfg.Burst && b.waiting == 0 {
				delete(p.clients, k)
			}
		}
		if len(p.clients) >= maxPenaltyClients {
			return &p.overflow
		}
	}
	b := &budget{}
	p.clients[client] = b
	return b
}

// refused spends one of client's refusals.
func (p *penaltyBox) refused(client string) {
	if p == nil {
		return
	}
	now := p.clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.budgetLocked(client, now, true)
	p.refillLocked(b, now)
	b.tokens = max(b.tokens-1, -p.cfg.MaxDelay.Seconds()*p.cfg.Rate)
	if b.tokens >= p.cfg.Burst && b.waiting == 0 {
		delete(p.clients, client)
	}
}

// delay is how long a request of client must wait now, and whether it may wait at all
// (false: too many of the client's requests already wait). A request that must wait
// counts as waiting until done is called.
func (p *penaltyBox) delay(client string) (d time.Duration, ok bool, done func()) {
	if p == nil {
		return 0, true, func() {}
	}
	now := p.clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.budgetLocked(client, now, false)
	if b == nil {
		return 0, true, func() {}
	}
	p.refillLocked(b, now)
	if b.tokens >= 0 {
		if b.tokens >= p.cfg.Burst && b.waiting == 0 {
			delete(p.clients, client)
		}
		return 0, true, func() {}
	}
	if b.waiting >= p.cfg.MaxWaiting {
		return 0, false, nil
	}
	b.waiting++
	d = time.Duration(-b.tokens / p.cfg.Rate * float64(time.Second))
	return min(d, p.cfg.MaxDelay), true, func() {
		p.mu.Lock()
		b.waiting--
		p.mu.Unlock()
	}
}

// wait holds a request of client for its penalty, within ctx; it reports false when the
// request must be refused instead (too many of the client's requests wait already, or
// ctx ended).
func (p *penaltyBox) wait(ctx context.Context, client string, observe func()) bool {
	d, ok, done := p.delay(client)
	if !ok {
		return false
	}
	defer done()
	if d <= 0 {
		return true
	}
	if observe != nil {
		observe()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// refusal reports whether an answer's status spends a refusal of the client's budget: the
// request was malformed (a denial by authorization or quota does not: those are cheap, and
// a workload held at its quota retries by design).
func refusal(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// addressClient is the penalty client of a request whose credentials did not verify.
func addressClient(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "address:" + host
}

// exempt reports whether a user is never slowed down: the server's own identities and
// the cluster's administrators (system:masters), as upstream's exempt priority level.
func exempt(u auth.User) bool { return u.InGroup(auth.SystemMasters) }

// userClient is the penalty client of an authenticated user.
func userClient(name string) string { return "user:" + name }

// DefaultMaxWatchesPerUser bounds the watches one user holds open at once: far above what
// a controller keeps (one or a few per kind it follows), far below what would take the
// server's memory.
const DefaultMaxWatchesPerUser = 2000

// watchCounts counts each user's open watches against a bound; nil is no bound.
type watchCounts struct {
	max   int
	mu    sync.Mutex
	count map[string]int
}

func newWatchCounts(max int) *watchCounts {
	if max < 0 {
		return nil
	}
	if max == 0 {
		max = DefaultMaxWatchesPerUser
	}
	return &watchCounts{max: max, count: map[string]int{}}
}

// open counts a watch of user; ok is false past the bound. done uncounts it.
func (c *watchCounts) open(user string) (done func(), ok bool) {
	if c == nil {
		return func() {}, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.count[user] >= c.max {
		return nil, false
	}
	c.count[user]++
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.count[user]--; c.count[user] == 0 {
			delete(c.count, user)
		}
	}, true
}
