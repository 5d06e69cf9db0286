package integration

import (
	"log/slog"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/quotad/quotad/internal/controller/quotaverify"
	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/registry/commit"
	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
)

type countRepairs struct{ n int }

func (c *countRepairs) Repaired(ns, name string) { c.n++ }

// TestVerifierRepairsDrift corrupts a quota's stored status behind the registry's back (the
// only way drift can appear) and checks that the verifier finds and repairs it.
func TestVerifierRepairsDrift(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "v")
	mkQuota(t, s, "v", "q", map[string]string{"pods": "5", "configmaps": "5"})
	if _, err := s.Client.CoreV1().Pods("v").Create(ctx, pod("a", "", ""), metaCreate()); err != nil {
		t.Fatal(err)
	}
	// 1. Corrupt: write used pods = 4 straight into storage.
	st := s.Store.Storage()
	key := registry.KeyPrefix(corev1.SchemeGroupVersion.WithResource("resourcequotas").GroupResource(), "v") + "q"
	servertest.EditStored(t, s, key, func(rq *corev1.ResourceQuota) { rq.Status.Used[corev1.ResourcePods] = resource.MustParse("4") })
	// 2. The invariant check from outside any server (what test/ha runs against a cluster's
	// etcd) finds the drift too.
	checker := server.CheckingStore(st)
	if drifts, err := servertest.Violations(ctx, checker); err != nil || len(drifts) != 1 || !strings.Contains(drifts[0], "resourcequota v/q") {
		t.Fatalf("Violations over CheckingStore = %q, %v; want the drift of v/q", drifts, err)
	}
	// 3. The verifier repairs it and reports one repair.
	obs := &countRepairs{}
	v := quotaverify.New(s.Store, 0, slog.New(slog.DiscardHandler), obs)
	n, err := v.VerifyAll(ctx)
	if err != nil || n != 1 || obs.n != 1 {
		t.Fatalf("VerifyAll repaired %d (observer %d), err %v", n, obs.n, err)
	}
	expectUsed(t, s, "v", "q", map[string]string{"pods": "1", "configmaps": "1"})
	// The repair put the namespace's quota-set key with the quota, as a quota's own writes
	// do: batches planned on the corrupted status fail their guards and are planned again.
	repaired, err := st.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if set, err := st.Get(ctx, commit.QuotaSetKey("v")); err != nil || set.ModRevision != repaired.ModRevision {
		t.Fatalf("quota set at %d (%v), repaired quota at %d: want the repair to put both", set.ModRevision, err, repaired.ModRevision)
	}
	// 4. Nothing left to repair, nor to find.
	if n, err := v.VerifyAll(ctx); err != nil || n != 0 {
		t.Fatalf("second VerifyAll repaired %d, err %v", n, err)
	}
	if drifts, err := servertest.Violations(ctx, checker); err != nil || len(drifts) != 0 {
		t.Fatalf("Violations over CheckingStore after the repair = %q, %v", drifts, err)
	}
}

// TestMetricsExposeQuotas reads /metrics like Prometheus would.
func TestMetricsExposeQuotas(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	mkNamespace(t, s, "m")
	mkQuota(t, s, "m", "q", map[string]string{"pods": "5"})
	if _, err := s.Client.CoreV1().Pods("m").Create(ctxT(t), pod("a", "", ""), metaCreate()); err != nil {
		t.Fatal(err)
	}
	// The quota values come from the watch: wait until they are there.
	waitForMetrics(t, s,
		`quotad_resourcequota{namespace="m",resource="pods",resourcequota="q",type="hard"} 5`,
		`quotad_resourcequota{namespace="m",resource="pods",resourcequota="q",type="used"} 1`,
		`quotad_admission_quota_decisions_total{result="admitted"} 1`,
	)
}
