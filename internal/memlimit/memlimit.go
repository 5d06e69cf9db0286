package memlimit

import (
	"context"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// Default is quotad's policy when GOMEMLIMIT is not set. The memory it allows is twice the
// live heap and never under 512 MiB, so that a live heap of 1 GB may grow to 2 GB between
// collections (not collected without pause, as under a fixed limit below it). GOGC paces
// the collections: it is set after each one so that the heap's goal is 80% of that memory
// (the rest is for the runtime's own memory: stacks, metadata, the heap's fragmentation),
// and never over 400 (quotad allocates per request, and the collector's work is
// proportional to what is allocated over GOGC: a small live heap may use the floor's room
// under load instead of being collected twice as often). The runtime's soft limit is a
// backstop above it (the allowed memory over 0.8): paced by the soft limit alone, a heap's
// goal is the limit less all the runtime's other memory (about 120 MB under
// clusterloader2's load), and its collections start with little room left to mark in
// (docs/benchmarks.md). While lists read in bulk (Bulk), the heap grows
// at most 32 MiB past the live heap, so that a list of 100,000 pods does not grow the
// process by GOGC's share of its live heap; and once allocation has been quiet for 10 s,
// the free heap is returned to the OS (Trim), so a server holding 100,000 pods idles under
// 400 MB.
var Default = Policy{Floor: 512 << 20, Factor: 2, Percent: 400, Share: 0.8, BulkHeadroom: 32 << 20,
	QuietRate: 1 << 20, QuietFor: 10 * time.Second}

// Policy says what memory a live heap may use, how collections are paced, and when free
// memory is returned.
type Policy struct {
	// Floor is the least memory allowed, whatever the live heap.
	Floor uint64
	// Factor times the live heap is the memory allowed when that is above Floor.
	Factor float64
	// Percent is the most GOGC Follow sets (0: GOGC is left alone), and BulkHeadroom the
	// most the heap may grow past the live heap while bulk reads run (0, or Percent 0:
	// bulk reads change nothing; see Bulk).
	Percent      int
	BulkHeadroom int64
	// Share, when set, is the share of the allowed memory GOGC aims the heap's goal at;
	// the runtime's soft limit is then the allowed memory over Share. 0: GOGC is Percent,
	// and the soft limit the allowed memory.
	Share float64
	// QuietRate (bytes allocated per second) and QuietFor: allocating less than QuietRate
	// for QuietFor returns the free heap to the OS, once per quiet spell. QuietFor 0 never
	// does.
	QuietRate uint64
	QuietFor  time.Duration
}

// minPercent is the least GOGC a policy sets but while lists read in bulk.
const minPercent = 25

// Limit is the memory allowed for a live heap of live bytes.
func (p Policy) Limit(live uint64) int64 {
	l := uint64(float64(live) * p.Factor)
	return int64(max(l, p.Floor))
}

// SoftLimit is the runtime's soft memory limit for a live heap of live bytes.
func (p Policy) SoftLimit(live uint64) int64 {
	if p.Share <= 0 || p.Percent <= 0 {
		return p.Limit(live)
	}
	return int64(float64(p.Limit(live)) / p.Share)
}

// GCPercent is the GOGC percent for a live heap of live bytes: the one whose goal is Share
// of the allowed memory, within [minPercent, Percent]; Percent without a Share.
func (p Policy) GCPercent(live uint64) int {
	if p.Share <= 0 || live == 0 {
		return p.Percent
	}
	goal := float64(p.Limit(live)) * p.Share
	pct := int(math.Round((goal - float64(live)) * 100 / float64(live)))
	return min(max(pct, minPercent), p.Percent)
}

// Follow sets the runtime's soft memory limit and GOGC by p now and after every collection,
// and trims the heap in quiet spells (Trim), until ctx ends (both then stay as last set);
// the channel it returns is closed when the first collection after that has seen it end.
// It learns of collections from a finalizer armed anew each cycle, so it costs nothing
// between them.
func Follow(ctx context.Context, p Policy) <-chan struct{} {
	if p.QuietFor > 0 {
		go Trim(ctx, p, time.Second, func() {
			debug.FreeOSMemory()
			runQuietHooks()
		})
	}
	stopped := make(chan struct{})
	b := &bulk{headroom: p.BulkHeadroom}
	apply := func() {
		live := liveHeap()
		debug.SetMemoryLimit(p.SoftLimit(live))
		if p.Percent > 0 {
			b.setPercent(p.GCPercent(live))
		}
	}
	apply()
	if p.Percent > 0 && p.BulkHeadroom > 0 {
		following.Store(b)
	}
	var arm func()
	arm = func() {
		s := new(sentinel)
		runtime.SetFinalizer(s, func(*sentinel) {
			if ctx.Err() != nil {
				following.CompareAndSwap(b, nil)
				close(stopped)
				return
			}
			apply()
			arm()
		})
	}
	arm()
	return stopped
}

// bulk follows bulk reads for the policy Follow applies (Bulk).
type bulk struct {
	headroom int64
	// percent is the GOGC the policy sets for the last collection's live heap (under mu).
	percent  int
	mu       sync.Mutex
	recent   int64     // bytes reported in the current window
	allocsAt uint64    // the heap's allocations when the window began
	last     time.Time // the last report
	lean     bool      // GOGC lowered
}

// following is the bulk state of the policy Follow applies (nil: none, or one without
// BulkHeadroom).
var following atomic.Pointer[bulk]

// bulkQuiet is how long after their last report bulk reads are over, and bulkTick how
// often a lean spell checks that they still make most of the garbage.
const (
	bulkQuiet = 500 * time.Millisecond
	bulkTick  = 100 * time.Millisecond
)

// heapAllocs is the bytes the heap has allocated since the process started.
func heapAllocs() uint64 { return readUint64("/gc/heap/allocs:bytes") }

// liveHeap is the bytes the last collection found live.
func liveHeap() uint64 { return readUint64("/gc/heap/live:bytes") }

// readUint64 reads one of the runtime's metrics (0 if it is not a count); each call has its
// own sample, so any goroutine may call it.
func readUint64(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// Bulk reports that a bulk read (a page of a list) made n bytes of garbage: values read
// and copied, then dropped. Under GOGC the heap grows by its share of the live heap before
// it is collected, and keeps that memory until long after, whatever made the garbage: a
// list of every object of a large cluster would grow the process by hundreds of megabytes
// that the rest of the server never needed. Once bulk reads have reported BulkHeadroom/2
// bytes without a pause of bulkQuiet, and made at least half of what the heap allocated
// meanwhile, GOGC is lowered so that the heap grows at most BulkHeadroom past the live heap
// between collections (never under 10). The policy's Percent is set again as soon as the
// reads pause for bulkQuiet or other work allocates more than they report in a bulkTick: a
// client's lists then never make the server collect more often for the garbage of other
// work (a create burst's). It does nothing unless Follow applies a policy with BulkHeadroom
// and Percent.
func Bulk(n int64) {
	b := following.Load()
	if b == nil || n <= 0 {
		return
	}
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.recent == 0 || now.Sub(b.last) > bulkQuiet {
		b.recent, b.allocsAt = 0, heapAllocs()
	}
	b.last = now
	b.recent += n
	if b.lean || b.recent < b.headroom/2 {
		return
	}
	if allocs := heapAllocs(); allocs-b.allocsAt > 2*uint64(b.recent) {
		// Other work allocated more than the bulk reads made: a window anew.
		b.recent, b.allocsAt = 0, allocs
		return
	}
	b.lean = true
	debug.SetGCPercent(b.leanPercent())
	go b.leanSpell()
}

// setPercent sets the policy's GOGC percent, now unless a lean spell lowered it (then when
// the spell ends).
func (b *bulk) setPercent(pct int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.percent = pct
	if !b.lean {
		debug.SetGCPercent(pct)
	}
}

// leanPercent is the GOGC percent that lets the heap grow headroom past the live heap.
func (b *bulk) leanPercent() int {
	live := max(liveHeap(), 1)
	return min(max(int(uint64(b.headroom)*100/live), 10), b.percent)
}

// leanSpell sets the policy's percent again once bulk reads paused for bulkQuiet, or other
// work allocated more than they reported in a bulkTick, and more than headroom/32 (the
// server's background allocation in a tick between two pages does not end a spell).
func (b *bulk) leanSpell() {
	t := time.NewTicker(bulkTick)
	defer t.Stop()
	b.mu.Lock()
	recent, allocs := b.recent, heapAllocs()
	b.mu.Unlock()
	for range t.C {
		b.mu.Lock()
		now := heapAllocs()
		reported := b.recent - recent
		others := int64(now-allocs) - reported
		recent, allocs = b.recent, now
		if time.Since(b.last) > bulkQuiet || others > max(reported, b.headroom/32) {
			b.lean, b.recent = false, 0
			debug.SetGCPercent(b.percent)
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
	}
}

// quietHooks are run after each quiet spell's trim (WhenQuiet).
var quietHooks struct {
	mu    sync.Mutex
	next  int
	hooks map[int]func()
}

// WhenQuiet registers f to run, in Follow's trimming goroutine, after the free heap was
// returned in each quiet spell: memory the process holds outside the Go heap (such as the
// embedded etcd's mapped database file) is given back then too. The returned function
// unregisters it.
func WhenQuiet(f func()) (remove func()) {
	quietHooks.mu.Lock()
	defer quietHooks.mu.Unlock()
	if quietHooks.hooks == nil {
		quietHooks.hooks = map[int]func(){}
	}
	id := quietHooks.next
	quietHooks.next++
	quietHooks.hooks[id] = f
	return func() {
		quietHooks.mu.Lock()
		defer quietHooks.mu.Unlock()
		delete(quietHooks.hooks, id)
	}
}

func runQuietHooks() {
	quietHooks.mu.Lock()
	hooks := make([]func(), 0, len(quietHooks.hooks))
	for _, f := range quietHooks.hooks {
		hooks = append(hooks, f)
	}
	quietHooks.mu.Unlock()
	for _, f := range hooks {
		f()
	}
}

// sentinel is an object made only to be collected: its finalizer runs after the cycle that
// found it unreachable. It holds a pointer so that it is a heap object of its own: the
// runtime packs small pointer-free allocations into shared 16-byte blocks, freed (and
// their finalizers run) only once every object in the block is unreachable, so a sentinel
// packed beside a long-lived object would never be finalized and Follow would stop
// following for good.
type sentinel struct{ _ *sentinel }

// Trim samples the bytes allocated every interval until ctx ends and calls free (the
// runtime's FreeOSMemory: a collection, then every free page returned) once allocation has
// stayed under p.QuietRate for p.QuietFor, once per quiet spell. Between collections the
// heap grows to (1+GOGC/100) times the live heap and its pages stay with the process; a
// server that went quiet after a burst would otherwise keep them until the next burst.
func Trim(ctx context.Context, p Policy, interval time.Duration, free func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	q := quiet{policy: p, last: heapAllocs()}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if q.step(heapAllocs(), interval) {
				free()
			}
		}
	}
}

// quiet follows allocation for Trim: step is told the allocation counter after elapsed and
// reports whether to trim now.
type quiet struct {
	policy  Policy
	last    uint64
	quiet   time.Duration
	trimmed bool
}

func (q *quiet) step(allocated uint64, elapsed time.Duration) bool {
	delta := allocated - q.last
	q.last = allocated
	if float64(delta) > float64(q.policy.QuietRate)*elapsed.Seconds() {
		q.quiet, q.trimmed = 0, false
		return false
	}
	q.quiet += elapsed
	if q.quiet < q.policy.QuietFor || q.trimmed {
		return false
	}
	q.trimmed = true
	return true
}
