package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quotad/quotad/internal/storage"
)

const leaderMetric = `leader_election_master_status{name="kube-controller-manager"}`

// leading reports whether the process leads, from its /metrics (kubectl get --raw).
func (c *cluster) leading() bool {
	return strings.Contains(c.must("get", "--raw", "/metrics"), leaderMetric+" 1\n")
}

// TestLeaderTakeoverAfterSIGKILL runs two quotad processes on one etcd with
// kube-controller-manager's default leader election (15s lease, 10s renew deadline, 2s
// retry), SIGKILLs the leader (no release) and reports how long the other took to lead;
// kubectl shows the Lease's holder change. It asserts no time.
func TestLeaderTakeoverAfterSIGKILL(t *testing.T) {
	t.Parallel()
	requireKubectl(t)
	etcd, err := storage.StartEmbedded(context.Background(), t.TempDir(), nil, storage.WithFastElection())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { etcd.Close() })
	files := etcd.ClientTLS()
	flags := []string{"--etcd-servers", strings.Join(etcd.Endpoints(), ","),
		"--etcd-cafile", files.CAFile, "--etcd-certfile", files.CertFile, "--etcd-keyfile", files.KeyFile}
	a := start(t, flags...)
	b := start(t, flags...)
	holder := func(c *cluster) string {
		return c.must("get", "lease", "kube-controller-manager", "-n", "kube-system", "-o", "jsonpath={.spec.holderIdentity}")
	}
	// 1. One of them leads (the first started, unless it lost a race); the Lease names it.
	var leader, other *cluster
	a.waitKubectl(func(string) bool {
		switch {
		case a.leading():
			leader, other = a, b
		case b.leading():
			leader, other = b, a
		}
		return leader != nil
	}, "get", "lease", "-n", "kube-system")
	before := holder(other)
	t.Logf("lease before the kill:\n%s", other.must("get", "lease", "-n", "kube-system"))
	if other.leading() {
		t.Fatal("both processes lead")
	}

	// 2. SIGKILL the leader: the Lease stays held until it expires on the other's clock.
	killed := time.Now()
	if err := leader.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = leader.cmd.Wait()
	leader.cmd = nil
	deadline := time.Now().Add(2 * time.Minute)
	for !other.leading() {
		if time.Now().After(deadline) {
			t.Fatal("the surviving process did not lead within 2 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
	took := time.Since(killed)
	after := holder(other)
	t.Logf("lease after the takeover:\n%s", other.must("get", "lease", "-n", "kube-system"))
	t.Logf("takeover after SIGKILL of the leader (lease 15s, renew 10s, retry 2s): %v (metric polled every 100ms)", took.Round(10*time.Millisecond))
	if after == before || after == "" {
		t.Fatalf("holder before %q, after %q", before, after)
	}
}
