package controller

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// DefaultThrottleInterval is how often a Throttle lets a repeated failure be logged again.
const DefaultThrottleInterval = 5 * time.Minute

// Throttle rate-limits the log lines of repeated identical failures. For each key it
// remembers the last failure's message: the first failure (or one with a different
// message) is logged at once; identical repeats are counted and logged, with that count,
// at most once per interval; a success forgets the key. It is safe for concurrent use and
// holds one entry per failing key.
type Throttle struct {
	clock    clock.PassiveClock
	interval time.Duration

	mu   sync.Mutex
	keys map[string]*failure
}

type failure struct {
	msg string
	// repeats counts the identical failures not logged since logged.
	repeats int
	logged  time.Time
}

// NewThrottle returns a throttle logging each repeated failure at most once per interval.
func NewThrottle(clk clock.PassiveClock, interval time.Duration) *Throttle {
	return &Throttle{clock: clk, interval: interval, keys: map[string]*failure{}}
}

// Failed records a failure of key with message msg. It reports whether to log it now and,
// when so, how many identical failures of key were not logged before it.
func (t *Throttle) Failed(key, msg string) (log bool, repeats int) {
	now := t.clock.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.keys[key]
	if f == nil || f.msg != msg {
		t.keys[key] = &failure{msg: msg, logged: now}
		return true, 0
	}
	if now.Sub(f.logged) < t.interval {
		f.repeats++
		return false, 0
	}
	repeats = f.repeats
	f.repeats = 0
	f.logged = now
	return true, repeats
}

// Succeeded forgets key: its next failure is logged at once.
func (t *Throttle) Succeeded(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.keys, key)
}
