package main

import (
	"strings"
	"testing"
	"time"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestAbuseScenario runs the abuse scenario, small, against an in-process quotad: the probe
// is answered in both phases, every abuser gets what the server's limits give it (401 for
// the anonymous scrapers, 422 for the huge quantity and the copy bomb, 413 for the
// strategic merge patch too costly to merge, whole lists, connections held), and
// the heap is sampled. Its latencies are measured, not asserted: see docs/benchmarks.md.
func TestAbuseScenario(t *testing.T) {
	s := servertest.Start(t)
	o := options{server: s.URL, token: s.Token, insecure: true, prefix: "abuse"}
	o.abuse = abuseOptions{duration: 3 * time.Second, slowBodies: 4, stuckWatchers: 2, bigLists: 2, listPods: 120,
		scrapers: 2, hugeQuantity: 1, copyBombs: 1, churnPatches: 1, mergeOrders: 1, longSelectors: 2, probeInProcess: true}
	a, err := newAPI(o)
	if err != nil {
		t.Fatal(err)
	}
	r, err := abuse(a, o, o.abuse)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	r.print(&out)
	t.Log(out.String())
	for name, p := range map[string]*probe{"idle": r.idle, "abuse": r.busy} {
		if n, _, _ := p.summary(); n == 0 || p.bad.Load() != 0 {
			t.Errorf("probe %s: %d answers, %d failed", name, n, p.bad.Load())
		}
	}
	got := r.abusers.m
	for _, k := range []string{"anonymous-scrape 401", "huge-quantity 422", "big-list 200", "slow-body still open at the end", "stuck-watcher still open at the end",
		"copy-bomb 422", "merge-order 413", "churn-patch 413"} {
		if got[k] == 0 {
			t.Errorf("no %q among the abusers' outcomes", k)
		}
	}
	for k := range got {
		if strings.HasSuffix(k, " error") || strings.Contains(k, " 5") {
			t.Errorf("abusers got %q (%d)", k, got[k])
		}
	}
	if r.heapSamples == 0 || r.busyHeap == 0 {
		t.Errorf("heap not sampled: %d samples, peak %d", r.heapSamples, r.busyHeap)
	}
}
