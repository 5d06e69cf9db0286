package memlimit

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestPolicyLimit(t *testing.T) {
	p := Policy{Floor: 320 << 20, Factor: 2}
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, 320 << 20},
		{150 << 20, 320 << 20},
		{160 << 20, 320 << 20},
		{200 << 20, 400 << 20},
		{1 << 30, 2 << 30},
	} {
		if got := p.Limit(c.live); got != c.want {
			t.Errorf("Limit(%d MiB) = %d MiB, want %d MiB", c.live>>20, got>>20, c.want>>20)
		}
	}
}

// TestPolicyPercent: with a Share, GOGC aims the heap's goal at that share of the allowed
// memory, within [minPercent, Percent], and the soft limit is the allowed memory over the
// share; without one, GOGC is Percent and the soft limit the allowed memory.
func TestPolicyPercent(t *testing.T) {
	p := Policy{Floor: 500 << 20, Factor: 2, Percent: 400, Share: 0.8}
	for _, c := range []struct {
		live    uint64
		percent int
	}{
		{0, 400},
		{50 << 20, 400},  // goal 400 MiB: 700%, at most 400
		{100 << 20, 300}, // goal 400 MiB
		{200 << 20, 100}, // goal 400 MiB
		{300 << 20, 60},  // allowed 600 MiB: goal 480 MiB
		{1 << 30, 60},    // allowed 2 GiB: goal 1.6 GiB
	} {
		if got := p.GCPercent(c.live); got != c.percent {
			t.Errorf("GCPercent(%d MiB) = %d, want %d", c.live>>20, got, c.percent)
		}
	}
	if got := p.SoftLimit(100 << 20); got != 625<<20 {
		t.Errorf("SoftLimit(100 MiB) = %d MiB, want 625 MiB (500 MiB over 0.8)", got>>20)
	}
	p.Factor = 1.1 // allowed memory under 1/Share of the live heap: the least percent
	if got := p.GCPercent(1 << 30); got != minPercent {
		t.Errorf("GCPercent with a goal under the live heap = %d, want %d", got, minPercent)
	}
	p.Share = 0
	if got, limit := p.GCPercent(100<<20), p.SoftLimit(100<<20); got != 400 || limit != 500<<20 {
		t.Errorf("without a share: GCPercent %d, SoftLimit %d MiB; want 400 and 500 MiB", got, limit>>20)
	}
}

// TestFollowPacesByGOGC: with a Share, Follow sets GOGC for the live heap after each
// collection and the soft limit above the allowed memory.
func TestFollowPacesByGOGC(t *testing.T) {
	keepGCSettings(t)
	held := make([]byte, 64<<20)
	for i := range held {
		held[i] = 1
	}
	defer runtime.KeepAlive(held)
	runtime.GC()
	// A floor of 1 byte: allowed memory twice the live heap, the goal 1.6 times it: GOGC 60.
	p := Policy{Floor: 1, Factor: 2, Percent: 400, Share: 0.8}
	followUntilEnd(t, p)
	if got := gogc(); got < 55 || got > 65 {
		t.Fatalf("GOGC after Follow = %d, want about 60", got)
	}
	// Within a tenth: a collection may have moved the live heap since.
	if got, want := debug.SetMemoryLimit(-1), p.SoftLimit(liveHeap()); got < want*9/10 || got > want*11/10 {
		t.Fatalf("soft limit = %d MiB, want about %d MiB (2.5 times the live heap)", got>>20, want>>20)
	}
}

// TestFollowSetsLimitAfterCollections: the limit is set at once, and again after a
// collection once the live heap has grown past the floor's share; after ctx ends it is no
// longer changed.
func TestFollowSetsLimitAfterCollections(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	ctx, cancel := context.WithCancel(context.Background())
	runtime.GC() // the live heap is measured by a collection
	// A floor of 1 byte: the limit is Factor times the live heap.
	stopped := Follow(ctx, Policy{Floor: 1, Factor: 4})
	first := debug.SetMemoryLimit(-1)
	if first <= 1 || first == old {
		t.Fatalf("limit after Follow = %d, want 4 × the live heap", first)
	}
	// Grow the live heap by 64 MiB and collect: the finalizer sets the limit again.
	held := make([]byte, 64<<20)
	for i := range held {
		held[i] = 1
	}
	grown := func() bool { return debug.SetMemoryLimit(-1) >= first+4*(64<<20)*9/10 }
	for i := 0; i < 50 && !grown(); i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if !grown() {
		t.Fatalf("limit after collections with 64 MiB more live = %d MiB, want at least %d MiB", debug.SetMemoryLimit(-1)>>20, (first+4*(64<<20)*9/10)>>20)
	}
	runtime.KeepAlive(held)
	cancel()
	for done := false; !done; {
		runtime.GC()
		select {
		case <-stopped:
			done = true
		default:
			runtime.Gosched()
		}
	}
	debug.SetMemoryLimit(123 << 20)
	held = nil
	for i := 0; i < 5; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if got := debug.SetMemoryLimit(-1); got != 123<<20 {
		t.Fatalf("limit after ctx ended = %d, want it left at 123 MiB", got)
	}
}

// TestQuietTrimsOncePerSpell: allocation under the quiet rate for QuietFor trims once; a
// burst ends the spell; the next quiet spell trims again.
func TestQuietTrimsOncePerSpell(t *testing.T) {
	q := quiet{policy: Policy{QuietRate: 1000, QuietFor: 3 * time.Second}}
	var alloc uint64
	step := func(bytes uint64) bool { alloc += bytes; return q.step(alloc, time.Second) }
	var got []bool
	for _, b := range []uint64{5000, 500, 500, 500, 500, 500, 2000, 0, 0, 0, 0} {
		got = append(got, step(b))
	}
	want := []bool{false, false, false, true, false, false, false, false, false, true, false}
	if !slices.Equal(got, want) {
		t.Fatalf("trims = %v, want %v", got, want)
	}
}

// TestTrimFreesWhenQuiet: Trim calls free once the process has been quiet, and stops with
// its context.
func TestTrimFreesWhenQuiet(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	freed := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// An absurd quiet rate: every interval is quiet.
		Trim(ctx, Policy{QuietRate: 1 << 40, QuietFor: time.Millisecond}, time.Millisecond, func() {
			select {
			case freed <- struct{}{}:
			default:
			}
		})
	}()
	<-freed
	cancel()
	<-done
}

// TestWhenQuietHooks: registered hooks run with each quiet spell's trim until removed.
func TestWhenQuietHooks(t *testing.T) {
	var a, b int
	removeA := WhenQuiet(func() { a++ })
	removeB := WhenQuiet(func() { b++ })
	runQuietHooks()
	removeA()
	runQuietHooks()
	removeB()
	runQuietHooks()
	if a != 1 || b != 2 {
		t.Errorf("hooks ran %d and %d times, want 1 and 2", a, b)
	}
}

// TestFollowKeepsFollowingBesideTinyObjects: the sentinel whose finalizer re-applies the
// policy after each collection must not share a memory block with the process's other
// small objects, or one of them living on would end the following for good (the runtime
// packs small pointer-free allocations together and frees the block only when all of them
// are unreachable). Each round keeps a small object alive, collects, and checks that the
// limit was applied again.
func TestFollowKeepsFollowingBesideTinyObjects(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := Follow(ctx, Policy{Floor: 1, Factor: 4})
	defer func() {
		cancel()
		for i := 0; i < 20; i++ {
			runtime.GC()
			select {
			case <-stopped:
				return
			default:
				runtime.Gosched()
			}
		}
		t.Error("Follow did not stop after its context ended and 20 collections")
	}()
	const unset = 1 << 50
	var kept []*int64
	for round := 0; round < 100; round++ {
		debug.SetMemoryLimit(unset)
		applied := false
		for i := 0; i < 20 && !applied; i++ {
			// Small long-lived objects, allocated as the finalizer goroutine allocates the
			// next sentinel.
			for j := 0; j < 8; j++ {
				kept = append(kept, new(int64))
			}
			runtime.GC()
			runtime.Gosched()
			applied = debug.SetMemoryLimit(-1) != unset
		}
		if !applied {
			t.Fatalf("round %d: the limit was not applied again after 20 collections", round)
		}
	}
	runtime.KeepAlive(kept)
}

// gogc is the GOGC percent in effect.
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// TestBulkLowersGOGCWhileListsRead: Follow sets the policy's percent; bulk reads under half
// the headroom change nothing; past it GOGC is lowered to let the heap grow by the headroom
// at most, and set back once they pause; bulk reads among more garbage of other work lower
// nothing, and a lean spell ends once other work allocates more; without Follow, Bulk does
// nothing.
func TestBulkLowersGOGCWhileListsRead(t *testing.T) {
	keepGCSettings(t)
	Bulk(64 << 20)
	if got := gogc(); got != 100 {
		t.Fatalf("GOGC after Bulk without Follow = %d, want 100", got)
	}
	// A live heap of 8 MiB: 1 MiB past it is GOGC 12 or so.
	held := make([]byte, 8<<20)
	for i := range held {
		held[i] = 1
	}
	defer runtime.KeepAlive(held)
	runtime.GC()
	followUntilEnd(t, Policy{Floor: 1 << 40, Factor: 1, Percent: 300, BulkHeadroom: 1 << 20})
	if got := gogc(); got != 300 {
		t.Fatalf("GOGC after Follow = %d, want the policy's 300", got)
	}
	Bulk(100 << 10)
	if got := gogc(); got != 300 {
		t.Fatalf("GOGC after 100 KiB of bulk reads = %d, want 300 (under half the headroom)", got)
	}
	Bulk(500 << 10)
	lean := gogc()
	if lean > 20 || lean < 10 {
		t.Fatalf("GOGC after 600 KiB of bulk reads = %d, want lowered to 1 MiB past the live heap (at least 10)", lean)
	}
	// Reads that go on keep it lowered; once they pause, it is set back.
	Bulk(1 << 20)
	if got := gogc(); got != lean {
		t.Fatalf("GOGC while bulk reads go on = %d, want %d", got, lean)
	}
	waitGOGC(t, func(p int) bool { return p == 300 }, pause, "300 again after the last bulk read")
	// Bulk reads that make less than half of what the heap allocates meanwhile leave it.
	Bulk(100 << 10)
	garbage(4 << 20)
	Bulk(500 << 10)
	if got := gogc(); got != 300 {
		t.Fatalf("GOGC after 600 KiB of bulk reads among 4 MiB of other garbage = %d, want 300", got)
	}
	// A lean spell ends once other work allocates more than the reads report, though they
	// go on.
	waitGOGC(t, func(p int) bool { return p < 300 }, func() { Bulk(600 << 10) }, "lowered by bulk reads alone")
	waitGOGC(t, func(p int) bool { return p == 300 }, func() { Bulk(1 << 10); garbage(64 << 10) },
		"300 again while other work allocates 64 times what bulk reads report")
}

// followUntilEnd applies p (Follow) until t ends, and then waits for a collection to see it
// end, so that no later test finds it still following.
func followUntilEnd(t *testing.T, p Policy) {
	ctx, cancel := context.WithCancel(context.Background())
	stopped := Follow(ctx, p)
	t.Cleanup(func() {
		cancel()
		for {
			runtime.GC()
			select {
			case <-stopped:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
}

// keepGCSettings sets GOGC to 100 and restores it, and the memory limit, when t ends.
func keepGCSettings(t *testing.T) {
	old := debug.SetGCPercent(100)
	oldLimit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(old)
		debug.SetMemoryLimit(oldLimit)
	})
}

// waitGOGC calls between until GOGC satisfies ok, failing t after 30 s.
func waitGOGC(t *testing.T, ok func(percent int) bool, between func(), want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok(gogc()) {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC %d after 30 s, want %s", gogc(), want)
		}
		between()
	}
}

// pause is a waitGOGC step that lets time pass.
func pause() { time.Sleep(10 * time.Millisecond) }

// sink keeps garbage from being optimized away.
var sink []byte

// garbage allocates n bytes and drops them.
func garbage(n int) {
	for i := 0; i < n; i += 4 << 10 {
		sink = make([]byte, 4<<10)
	}
	sink = nil
}

// TestBulkConcurrentWithCollections: bulk reads from many goroutines while collections run
// (the finalizer re-applying the policy) share no state unguarded (run with -race), and
// GOGC is the policy's again once they stop.
func TestBulkConcurrentWithCollections(t *testing.T) {
	keepGCSettings(t)
	followUntilEnd(t, Policy{Floor: 1 << 40, Factor: 1, Percent: 250, BulkHeadroom: 1 << 20})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				Bulk(64 << 10)
			}
		}()
	}
	for range 20 {
		runtime.GC()
	}
	wg.Wait()
	waitGOGC(t, func(p int) bool { return p == 250 }, pause, "the policy's 250 after the last bulk read")
}
