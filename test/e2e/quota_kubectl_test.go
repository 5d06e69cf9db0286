package e2e

import (
	"testing"
)

// TestCreateQuotaAndDescribeNamespace: `kubectl create quota` with --hard and --scopes, and
// the quota section of `kubectl describe namespace`.
func TestCreateQuotaAndDescribeNamespace(t *testing.T) {
	t.Parallel()
	c := start(t)
	c.must("create", "namespace", "team")
	if got := c.must("create", "quota", "best-effort", "--hard=pods=5", "--scopes=BestEffort", "-n", "team"); got != "resourcequota/best-effort created\n" {
		t.Errorf("create quota printed %q", got)
	}
	c.must("create", "quota", "counts", "--hard=count/deployments.apps=2,count/replicasets.apps=4,count/pods=3,count/secrets=4", "-n", "team")
	c.must("run", "idle", "--image=nginx", "-n", "team")
	golden(t, "describe-quota-scoped.txt", c.must("describe", "quota", "best-effort", "-n", "team"))
	golden(t, "describe-namespace.txt", c.must("describe", "namespace", "team"))
	r := c.kubectl("create", "quota", "bad", "--hard=pods=1", "--scopes=BestEffort,NotBestEffort", "-n", "team")
	if r.code == 0 {
		t.Fatal("conflicting scopes accepted")
	}
	golden(t, "create-quota-conflicting-scopes.txt", r.stderr)
}
