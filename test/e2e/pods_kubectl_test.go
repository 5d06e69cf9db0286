package e2e

import (
	"strings"
	"testing"
)

const drainNode = `apiVersion: v1
kind: Node
metadata:
  name: n1
status:
  conditions:
  - type: Ready
    status: "True"
`

const dbPod = `apiVersion: v1
kind: Pod
metadata:
  name: db
  namespace: app
  labels:
    app: db
spec:
  nodeName: n1
  containers:
  - name: db
    image: postgres
`

// TestPodsKubectl: kubectl get all -A shows service/kubernetes; kubectl logs and exec of an
// unscheduled pod answer as upstream; kubectl drain is held by a PodDisruptionBudget with
// upstream's eviction message.
func TestPodsKubectl(t *testing.T) {
	t.Parallel()
	requireKubectl(t)
	c := start(t)
	all := normalizeTable(c.must("get", "all", "-A"))
	if !strings.Contains(all, "default  service/kubernetes  ClusterIP  10.96.0.1  <none>  443/TCP  <age>") {
		t.Errorf("kubectl get all -A:\n%s", all)
	}
	c.expectOut("", "namespace/app created\n", "create", "namespace", "app")
	c.waitKubectl(func(s string) bool { return strings.Contains(s, "default") }, "get", "serviceaccounts", "-n", "app", "-o", "name")
	c.expectOut("", "pod/web created\n", "run", "web", "--image=nginx", "-n", "app")
	if r := c.kubectl("logs", "web", "-n", "app"); r.code != 0 || r.stdout != "" {
		t.Errorf("kubectl logs of an unscheduled pod: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := c.kubectl("exec", "web", "-n", "app", "--", "ls"); r.code == 0 || !strings.Contains(r.stderr, "pod web does not have a host assigned") {
		t.Errorf("kubectl exec of an unscheduled pod: exit %d stderr %q", r.code, r.stderr)
	}
	sa := c.must("get", "pod", "web", "-n", "app", "-o", "jsonpath={.spec.serviceAccountName} {.spec.volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds} {.spec.containers[0].volumeMounts[0].mountPath}")
	if sa != "default 3607 /var/run/secrets/kubernetes.io/serviceaccount" {
		t.Errorf("admitted pod: %q", sa)
	}

	// A PodDisruptionBudget holds kubectl drain.
	c.expectOut(drainNode, "node/n1 created\n", "create", "-f", "-")
	c.expectOut(dbPod, "pod/db created\n", "create", "-f", "-")
	c.expectOut("", "pod/db patched\n", "patch", "pod", "db", "-n", "app", "--subresource=status", "--type=merge",
		"-p", `{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}`)
	c.expectOut("", "poddisruptionbudget.policy/db created\n", "create", "pdb", "db", "-n", "app", "--selector=app=db", "--min-available=1")
	c.waitKubectl(func(s string) bool { return s == "1 1 0" }, "get", "pdb", "db", "-n", "app", "-o", "jsonpath={.status.currentHealthy} {.status.desiredHealthy} {.status.disruptionsAllowed}")
	pdb := normalizeTable(c.must("get", "pdb", "-n", "app"))
	if want := "NAME  MIN AVAILABLE  MAX UNAVAILABLE  ALLOWED DISRUPTIONS  AGE\ndb  1  N/A  0  <age>\n"; pdb != want {
		t.Errorf("kubectl get pdb:\n%s\nwant\n%s", pdb, want)
	}
	r := c.kubectl("drain", "n1", "--ignore-daemonsets", "--force", "--timeout=2s")
	if r.code == 0 || !strings.Contains(r.stderr, `error when evicting pods/"db" -n "app" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.`) {
		t.Errorf("kubectl drain: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	c.must("get", "pod", "db", "-n", "app")
}
