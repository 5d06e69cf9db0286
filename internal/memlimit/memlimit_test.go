package memlimit

import (
	"context"
	"runtime"
	"runtime/debug"
	"slices"
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
