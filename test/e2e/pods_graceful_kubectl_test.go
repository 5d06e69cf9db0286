package e2e

import (
	"strings"
	"testing"
)

const boundPod = `apiVersion: v1
kind: Pod
metadata:
  name: db
  namespace: gd
spec:
  nodeName: n1
  terminationGracePeriodSeconds: 30
  containers:
  - name: db
    image: postgres
`

// TestKubectlDeletePodWaitsForNode: kubectl delete of a pod bound to a node marks it
// Terminating and waits for its node's confirmation (here it gives up after --timeout);
// the node's zero-grace delete removes it.
func TestKubectlDeletePodWaitsForNode(t *testing.T) {
	requireKubectl(t)
	c := start(t)
	c.expectOut("", "namespace/gd created\n", "create", "namespace", "gd")
	c.waitKubectl(func(s string) bool { return strings.Contains(s, "default") }, "get", "serviceaccounts", "-n", "gd", "-o", "name")
	c.expectOut(drainNode, "node/n1 created\n", "create", "-f", "-")
	c.expectOut(boundPod, "pod/db created\n", "create", "-f", "-")
	r := c.kubectl("delete", "pod", "db", "-n", "gd", "--timeout=2s")
	if r.code == 0 || !strings.Contains(r.stdout, `pod "db" deleted`) || !strings.Contains(r.stderr, "timed out waiting for the condition on pods/db") {
		t.Errorf("kubectl delete of a bound pod: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if got := c.must("get", "pod", "db", "-n", "gd", "-o", "jsonpath={.metadata.deletionGracePeriodSeconds}"); got != "30" {
		t.Errorf("deletionGracePeriodSeconds %q, want 30", got)
	}
	if got := c.must("get", "pod", "db", "-n", "gd", "--no-headers"); !strings.Contains(got, "Terminating") {
		t.Errorf("kubectl get pod: %q, want Terminating", got)
	}
	// The node confirms, as a kubelet does, with a zero-grace delete.
	r = c.kubectl("delete", "pod", "db", "-n", "gd", "--grace-period=0", "--force")
	if r.code != 0 || !strings.Contains(r.stderr, "Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated.") {
		t.Errorf("kubectl delete --force: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if r := c.kubectl("get", "pod", "db", "-n", "gd"); r.code == 0 || !strings.Contains(r.stderr, `pods "db" not found`) {
		t.Errorf("pod after its node confirmed: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	// An unbound pod is removed at once, and kubectl returns.
	c.expectOut("", "pod/web created\n", "run", "web", "--image=nginx", "-n", "gd")
	if r := c.kubectl("delete", "pod", "web", "-n", "gd", "--timeout=30s"); r.code != 0 {
		t.Errorf("kubectl delete of an unbound pod: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
}
