package nodelifecycle

import (
	"sort"
	"sync"
	"time"

	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/clock"
)

// evictionPeriod is how often the NoExecute tainting pass runs (upstream's
// NodeEvictionPeriod); evictionBurst the burst of a zone's limiter.
const (
	evictionPeriod = 100 * time.Millisecond
	evictionBurst  = 1
)

// timedValue is one node waiting to be tainted.
type timedValue struct {
	value     string
	uid       string
	addedAt   time.Time
	processAt time.Time
	// done: processed, out of the queue but still in the set (upstream's
	// RemoveFromQueue), so that adding it again does nothing until it is removed.
	done bool
}

// tainter is upstream's RateLimitedTimedQueue: a set of node names, each processed no
// earlier than its processAt and no faster than the limiter allows. A processed name
// stays in the set (not processed again) until removed.
type tainter struct {
	clock clock.Clock

	mu    sync.Mutex
	items map[string]*timedValue

	limMu   sync.Mutex
	limiter flowcontrol.RateLimiter
	rate    float32
}

func newTainter(clk clock.Clock, qps float32) *tainter {
	return &tainter{clock: clk, items: map[string]*timedValue{}, limiter: newLimiter(clk, qps), rate: qps}
}

// newLimiter is a token bucket of qps on clk, or one that never accepts for qps <= 0.
func newLimiter(clk clock.Clock, qps float32) flowcontrol.RateLimiter {
	if qps <= 0 {
		return flowcontrol.NewFakeNeverRateLimiter()
	}
	return flowcontrol.NewTokenBucketRateLimiterWithClock(qps, evictionBurst, clk)
}

// add queues value; false when it is queued already.
func (q *tainter) add(value, uid string) bool {
	now := q.clock.Now()
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.items[value] != nil {
		return false
	}
	q.items[value] = &timedValue{value: value, uid: uid, addedAt: now, processAt: now}
	return true
}

// remove forgets value; false when it was not queued.
func (q *tainter) remove(value string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.items[value] == nil {
		return false
	}
	delete(q.items, value)
	return true
}

// head is the value to process first (earliest processAt, then name).
func (q *tainter) head() (timedValue, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return timedValue{}, false
	}
	vals := make([]*timedValue, 0, len(q.items))
	for _, v := range q.items {
		if !v.done {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return timedValue{}, false
	}
	sort.Slice(vals, func(i, j int) bool {
		if !vals[i].processAt.Equal(vals[j].processAt) {
			return vals[i].processAt.Before(vals[j].processAt)
		}
		return vals[i].value < vals[j].value
	})
	return *vals[0], true
}

// try processes values while the limiter accepts and their time has come, as upstream's
// Try: fn returns true when done, or false and how long to wait before the next try.
func (q *tainter) try(fn func(timedValue) (bool, time.Duration)) {
	val, ok := q.head()
	q.limMu.Lock()
	defer q.limMu.Unlock()
	for ok {
		if !q.limiter.TryAccept() {
			break
		}
		now := q.clock.Now()
		if now.Before(val.processAt) {
			break
		}
		done, wait := fn(val)
		q.mu.Lock()
		if cur := q.items[val.value]; cur != nil {
			if done {
				cur.done = true
			} else {
				cur.processAt = now.Add(wait + 1)
			}
		}
		q.mu.Unlock()
		val, ok = q.head()
	}
}

// swapLimiter replaces the limiter with one of qps, keeping a token already spent.
func (q *tainter) swapLimiter(qps float32) {
	q.limMu.Lock()
	defer q.limMu.Unlock()
	if q.rate == qps {
		return
	}
	l := newLimiter(q.clock, qps)
	if qps > 0 && !q.limiter.TryAccept() {
		l.TryAccept()
	}
	q.limiter.Stop()
	q.limiter = l
	q.rate = qps
}

// qps is the limiter's rate.
func (q *tainter) qps() float32 {
	q.limMu.Lock()
	defer q.limMu.Unlock()
	return q.rate
}
