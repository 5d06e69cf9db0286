package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// waitFor runs kubectl until its output contains want or the deadline passes.
func (c *cluster) waitFor(want string, args ...string) string {
	c.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var last result
	for time.Now().Before(deadline) {
		last = c.kubectl(args...)
		if last.code == 0 && strings.Contains(last.stdout, want) {
			return last.stdout
		}
		time.Sleep(200 * time.Millisecond) // polling interval of a wait, not a correctness sleep
	}
	c.t.Fatalf("kubectl %s never printed %q; last: %s %s", strings.Join(args, " "), want, last.stdout, last.stderr)
	return ""
}

// TestDeploymentUnderQuota is the documentation's object-count walkthrough plus a
// Deployment held below its replicas by a pod quota, through kubectl.
func TestDeploymentUnderQuota(t *testing.T) {
	c := start(t)
	c.must("create", "namespace", "myspace")
	c.must("create", "quota", "test", "--hard=count/deployments.apps=2,count/replicasets.apps=4,count/pods=3,count/secrets=4", "--namespace=myspace")
	if got := c.must("create", "deployment", "nginx", "--image=nginx", "--namespace=myspace", "--replicas=2"); got != "deployment.apps/nginx created\n" {
		t.Errorf("create deployment printed %q", got)
	}
	c.waitFor("count/pods              2", "describe", "quota", "--namespace=myspace")
	golden(t, "deployment-walkthrough-describe-quota.txt", c.must("describe", "quota", "--namespace=myspace"))

	// Scale past count/pods=3: the ReplicaSet reports why.
	c.must("scale", "deployment", "nginx", "--replicas=5", "--namespace=myspace")
	out := c.waitFor("exceeded quota: test", "describe", "replicaset", "--namespace=myspace")
	if !strings.Contains(out, `Error creating: pods "nginx-`) || !strings.Contains(out, `is forbidden: exceeded quota: test, requested: count/pods=1, used: count/pods=3, limited: count/pods=3`) {
		t.Errorf("describe replicaset lacks the FailedCreate reason:\n%s", out)
	}
	dep := c.waitFor("ReplicaFailure", "describe", "deployment", "nginx", "--namespace=myspace")
	if !regexp.MustCompile(`ReplicaFailure\s+True\s+FailedCreate`).MatchString(dep) {
		t.Errorf("describe deployment lacks the ReplicaFailure condition:\n%s", dep)
	}
	r := c.kubectl("rollout", "status", "deployment/nginx", "--namespace=myspace", "--timeout=2s")
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "Waiting for deployment \"nginx\" rollout to finish: 3 of 5 updated replicas are available") && !strings.Contains(r.stdout+r.stderr, "exceeded its progress deadline") && !strings.Contains(r.stdout+r.stderr, "Waiting for deployment") {
		t.Errorf("rollout status: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Raise the quota: it reaches 5 without a restart.
	c.must("patch", "quota", "test", "--namespace=myspace", "-p", `{"spec":{"hard":{"count/pods":"10"}}}`)
	c.waitFor("count/pods              5", "describe", "quota", "--namespace=myspace")
	// Delete: ReplicaSets and pods go, the quota is credited.
	if got := c.must("delete", "deployment", "nginx", "--namespace=myspace"); got != "deployment.apps \"nginx\" deleted\n" {
		t.Errorf("delete printed %q", got)
	}
	c.waitFor("count/pods              0", "describe", "quota", "--namespace=myspace")
	final := c.waitFor("count/replicasets.apps  0", "describe", "quota", "--namespace=myspace")
	golden(t, "deployment-walkthrough-after-delete.txt", final)
}
