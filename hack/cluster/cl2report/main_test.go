package main

import (
	"math"
	"strings"
	"testing"
)

func TestQuantile(t *testing.T) {
	// 100 calls: 50 under 5 ms, 40 more under 25 ms, 9 under 50 ms, 1 past the last bound.
	b := []bucket{{0.005, 50}, {0.025, 90}, {0.05, 99}, {math.Inf(1), 100}}
	for _, c := range []struct {
		q, want float64
	}{
		{0.5, 0.005},    // the rank is the first bucket's count: its upper bound
		{0.7, 0.015},    // 20 of 40 into (0.005, 0.025]
		{0.99, 0.05},    // the third bucket's upper bound
		{0.995, 0.05},   // in +Inf: the highest finite bound
		{0.25, 0.0025},  // half into the first bucket, from 0
		{0.9, 0.025},    // exactly the second bucket's count
		{0.95, 0.03889}, // 5 of 9 into (0.025, 0.05]
	} {
		if got := quantile(c.q, b); math.Abs(got-c.want) > 1e-4 {
			t.Errorf("quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := quantile(0.5, []bucket{{0.005, 0}, {math.Inf(1), 0}}); !math.IsNaN(got) {
		t.Errorf("quantile of no calls = %v, want NaN", got)
	}
}

func TestAPILatencies(t *testing.T) {
	const before = `# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1",le="0.005"} 10
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1",le="1"} 10
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1",le="+Inf"} 10
apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 0.01
apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 10
`
	// After: 100 more POSTs, all between 5 ms and 1 s; a WATCH, which is left out.
	const after = `# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1",le="0.005"} 10
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1",le="1"} 110
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1",le="+Inf"} 110
apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 5
apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 110
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1",le="0.005"} 0
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1",le="1"} 0
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1",le="+Inf"} 1
apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1"} 300
apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1"} 1
`
	b, err := parseMetrics(strings.NewReader(before))
	if err != nil {
		t.Fatal(err)
	}
	a, err := parseMetrics(strings.NewReader(after))
	if err != nil {
		t.Fatal(err)
	}
	got := apiLatencies(b, a)
	if len(got) != 1 {
		t.Fatalf("got %d series, want the POSTs alone: %v", len(got), got)
	}
	st := got[apiKey{"pods", "", "POST", "resource"}]
	if st == nil || st.count != 100 {
		t.Fatalf("pods POST = %+v, want 100 calls", st)
	}
	if want := 0.005 + 0.995*0.5; math.Abs(st.p50-want) > 1e-9 {
		t.Errorf("p50 = %v, want %v", st.p50, want)
	}
	if st.exceeded || st.threshold != 1 {
		t.Errorf("threshold %v exceeded %v, want 1 s not exceeded", st.threshold, st.exceeded)
	}
}
