package cluster

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"
)

// TestNodeDeath runs a Deployment under a compute quota on two KWOK nodes whose kwok
// process is then killed (SIGKILL: the nodes stop heartbeating, as machines losing power
// do) and follows what the control plane does, on watches:
//
//  1. the node lifecycle controller marks the nodes Ready=Unknown ("Kubelet stopped
//     posting node status."), taints them node.kubernetes.io/unreachable NoSchedule and
//     NoExecute, and marks their pods not Ready;
//  2. the taint eviction controller deletes the pods once their tolerationSeconds ran out:
//     gracefully (a pod bound to a node waits for its node's confirmation), so they stay
//     Terminating, and charged (design.md §2, "Terminating pods");
//  3. the ReplicaSet replaces them; the scheduler binds the replacements to the healthy
//     nodes, as many as the quota leaves room for: the terminating pods' charge holds the
//     rest back;
//  4. an operator taints one dead node node.kubernetes.io/out-of-service (non-graceful node
//     shutdown): pod GC marks its terminating pods Failed (the credit) and removes them, and
//     the ReplicaSet's remaining replacements are admitted;
//  5. the other dead Node is deleted (as the cloud node controller does when its machine is
//     gone): pod GC marks its pods Failed with DeletionByPodGC and removes them, and the
//     garbage collector removes its Lease;
//  6. the out-of-service node comes back (its kwok restarts): Ready again, the unreachable
//     taints are removed, and the operator removes the out-of-service taint.
//
// The quota's used is checked against the pods, exactly, at each step, and a watch on it
// sees it never above hard.
//
// The node lifecycle controller runs with short periods (a node is Unknown 20s after its
// Lease's last renewal, kwok renewing every 2.5s) and the pods tolerate unreachable for 2s
// instead of 300s; pod GC runs with upstream's fixed periods (20s, 40s of quarantine).
func TestNodeDeath(t *testing.T) {
	requireKubectl(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := startClusterWith(ctx, t, clusterOptions{
		quotadArgs:   []string{"--node-monitor-period=1s", "--node-monitor-grace-period=20s"},
		leaseSeconds: 10,
	})
	cs := c.client

	// 1. Two nodes, managed by a kwok process of their own, each with room for two pods.
	dead := []string{"kwok-doomed-0", "kwok-doomed-1"}
	for _, n := range dead {
		if _, err := cs.CoreV1().Nodes().Create(ctx, sizedNode(n, "doomed", "500m"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	doomed := c.startKWOK("kwok-doomed", "doomed")
	c.nodesReady(ctx, dead...)

	// 2. A Deployment of 4 × 250m fills them, under a quota with room for 6 such pods.
	qw := c.computeQuota(ctx, ns, "1500m")
	tmpl := podTemplate(map[string]string{"app": "web"}, "250m", "256Mi", corev1.RestartPolicyAlways)
	// Evicted 2s after their node's NoExecute taint, not DefaultTolerationSeconds' 300s.
	for _, key := range []string{corev1.TaintNodeUnreachable, corev1.TaintNodeNotReady} {
		tmpl.Spec.Tolerations = append(tmpl.Spec.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](2)})
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](4),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: tmpl,
	}}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.must(ctx, "rollout", "status", "deployment/web", "-n", ns, "--timeout=5m")
	victims := map[string][]string{} // dead node → its pods
	for _, p := range c.pods(ctx, "app=web") {
		victims[p.Spec.NodeName] = append(victims[p.Spec.NodeName], p.Name)
	}
	for _, n := range dead {
		if len(victims[n]) != 2 {
			t.Fatalf("pods on %s: %v, want 2 (pods by node: %v)", n, victims[n], victims)
		}
	}
	c.quotaMatchesPods(ctx, "after the rollout", map[corev1.ResourceName]string{corev1.ResourceRequestsCPU: "1", corev1.ResourcePods: "4"})

	// 3. Two healthy nodes join, managed by the first kwok.
	healthy := []string{"kwok-node-0", "kwok-node-1"}
	for _, n := range healthy {
		if _, err := cs.CoreV1().Nodes().Create(ctx, kwokNode(n), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c.nodesReady(ctx, healthy...)

	// 4. The doomed nodes' kwok dies. From here every pod change is recorded.
	hist := c.watchPods(ctx)
	doomed.kill()
	t.Logf("killed kwok-doomed (pid %d)", doomed.cmd.Process.Pid)

	// 5. Their Ready condition becomes Unknown, with the pressure conditions.
	until(ctx, t, "the dead nodes to be Ready=Unknown and tainted unreachable", c.listWatch(cs.CoreV1().RESTClient(), "nodes", "", fields.Everything()), &corev1.Node{},
		func(os []runtime.Object) bool {
			done := 0
			for _, o := range os {
				n := o.(*corev1.Node)
				if !slices.Contains(dead, n.Name) {
					continue
				}
				unknown := 0
				for _, cond := range n.Status.Conditions {
					switch cond.Type {
					case corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure:
						if cond.Status == corev1.ConditionUnknown && cond.Reason == "NodeStatusUnknown" && cond.Message == "Kubelet stopped posting node status." {
							unknown++
						}
					}
				}
				if unknown == 4 && hasTaint(n, corev1.TaintNodeUnreachable, corev1.TaintEffectNoSchedule) && hasTaint(n, corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute) {
					done++
				}
			}
			return done == len(dead)
		})
	for _, n := range healthy {
		if node, err := cs.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{}); err != nil || !nodeReady(node) || len(node.Spec.Taints) != 0 {
			t.Errorf("healthy node %s: %v ready %v taints %v", n, err, node != nil && nodeReady(node), node.Spec.Taints)
		}
	}
	out := c.must(ctx, "get", "nodes")
	for _, n := range dead {
		if !regexp.MustCompile(`(?m)^` + n + `\s+NotReady\s`).MatchString(out) {
			t.Errorf("kubectl get nodes: %s is not NotReady:\n%s", n, out)
		}
	}
	t.Logf("kubectl get nodes:\n%s", out)

	// 6. Their pods are marked not Ready, then deleted by the taint eviction controller:
	// Terminating, waiting for a confirmation their node will never send.
	var victimNames []string
	for _, n := range dead {
		victimNames = append(victimNames, victims[n]...)
	}
	until(ctx, t, "the dead nodes' pods to be terminating", c.listWatch(cs.CoreV1().RESTClient(), "pods", ns, fields.Everything()), &corev1.Pod{},
		func(os []runtime.Object) bool {
			n := 0
			for _, o := range os {
				if p := o.(*corev1.Pod); slices.Contains(victimNames, p.Name) && p.DeletionTimestamp != nil {
					n++
				}
			}
			return n == len(victimNames)
		})
	for _, name := range victimNames {
		c.event(ctx, name, "NodeNotReady", "Node is not ready")
		c.event(ctx, name, "TaintManagerEviction", "Marking for deletion Pod "+ns+"/"+name)
	}

	// 7. The ReplicaSet replaces them: two replacements fit the quota beside the four
	// terminating pods, the other two are refused until those go.
	c.untilQuotaRefused(ctx)
	c.replacementsRunning(ctx, victimNames, healthy, 2)
	c.quotaMatchesPods(ctx, "with the dead nodes' pods terminating", map[corev1.ResourceName]string{corev1.ResourceRequestsCPU: "1500m", corev1.ResourcePods: "6"})
	out = c.must(ctx, "get", "pods", "-n", ns, "-o", "wide")
	for _, n := range dead {
		for _, name := range victims[n] {
			if !regexp.MustCompile(`(?m)^` + name + `\s+\S+\s+Terminating\s+0\s+\S+\s+\S+\s+` + n + `\s`).MatchString(out) {
				t.Errorf("kubectl get pods -o wide: %s is not Terminating on %s:\n%s", name, n, out)
			}
		}
	}
	t.Logf("kubectl get pods -o wide:\n%s", out)

	// 8. Non-graceful node shutdown: the out-of-service taint lets pod GC force-delete the
	// first node's terminating pods; their credit admits the other two replacements.
	if out := c.must(ctx, "taint", "nodes", dead[0], corev1.TaintNodeOutOfService+"=nodeshutdown:NoExecute"); strings.TrimSpace(out) != "node/"+dead[0]+" tainted" {
		t.Errorf("kubectl taint: %q", out)
	}
	c.podsGone(ctx, victims[dead[0]])
	c.replacementsRunning(ctx, victimNames, healthy, 4)
	c.quotaMatchesPods(ctx, "after the out-of-service node's pods were removed", map[corev1.ResourceName]string{corev1.ResourceRequestsCPU: "1500m", corev1.ResourcePods: "6"})

	// 9. The second dead Node is deleted: pod GC removes its pods once it has been gone
	// for its quarantine, and the garbage collector its Lease.
	if out := c.must(ctx, "delete", "node", dead[1]); strings.TrimSpace(out) != `node "`+dead[1]+`" deleted` {
		t.Errorf("kubectl delete node: %q", out)
	}
	c.podsGone(ctx, victims[dead[1]])
	until(ctx, t, "the deleted node's Lease to be collected", c.listWatch(cs.CoordinationV1().RESTClient(), "leases", corev1.NamespaceNodeLease, fields.Everything()), &coordinationv1.Lease{},
		func(os []runtime.Object) bool {
			for _, o := range os {
				if asLease(o).Name == dead[1] {
					return false
				}
			}
			return true
		})
	c.replacementsRunning(ctx, victimNames, healthy, 4)
	c.quotaMatchesPods(ctx, "after the deleted node's pods were removed", map[corev1.ResourceName]string{corev1.ResourceRequestsCPU: "1", corev1.ResourcePods: "4"})
	c.must(ctx, "rollout", "status", "deployment/web", "-n", ns, "--timeout=2m")

	// 10. What each dead node's pods went through, in order.
	hist.stop()
	for _, name := range victims[dead[0]] {
		hist.check(t, name, "DeletionByTaintManager")
	}
	for _, name := range victims[dead[1]] {
		hist.check(t, name, "DeletionByPodGC")
	}

	// 11. The out-of-service node comes back: its kwok starts again, takes its Lease over
	// once it expired and reports it Ready; the unreachable taints go, and the operator
	// removes the out-of-service taint.
	c.extra = append(c.extra, c.startKWOK("kwok-doomed-again", "doomed"))
	until(ctx, t, dead[0]+" to be Ready with only the out-of-service taint", c.listWatch(cs.CoreV1().RESTClient(), "nodes", "", fields.OneTermEqualSelector("metadata.name", dead[0])), &corev1.Node{},
		func(os []runtime.Object) bool {
			if len(os) != 1 {
				return false
			}
			n := os[0].(*corev1.Node)
			return nodeReady(n) && len(n.Spec.Taints) == 1 && n.Spec.Taints[0].Key == corev1.TaintNodeOutOfService
		})
	if out := c.must(ctx, "taint", "nodes", dead[0], corev1.TaintNodeOutOfService+"-"); strings.TrimSpace(out) != "node/"+dead[0]+" untainted" {
		t.Errorf("kubectl taint ...-: %q", out)
	}
	c.quotaMatchesPods(ctx, "at the end", map[corev1.ResourceName]string{corev1.ResourceRequestsCPU: "1", corev1.ResourcePods: "4"})
	t.Logf("kubectl describe quota:\n%s", c.must(ctx, "describe", "quota", "compute", "-n", ns))
	c.alive()
	c.noRefusals()
	qw.stop()
	if v := qw.violations(); len(v) > 0 {
		t.Errorf("the quota exceeded hard:\n%s", strings.Join(v, "\n"))
	}
}

// sizedNode is a KWOK node of cpu CPUs managed by the kwok of annotation value.
func sizedNode(name, value, cpu string) *corev1.Node {
	n := kwokNode(name)
	n.Annotations["kwok.x-k8s.io/node"] = value
	n.Status.Capacity[corev1.ResourceCPU] = resource.MustParse(cpu)
	n.Status.Allocatable[corev1.ResourceCPU] = resource.MustParse(cpu)
	return n
}

func hasTaint(n *corev1.Node, key string, effect corev1.TaintEffect) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key && t.Effect == effect {
			return true
		}
	}
	return false
}

// nodesReady waits for the named nodes to be Ready.
func (c *cluster) nodesReady(ctx context.Context, names ...string) {
	c.t.Helper()
	until(ctx, c.t, fmt.Sprintf("nodes %v to be Ready", names), c.listWatch(c.client.CoreV1().RESTClient(), "nodes", "", fields.Everything()), &corev1.Node{},
		func(os []runtime.Object) bool {
			ready := 0
			for _, o := range os {
				if n := o.(*corev1.Node); slices.Contains(names, n.Name) && nodeReady(n) {
					ready++
				}
			}
			return ready == len(names)
		})
}

// replacementsRunning waits for want web pods other than old ones, not terminating, Running
// and Ready, every one bound to one of nodes by the scheduler.
func (c *cluster) replacementsRunning(ctx context.Context, old, nodes []string, want int) {
	c.t.Helper()
	objs := until(ctx, c.t, fmt.Sprintf("%d replacements to run", want), c.listWatch(c.client.CoreV1().RESTClient(), "pods", ns, fields.Everything()), &corev1.Pod{},
		func(os []runtime.Object) bool {
			n := 0
			for _, o := range os {
				if p := o.(*corev1.Pod); p.Labels["app"] == "web" && !slices.Contains(old, p.Name) && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && podReady(p) {
					n++
				}
			}
			return n == want
		})
	for _, o := range objs {
		p := o.(*corev1.Pod)
		if p.Labels["app"] != "web" || slices.Contains(old, p.Name) {
			continue
		}
		if !slices.Contains(nodes, p.Spec.NodeName) {
			c.t.Errorf("replacement %s on %q, want one of %v", p.Name, p.Spec.NodeName, nodes)
			continue
		}
		c.event(ctx, p.Name, "Scheduled", fmt.Sprintf("Successfully assigned %s/%s to %s", ns, p.Name, p.Spec.NodeName))
	}
}

// podsGone waits for the named pods to be removed.
func (c *cluster) podsGone(ctx context.Context, names []string) {
	c.t.Helper()
	until(ctx, c.t, fmt.Sprintf("pods %v to be removed", names), c.listWatch(c.client.CoreV1().RESTClient(), "pods", ns, fields.Everything()), &corev1.Pod{},
		func(os []runtime.Object) bool {
			for _, o := range os {
				if slices.Contains(names, o.(*corev1.Pod).Name) {
					return false
				}
			}
			return true
		})
}

// podHistory is every state of the namespace's pods a watch delivered, by pod name.
type podHistory struct {
	mu     sync.Mutex
	seen   map[string][]podState
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

type podState struct {
	typ watch.EventType
	pod *corev1.Pod
}

// watchPods records the namespace's pods from now on, until stopped.
func (c *cluster) watchPods(ctx context.Context) *podHistory {
	c.t.Helper()
	l, err := c.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	h := &podHistory{seen: map[string][]podState{}, cancel: cancel, done: make(chan struct{})}
	for i := range l.Items {
		h.seen[l.Items[i].Name] = []podState{{watch.Added, &l.Items[i]}}
	}
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, l.ResourceVersion, c.listWatch(c.client.CoreV1().RESTClient(), "pods", ns, fields.Everything()).(cache.WatcherWithContext))
	if err != nil {
		c.t.Fatal(err)
	}
	go func() {
		defer close(h.done)
		defer rw.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-rw.ResultChan():
				if !ok {
					return
				}
				p, ok := ev.Object.(*corev1.Pod)
				if !ok {
					h.mu.Lock()
					h.err = fmt.Errorf("pod watch: %v", ev.Object)
					h.mu.Unlock()
					return
				}
				h.mu.Lock()
				h.seen[p.Name] = append(h.seen[p.Name], podState{ev.Type, p})
				h.mu.Unlock()
			}
		}
	}()
	c.t.Cleanup(h.stop)
	return h
}

func (h *podHistory) stop() { h.cancel(); <-h.done }

// check asserts what pod name went through, in order: Ready and Running; Ready=False
// (its node not Ready); the DisruptionTarget condition of the taint eviction controller
// and, at the same time or later, a graceful deletion (30s) that leaves it Running and
// charged; Failed with the DisruptionTarget reason of what removed it (pod GC's
// DeletionByPodGC replaces the taint manager's); then deleted.
func (h *podHistory) check(t *testing.T, name, lastReason string) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		t.Fatal(h.err)
	}
	var steps []string
	step := func(s string) {
		if len(steps) == 0 || steps[len(steps)-1] != s {
			steps = append(steps, s)
		}
	}
	for _, s := range h.seen[name] {
		p := s.pod
		var cond *corev1.PodCondition
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == corev1.DisruptionTarget {
				cond = &p.Status.Conditions[i]
			}
		}
		switch {
		case s.typ == watch.Deleted:
			step("deleted")
		case p.Status.Phase == corev1.PodFailed && cond != nil && cond.Reason == lastReason && p.DeletionTimestamp != nil:
			step("Failed " + cond.Reason)
		case p.Status.Phase == corev1.PodFailed:
			step(fmt.Sprintf("Failed (DisruptionTarget %v, terminating %v)", cond, p.DeletionTimestamp != nil))
		case p.DeletionTimestamp != nil && cond != nil && cond.Reason == "DeletionByTaintManager" && cond.Message == "Taint manager: deleting due to NoExecute taint":
			step(fmt.Sprintf("terminating %ds DeletionByTaintManager", ptr.Deref(p.DeletionGracePeriodSeconds, -1)))
		case cond != nil && cond.Reason == "DeletionByTaintManager":
			step("DeletionByTaintManager")
		case !podReady(p) && p.Status.Phase == corev1.PodRunning:
			step("not Ready")
		case podReady(p) && p.Status.Phase == corev1.PodRunning:
			step("Ready")
		default:
			step(fmt.Sprintf("phase %s ready %v", p.Status.Phase, podReady(p)))
		}
	}
	want := []string{"Ready", "not Ready", "DeletionByTaintManager", "terminating 30s DeletionByTaintManager", "Failed " + lastReason, "deleted"}
	// The condition and the deletion may be seen as one state.
	short := slices.Delete(slices.Clone(want), 2, 3)
	if !slices.Equal(steps, want) && !slices.Equal(steps, short) {
		t.Errorf("pod %s went through %q; want %q", name, steps, want)
	} else {
		t.Logf("pod %s: %s", name, strings.Join(steps, " → "))
	}
}
