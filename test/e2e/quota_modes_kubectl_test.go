package e2e

import (
	"fmt"
	"testing"
)

const modesPod = `apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  containers:
  - name: c
    image: nginx
    resources:
      requests:
        cpu: 600m
`

// TestQuotaModesKubectl: the Warning lines real kubectl prints for a quota in Warn mode
// (`kubectl create` admitted over the limit) and for a crossed warn-at threshold, and
// `kubectl describe quota` of a quota whose used passed hard (kubectl's own describer:
// Name, Namespace, Resource/Used/Hard, no annotations).
func TestQuotaModesKubectl(t *testing.T) {
	t.Parallel()
	c := start(t)
	c.must("create", "namespace", "team")
	c.must("create", "quota", "compute", "--hard=pods=1,requests.cpu=1", "-n", "team")
	c.must("annotate", "quota", "compute", "-n", "team", "quota.quotad.io/enforcement=Warn", "quota.quotad.io/warn-at=50%")
	pod := func(name string) string { return fmt.Sprintf(modesPod, name) }
	r := c.kubectlIn(pod("first"), "create", "-f", "-", "-n", "team")
	if r.code != 0 {
		t.Fatalf("create first: %d %s", r.code, r.stderr)
	}
	golden(t, "quota-modes-threshold.txt", r.stdout+r.stderr)
	r = c.kubectlIn(pod("second"), "create", "-f", "-", "-n", "team")
	if r.code != 0 {
		t.Fatalf("create second: %d %s", r.code, r.stderr)
	}
	golden(t, "quota-modes-warn.txt", r.stdout+r.stderr)
	golden(t, "quota-modes-describe.txt", c.must("describe", "quota", "compute", "-n", "team"))
	// Enforce at once: upstream's refusal.
	c.must("annotate", "--overwrite", "quota", "compute", "-n", "team", "quota.quotad.io/enforcement=Enforce")
	r = c.kubectlIn(pod("third"), "create", "-f", "-", "-n", "team")
	if r.code == 0 {
		t.Fatal("Enforce admitted the third pod")
	}
	golden(t, "quota-modes-enforce.txt", r.stderr)
}
