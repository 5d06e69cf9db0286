package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestClusterQuotaAlternate runs the clusterquota scenario, small, with each phase in three
// parts taken in turn: every create of both phases is admitted once under its own name, and
// the ResourceQuota and the ClusterResourceQuota each count all of their phase's pods.
func TestClusterQuotaAlternate(t *testing.T) {
	s := servertest.Start(t)
	o := options{server: s.URL, token: s.Token, insecure: true, prefix: "alt", scenario: "clusterquota",
		clients: 4, creates: 31, namespaces: 5, alternate: 3}
	a, err := newAPI(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := runClusterQuota(a, o); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	used := func(path string, status func([]byte) (string, error)) string {
		t.Helper()
		code, b, err := a.do(ctx, http.MethodGet, path, nil)
		if err != nil || code != http.StatusOK {
			t.Fatalf("GET %s: %d %v", path, code, err)
		}
		v, err := status(b)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return v
	}
	rq := used("/api/v1/namespaces/alt-one/resourcequotas/bench", func(b []byte) (string, error) {
		var q struct {
			Status struct {
				Used map[string]string `json:"used"`
			} `json:"status"`
		}
		err := json.Unmarshal(b, &q)
		return q.Status.Used["pods"], err
	})
	crq := used("/apis/quota.openshift.io/v1/clusterresourcequotas/alt", func(b []byte) (string, error) {
		var q struct {
			Status struct {
				Total struct {
					Used map[string]string `json:"used"`
				} `json:"total"`
			} `json:"status"`
		}
		err := json.Unmarshal(b, &q)
		return q.Status.Total.Used["pods"], err
	})
	if rq != "31" || crq != "31" {
		t.Errorf("pods used: ResourceQuota %q, ClusterResourceQuota %q; want 31 each", rq, crq)
	}
	// The parts name their pods on from the previous part (p-0 to p-30), spread over the
	// namespaces in turn (p-11 in alt-001).
	for _, path := range []string{"/api/v1/namespaces/alt-one/pods/p-30", "/api/v1/namespaces/alt-000/pods/p-30", "/api/v1/namespaces/alt-001/pods/p-11"} {
		if code, _, err := a.do(ctx, http.MethodGet, path, nil); err != nil || code != http.StatusOK {
			t.Errorf("GET %s: %d %v", path, code, err)
		}
	}
}

// TestLatencyLog: --latencies records every create of the load, a line each: its start,
// within the run, and its latency, which the run's percentiles are taken from.
func TestLatencyLog(t *testing.T) {
	s := servertest.Start(t)
	path := filepath.Join(t.TempDir(), "lat")
	o := options{server: s.URL, token: s.Token, insecure: true, prefix: "lat", scenario: "quota",
		clients: 3, creates: 20, namespaces: 1, hard: 1000, alternate: 1, latencies: &latencyLog{path: path}}
	before := time.Now()
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	if err := o.latencies.write(); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != o.creates {
		t.Fatalf("%d lines for %d creates:\n%s", len(lines), o.creates, b)
	}
	for _, l := range lines {
		var start, d int64
		if _, err := fmt.Sscanf(l, "%d %d", &start, &d); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if start < before.UnixNano() || start+d > after.UnixNano() || d <= 0 {
			t.Fatalf("line %q: a create starting at %d taking %d ns, outside the run (%d to %d)", l, start, d, before.UnixNano(), after.UnixNano())
		}
	}
}
