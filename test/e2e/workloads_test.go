package e2e

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// waitFor runs kubectl until its output contains want, re-running it whenever the objects
// kubectl describes change (a client-go watch on quotas, workloads, events and namespaces
// wakes it), and fails after 90 seconds.
func (c *cluster) waitFor(want string, args ...string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	changed := make(chan struct{}, 1)
	cs := c.client()
	watchers := []func(context.Context, metav1.ListOptions) (watch.Interface, error){
		cs.CoreV1().ResourceQuotas("").Watch, cs.AppsV1().ReplicaSets("").Watch,
		cs.AppsV1().Deployments("").Watch, cs.CoreV1().Events("").Watch, cs.CoreV1().Namespaces().Watch,
	}
	for _, open := range watchers {
		w, err := open(ctx, metav1.ListOptions{})
		if err != nil {
			c.t.Fatal(err)
		}
		defer w.Stop()
		go func() {
			for range w.ResultChan() {
				select {
				case changed <- struct{}{}:
				default:
				}
			}
		}()
	}
	var last result
	for {
		last = c.kubectl(args...)
		if last.code == 0 && strings.Contains(last.stdout, want) {
			return last.stdout
		}
		select {
		case <-changed:
		case <-ctx.Done():
			c.t.Fatalf("kubectl %s never printed %q; last: %s %s", strings.Join(args, " "), want, last.stdout, last.stderr)
			return ""
		}
	}
}

// TestDeploymentUnderQuota is the documentation's object-count walkthrough plus a
// Deployment held below its replicas by a pod quota, through kubectl.
func TestDeploymentUnderQuota(t *testing.T) {
	t.Parallel()
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
	// The FailedCreate event (written asynchronously, after the ReplicaFailure condition
	// that also names the quota) is what describe must show.
	out := c.waitFor(`Error creating: pods "nginx-`, "describe", "replicaset", "--namespace=myspace")
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
