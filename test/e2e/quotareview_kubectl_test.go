package e2e

import (
	"testing"
)

// TestQuotaFitWarningsKubectl: kubectl prints the Warning of a workload whose replicas do
// not all fit, on create and on scale.
func TestQuotaFitWarningsKubectl(t *testing.T) {
	t.Parallel()
	c := start(t)
	c.must("create", "namespace", "team")
	c.must("create", "quota", "compute", "--hard=pods=3", "-n", "team")
	r := c.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=10", "-n", "team")
	if r.code != 0 || r.stdout != "deployment.apps/web created\n" ||
		r.stderr != "Warning: only 3 of 10 replicas fit quota compute: pods: 1 per replica, used 0, limited 3\n" {
		t.Errorf("create deployment: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	// pods: 0 refuses every pod, so the numbers stay put while the controllers work.
	c.must("create", "namespace", "zero")
	c.must("create", "quota", "none", "--hard=pods=0", "-n", "zero")
	c.kubectl("create", "deployment", "api", "--image=nginx", "-n", "zero")
	r = c.kubectl("scale", "deployment", "api", "--replicas=4", "-n", "zero")
	if r.code != 0 || r.stdout != "deployment.apps/api scaled\n" ||
		r.stderr != "Warning: only 0 of 3 replicas fit quota none: pods: 1 per replica, used 0, limited 0\n" {
		t.Errorf("scale deployment: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// TestQuotaReviewKubectl: `kubectl create -f quotareview.yaml -o yaml` prints the answer.
func TestQuotaReviewKubectl(t *testing.T) {
	t.Parallel()
	c := start(t)
	c.must("create", "namespace", "ask")
	c.must("create", "quota", "compute", "--hard=requests.cpu=2,pods=10", "-n", "ask")
	golden(t, "quotareview.golden", normalizeObject(c.must("create", "-f", "testdata/quotareview.yaml", "-o", "yaml")))
}
