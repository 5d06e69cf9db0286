package fieldindex

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// keys is Select of one value without a label selector.
func keys(x *Index, prefix, value string) ([]string, int64, bool) {
	ks, _, rev, ok := x.Select(prefix, &value, nil)
	return ks, rev, ok
}

func TestIndexKeys(t *testing.T) {
	x := New()
	if _, _, ok := keys(x, "", "n1"); ok {
		t.Fatal("an index never synced gave keys")
	}
	x.Put("/pods/b/p1", "n1", nil, true)
	x.Put("/pods/a/p2", "n1", nil, true)
	x.Put("/pods/a/p3", "n2", nil, true)
	x.Put("/pods/a/p4", "", nil, true)
	x.Put("/pods/a/bad", "", nil, false)
	x.Synced(10)
	for _, c := range []struct {
		prefix, value string
		want          []string
	}{
		{"/pods/", "n1", []string{"/pods/a/bad", "/pods/a/p2", "/pods/b/p1"}},
		{"/pods/a/", "n1", []string{"/pods/a/bad", "/pods/a/p2"}},
		{"/pods/b/", "n2", nil},
		{"/pods/", "", []string{"/pods/a/bad", "/pods/a/p4"}},
		{"/pods/", "n9", []string{"/pods/a/bad"}},
	} {
		got, rev, ok := keys(x, c.prefix, c.value)
		if !ok || rev != 10 || !slices.Equal(got, c.want) {
			t.Errorf("Keys(%q, %q) = %q at %d (%v), want %q at 10", c.prefix, c.value, got, rev, ok, c.want)
		}
	}
	// A key moves between groups; an emptied group is forgotten; a deleted key is gone.
	x.Put("/pods/a/bad", "n2", nil, true)
	x.Put("/pods/a/p3", "n1", nil, true)
	x.Delete("/pods/b/p1")
	x.Delete("/pods/none")
	x.Synced(12)
	if got, _, _ := keys(x, "/pods/", "n1"); !slices.Equal(got, []string{"/pods/a/p2", "/pods/a/p3"}) {
		t.Errorf("after the moves: n1 = %q", got)
	}
	if got, _, _ := keys(x, "/pods/", "n2"); !slices.Equal(got, []string{"/pods/a/bad"}) {
		t.Errorf("after the moves: n2 = %q", got)
	}
	if len(x.byValue) != 3 || x.Len() != 4 {
		t.Errorf("groups %d, keys %d; want 3 groups (n1, n2, \"\") and 4 keys", len(x.byValue), x.Len())
	}
	x.Synced(11)
	if rev, _ := x.Revision(); rev != 12 {
		t.Errorf("revision went back to %d", rev)
	}
	x.Reset()
	if _, _, ok := keys(x, "", "n1"); ok || x.Len() != 0 {
		t.Error("a reset index still gives keys")
	}
}

// TestIndexAgainstModel: random puts, moves and deletes give, for every value and prefix,
// the keys a plain map of key to value gives.
func TestIndexAgainstModel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	x := New()
	model := map[string]string{} // key → value, "?" for unknown
	modelLabels := map[string]map[string]string{}
	for step := range 5000 {
		key := fmt.Sprintf("/p/ns%d/k%d", r.IntN(3), r.IntN(40))
		switch r.IntN(4) {
		case 0:
			x.Delete(key)
			delete(model, key)
			delete(modelLabels, key)
		case 1:
			x.Put(key, "", nil, false)
			model[key] = "?"
			delete(modelLabels, key)
		default:
			v := fmt.Sprintf("n%d", r.IntN(5))
			l := map[string]string{"tier": fmt.Sprintf("t%d", r.IntN(3))}
			if r.IntN(2) == 0 {
				l["extra"] = "x"
			}
			x.Put(key, v, l, true)
			model[key] = v
			modelLabels[key] = l
		}
		x.Synced(int64(step + 1))
		for _, prefix := range []string{"/p/", "/p/ns1/"} {
			for v := range 6 {
				value := fmt.Sprintf("n%d", v)
				var want []string
				for k, mv := range model {
					if strings.HasPrefix(k, prefix) && (mv == value || mv == "?") {
						want = append(want, k)
					}
				}
				slices.Sort(want)
				got, rev, _ := keys(x, prefix, value)
				if !slices.Equal(got, want) || rev != int64(step+1) {
					t.Fatalf("step %d: Keys(%q, %q) = %q at %d, want %q", step, prefix, value, got, rev, want)
				}
			}
			// Any value, labels tier=t1 with extra: the unknown keys too.
			match := func(l map[string]string) bool { return l["tier"] == "t1" && l["extra"] == "x" }
			var want []string
			n := 0
			for k, mv := range model {
				if !strings.HasPrefix(k, prefix) {
					continue
				}
				n++
				if mv == "?" || match(modelLabels[k]) {
					want = append(want, k)
				}
			}
			slices.Sort(want)
			got, considered, _, _ := x.Select(prefix, nil, match)
			if !slices.Equal(got, want) || considered != n {
				t.Fatalf("step %d: Select(%q, any, tier=t1,extra) = %q of %d, want %q of %d", step, prefix, got, considered, want, n)
			}
		}
		// Every label set held is some key's, and counted once per key.
		refs := 0
		for _, ls := range x.sets {
			refs += ls.refs
		}
		if known := len(modelLabels); refs != known {
			t.Fatalf("step %d: label sets count %d keys, want %d", step, refs, known)
		}
	}
}

func TestIndexWait(t *testing.T) {
	x := New()
	if x.Wait(context.Background(), 1) {
		t.Fatal("Wait on an unsynced index reported synced")
	}
	x.Synced(5)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if x.Wait(ctx, 6) {
		t.Fatal("Wait for a revision not reached, with an ended context, reported reached")
	}
	if !x.Wait(context.Background(), 5) {
		t.Fatal("Wait for a revision reached reported not reached")
	}
	done := make(chan bool)
	go func() { done <- x.Wait(context.Background(), 7) }()
	x.Synced(6)
	x.Synced(7)
	if !<-done {
		t.Fatal("Wait for revision 7 reported not reached after Synced(7)")
	}
	// A reset ends the wait, whether it comes before or during it: the index will not
	// sync without a new feed.
	go func() { done <- x.Wait(context.Background(), 9) }()
	x.Reset()
	if <-done {
		t.Fatal("Wait across a reset reported reached")
	}
}

// BenchmarkIndexMemory reports the heap an index holds per key: 100,000 pods' keys over
// 1,000 nodes (go test -bench IndexMemory -benchtime 1x ./internal/registry/fieldindex).
func BenchmarkIndexMemory(b *testing.B) {
	keys := make([]string, 100_000)
	for i := range keys {
		keys[i] = fmt.Sprintf("/registry/pods/tenant-%03d/web-7d4b9c8f6d-%05d", i%300, i)
	}
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		x := New()
		for i, k := range keys {
			x.Put(k, fmt.Sprintf("node-%04d", i%1000), map[string]string{"app": fmt.Sprintf("app-%d", i%300), "pod-template-hash": "7d4b9c8f6d"}, true)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(keys)), "B/key")
		runtime.KeepAlive(x)
	}
}

// TestIndexConcurrentReads: lists select while the feed writes (run with -race); each
// answer is in order, under its prefix, and at a revision the feed had reached.
func TestIndexConcurrentReads(t *testing.T) {
	x := New()
	x.Synced(1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 3000 {
			key := fmt.Sprintf("/p/ns%d/k%d", i%3, i%50)
			if i%7 == 0 {
				x.Delete(key)
			} else {
				x.Put(key, fmt.Sprintf("n%d", i%4), map[string]string{"tier": fmt.Sprintf("t%d", i%3)}, true)
			}
			x.Synced(int64(i + 2))
		}
	}()
	var readers sync.WaitGroup
	for r := range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			value := fmt.Sprintf("n%d", r)
			var last int64
			for range 300 {
				var v *string
				if r%2 == 0 {
					v = &value
				}
				keys, _, rev, ok := x.Select("/p/ns1/", v, func(l map[string]string) bool { return l["tier"] != "t0" })
				if !ok || rev < last || !slices.IsSorted(keys) {
					t.Errorf("reader %d: %d keys at %d (ok %v, last %d), sorted %v", r, len(keys), rev, ok, last, slices.IsSorted(keys))
					return
				}
				for _, k := range keys {
					if !strings.HasPrefix(k, "/p/ns1/") {
						t.Errorf("reader %d: key %q outside the prefix", r, k)
						return
					}
				}
				last = rev
			}
		}()
	}
	readers.Wait()
	<-done
}
