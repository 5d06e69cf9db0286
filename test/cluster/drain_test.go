package cluster

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// TestDrainWithPodDisruptionBudget drains a KWOK node with the real kubectl drain while a
// PodDisruptionBudget (minAvailable 2 of 3 replicas) lets one pod go at a time: kubectl
// cordons the node and evicts its three pods at once; the budget admits one eviction and
// refuses the others with 429 ("Cannot evict pod as it would violate the pod's disruption
// budget."), which kubectl retries every 5s until the evicted pod's replacement runs
// Ready on another node; then the next goes, until the node is drained. Each evicted
// pod carries the eviction API's DisruptionTarget condition, its node confirms its
// deletion, and the compute quota, with room for exactly one pod beyond the replicas,
// follows exactly.
func TestDrainWithPodDisruptionBudget(t *testing.T) {
	requireKubectl(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	c := startCluster(ctx, t)
	cs := c.client

	// 1. A node with room for three pods of 250m, filled by a Deployment under a quota
	// with room for four.
	const drained = "kwok-drain"
	if _, err := cs.CoreV1().Nodes().Create(ctx, sizedNode(drained, "fake", "750m"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.nodesReady(ctx, drained)
	qw := c.computeQuota(ctx, ns, "1")
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](3),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: podTemplate(map[string]string{"app": "web"}, "250m", "256Mi", corev1.RestartPolicyAlways),
	}}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.must(ctx, "rollout", "status", "deployment/web", "-n", ns, "--timeout=5m")
	var old []string
	for _, p := range c.pods(ctx, "app=web") {
		if p.Spec.NodeName != drained {
			t.Fatalf("pod %s on %q, want %s", p.Name, p.Spec.NodeName, drained)
		}
		old = append(old, p.Name)
	}
	c.quotaMatchesPods(ctx, "after the rollout", map[corev1.ResourceName]string{corev1.ResourceRequestsCPU: "750m", corev1.ResourcePods: "3"})

	// 2. Two nodes with room join; a budget keeps two of the three pods available.
	healthy := []string{"kwok-node-0", "kwok-node-1"}
	for _, n := range healthy {
		if _, err := cs.CoreV1().Nodes().Create(ctx, kwokNode(n), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c.nodesReady(ctx, healthy...)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: policyv1.PodDisruptionBudgetSpec{
		MinAvailable: ptr.To(intstr.FromInt32(2)),
		Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	}}
	if _, err := cs.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.budget(ctx, 3, 1)

	// 3. kubectl drain, recording what the pods go through.
	hist := c.watchPods(ctx)
	r := c.kubectl(ctx, "drain", drained, "--timeout=5m")
	t.Logf("kubectl drain %s: exit %d\nstdout:\n%sstderr:\n%s", drained, r.code, r.stdout, r.stderr)
	if r.code != 0 {
		t.Fatalf("kubectl drain: exit %d", r.code)
	}
	// stdout: cordoned first, drained last, every pod evicted (each "evicting pod" line
	// repeated at each try).
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if lines[0] != "node/"+drained+" cordoned" || lines[len(lines)-1] != "node/"+drained+" drained" {
		t.Errorf("kubectl drain's stdout does not start with cordoned and end with drained:\n%s", r.stdout)
	}
	tries := map[string]int{}
	for _, l := range lines[1 : len(lines)-1] {
		if name, ok := strings.CutPrefix(l, "evicting pod "+ns+"/"); ok && slices.Contains(old, name) {
			tries[name]++
		} else if name, ok := strings.CutPrefix(l, "pod/"); ok && slices.Contains(old, strings.TrimSuffix(name, " evicted")) && strings.HasSuffix(name, " evicted") {
			tries[strings.TrimSuffix(name, " evicted")] += 1000
		} else {
			t.Errorf("kubectl drain: unexpected line %q", l)
		}
	}
	// stderr: only the budget's refusals, retried.
	refused := map[string]int{}
	re := regexp.MustCompile(`^error when evicting pods/"([^"]+)" -n "` + ns + `" \(will retry after 5s\): Cannot evict pod as it would violate the pod's disruption budget\.$`)
	for _, l := range strings.Split(strings.TrimRight(r.stderr, "\n"), "\n") {
		if m := re.FindStringSubmatch(l); m != nil && slices.Contains(old, m[1]) {
			refused[m[1]]++
		} else {
			t.Errorf("kubectl drain: unexpected error line %q", l)
		}
	}
	total := 0
	for _, name := range old {
		// Evicted once, tried once more than refused.
		if tries[name] != 1000+refused[name]+1 {
			t.Errorf("pod %s: %d evicting lines and %d evicted, refused %d times", name, tries[name]%1000, tries[name]/1000, refused[name])
		}
		total += refused[name]
	}
	// Three evictions sent at once, one allowed: the other two are refused until the
	// first replacement is Ready.
	if total < 2 {
		t.Errorf("the budget refused %d evictions (%v), want at least 2", total, refused)
	}
	metrics := c.must(ctx, "get", "--raw", "/metrics")
	if !regexp.MustCompile(`(?m)^apiserver_request_total\{code="429",[^}]*resource="pods",[^}]*subresource="eviction",verb="POST",[^}]*\} [1-9]`).MatchString(metrics) {
		t.Errorf("no 429 of pods/eviction counted in /metrics")
	}

	// 4. What each evicted pod went through: the eviction API's DisruptionTarget
	// condition, a graceful deletion, its node's confirmation.
	hist.stop()
	for _, name := range old {
		hist.checkEvicted(t, name)
	}

	// 5. The node is cordoned and empty, the replacements run on the other nodes, the
	// budget is whole again and the quota exact.
	node, err := cs.CoreV1().Nodes().Get(ctx, drained, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !node.Spec.Unschedulable || !hasTaint(node, corev1.TaintNodeUnschedulable, corev1.TaintEffectNoSchedule) {
		t.Errorf("node %s: unschedulable %v taints %v", drained, node.Spec.Unschedulable, node.Spec.Taints)
	}
	if out := c.must(ctx, "get", "nodes"); !regexp.MustCompile(`(?m)^` + drained + `\s+Ready,SchedulingDisabled\s`).MatchString(out) {
		t.Errorf("kubectl get nodes: %s not Ready,SchedulingDisabled:\n%s", drained, out)
	}
	c.replacementsRunning(ctx, old, healthy, 3)
	c.budget(ctx, 3, 1)
	c.quotaMatchesPods(ctx, "after the drain", map[corev1.ResourceName]string{corev1.ResourceRequestsCPU: "750m", corev1.ResourcePods: "3"})
	if out := c.must(ctx, "uncordon", drained); strings.TrimSpace(out) != "node/"+drained+" uncordoned" {
		t.Errorf("kubectl uncordon: %q", out)
	}
	c.alive()
	c.noRefusals()
	qw.stop()
	if v := qw.violations(); len(v) > 0 {
		t.Errorf("the quota exceeded hard:\n%s", strings.Join(v, "\n"))
	}
}

// budget waits for the web PodDisruptionBudget's status to show healthy pods and allowed
// disruptions, with the condition that goes with them.
func (c *cluster) budget(ctx context.Context, healthy, allowed int32) {
	c.t.Helper()
	until(ctx, c.t, fmt.Sprintf("the budget to have %d healthy and allow %d", healthy, allowed), c.listWatch(c.client.PolicyV1().RESTClient(), "poddisruptionbudgets", ns, fields.Everything()), &policyv1.PodDisruptionBudget{},
		func(os []runtime.Object) bool {
			if len(os) != 1 {
				return false
			}
			p := os[0].(*policyv1.PodDisruptionBudget)
			if p.Status.ObservedGeneration != p.Generation || p.Status.CurrentHealthy != healthy || p.Status.DesiredHealthy != 2 ||
				p.Status.ExpectedPods != 3 || p.Status.DisruptionsAllowed != allowed {
				return false
			}
			for _, cond := range p.Status.Conditions {
				if cond.Type == policyv1.DisruptionAllowedCondition {
					return cond.Status == metav1.ConditionTrue && cond.Reason == policyv1.SufficientPodsReason
				}
			}
			return false
		})
}

// checkEvicted asserts what pod name went through, in order: Ready and Running; the
// eviction API's DisruptionTarget condition, then (or with it) a graceful deletion
// (30s); deleted by its node.
func (h *podHistory) checkEvicted(t *testing.T, name string) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		t.Fatal(h.err)
	}
	var steps []string
	for _, s := range h.seen[name] {
		p := s.pod
		var cond *corev1.PodCondition
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == corev1.DisruptionTarget {
				cond = &p.Status.Conditions[i]
			}
		}
		var step string
		switch {
		case s.typ == watch.Deleted:
			step = "deleted"
		case cond != nil && cond.Status == corev1.ConditionTrue && cond.Reason == "EvictionByEvictionAPI" && cond.Message == "Eviction API: evicting" && p.DeletionTimestamp != nil:
			step = fmt.Sprintf("terminating %ds EvictionByEvictionAPI", ptr.Deref(p.DeletionGracePeriodSeconds, -1))
		case cond != nil:
			step = fmt.Sprintf("DisruptionTarget %s %s %q", cond.Status, cond.Reason, cond.Message)
		case p.DeletionTimestamp != nil:
			step = fmt.Sprintf("terminating %ds", ptr.Deref(p.DeletionGracePeriodSeconds, -1))
		case podReady(p) && p.Status.Phase == corev1.PodRunning:
			step = "Ready"
		default:
			step = fmt.Sprintf("phase %s ready %v", p.Status.Phase, podReady(p))
		}
		if len(steps) == 0 || steps[len(steps)-1] != step {
			steps = append(steps, step)
		}
	}
	want := []string{"Ready", `DisruptionTarget True EvictionByEvictionAPI "Eviction API: evicting"`, "terminating 30s EvictionByEvictionAPI", "deleted"}
	if !slices.Equal(steps, want) {
		t.Errorf("pod %s went through %q; want %q", name, steps, want)
	} else {
		t.Logf("pod %s: %s", name, strings.Join(steps, " → "))
	}
}
