package cluster

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"
)

const (
	ns    = "shop"
	nodes = 3
)

// TestSchedulerAndKWOK runs a Deployment and a Job under a compute ResourceQuota on KWOK
// nodes, scheduled by the real kube-scheduler, and follows the quota through the pods'
// lifecycle: charged when created, still charged while Pending, credited exactly when a
// Job's pods succeed or a deleted pod's node confirms its deletion, never exceeded.
//
// A deleted pod terminates through its node's confirmation (kwok's pod-delete stage).
// Node failure is TestNodeDeath's, eviction by kubectl drain TestDrainWithPodDisruptionBudget's.
func TestSchedulerAndKWOK(t *testing.T) {
	requireKubectl(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	c := startCluster(ctx, t)
	cs := c.client

	// 1. The scheduler holds its Lease.
	lease := until(ctx, t, "kube-scheduler to hold kube-system/kube-scheduler",
		c.listWatch(cs.CoordinationV1().RESTClient(), "leases", "kube-system", fields.OneTermEqualSelector("metadata.name", "kube-scheduler")), &coordinationv1.Lease{},
		func(ls []runtime.Object) bool {
			return len(ls) == 1 && ptr.Deref(asLease(ls[0]).Spec.HolderIdentity, "") != ""
		})
	t.Logf("kube-scheduler leader: %s", *asLease(lease[0]).Spec.HolderIdentity)

	// 2. KWOK nodes, Ready once kwok's node stages ran.
	var names []string
	for i := range nodes {
		name := fmt.Sprintf("kwok-node-%d", i)
		names = append(names, name)
		if _, err := cs.CoreV1().Nodes().Create(ctx, kwokNode(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	until(ctx, t, "the KWOK nodes to be Ready", c.listWatch(cs.CoreV1().RESTClient(), "nodes", "", fields.Everything()), &corev1.Node{},
		func(os []runtime.Object) bool {
			ready := 0
			for _, o := range os {
				if nodeReady(o.(*corev1.Node)) {
					ready++
				}
			}
			return ready == nodes
		})
	out := c.must(ctx, "get", "nodes")
	for _, n := range names {
		if !regexp.MustCompile(`(?m)^` + n + `\s+Ready\s`).MatchString(out) {
			t.Errorf("kubectl get nodes: no Ready line for %s:\n%s", n, out)
		}
	}
	t.Logf("kubectl get nodes:\n%s", out)

	// 3. A namespace with a compute quota, watched: no state it ever shows exceeds hard.
	qw := c.computeQuota(ctx, ns, "4")

	// 4. A Deployment of 4 × 250m rolls out: scheduled onto the nodes, Running and Ready.
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](4),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: podTemplate(map[string]string{"app": "web"}, "250m", "256Mi", corev1.RestartPolicyAlways),
	}}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out = c.must(ctx, "rollout", "status", "deployment/web", "-n", ns, "--timeout=5m")
	if !strings.Contains(out, `deployment "web" successfully rolled out`) {
		t.Errorf("kubectl rollout status: %s", out)
	}
	web := c.pods(ctx, "app=web")
	if len(web) != 4 {
		t.Fatalf("web pods: %d, want 4", len(web))
	}
	for _, p := range web {
		if !slices.Contains(names, p.Spec.NodeName) || p.Status.Phase != corev1.PodRunning || !podReady(&p) || p.Status.PodIP == "" {
			t.Errorf("pod %s: node %q phase %s ready %v ip %q", p.Name, p.Spec.NodeName, p.Status.Phase, podReady(&p), p.Status.PodIP)
		}
	}
	// Bound by the scheduler through pods/binding: its Scheduled events and the server's
	// count of pods/binding creates.
	for _, p := range web {
		c.event(ctx, p.Name, "Scheduled", fmt.Sprintf("Successfully assigned %s/%s to %s", ns, p.Name, p.Spec.NodeName))
	}
	metrics := c.must(ctx, "get", "--raw", "/metrics")
	if !regexp.MustCompile(`(?m)^apiserver_request_total\{code="201",[^}]*resource="pods",[^}]*subresource="binding",verb="POST",[^}]*\} [1-9]`).MatchString(metrics) {
		t.Errorf("no pods/binding create counted in /metrics")
	}
	out = c.must(ctx, "get", "pods", "-n", ns, "-o", "wide")
	for _, p := range web {
		if !regexp.MustCompile(`(?m)^` + p.Name + `\s+1/1\s+Running\s+0\s+\S+\s+` + regexp.QuoteMeta(p.Status.PodIP) + `\s+` + p.Spec.NodeName + `\s`).MatchString(out) {
			t.Errorf("kubectl get pods -o wide: no line showing %s Running on %s:\n%s", p.Name, p.Spec.NodeName, out)
		}
	}
	t.Logf("kubectl get pods -o wide:\n%s", out)
	c.quotaMatchesPods(ctx, "after the rollout", map[corev1.ResourceName]string{corev1.ResourceRequestsCPU: "1", corev1.ResourcePods: "4"})

	// 5. A Job of 3 × 100m: kwok's pod-complete stage makes its pods succeed, the Job
	// completes, and the quota's used drops by exactly their requests.
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "batch"}, Spec: batchv1.JobSpec{
		Completions: ptr.To[int32](3), Parallelism: ptr.To[int32](3),
		Template: podTemplate(nil, "100m", "64Mi", corev1.RestartPolicyNever),
	}}
	if _, err := cs.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	until(ctx, t, "Job batch to complete", c.listWatch(cs.BatchV1().RESTClient(), "jobs", ns, fields.OneTermEqualSelector("metadata.name", "batch")), &batchv1.Job{},
		func(os []runtime.Object) bool {
			if len(os) != 1 {
				return false
			}
			for _, cond := range os[0].(*batchv1.Job).Status.Conditions {
				if cond.Type == batchv1.JobComplete && cond.Status == corev1.ConditionTrue {
					return true
				}
			}
			return false
		})
	jobPods := c.pods(ctx, "batch.kubernetes.io/job-name=batch")
	succeeded := 0
	for _, p := range jobPods {
		if p.Status.Phase == corev1.PodSucceeded && slices.Contains(names, p.Spec.NodeName) {
			succeeded++
		}
	}
	if succeeded != 3 {
		t.Errorf("job pods succeeded on a node: %d of %d, want 3", succeeded, len(jobPods))
	}
	if peak := qw.peak(corev1.ResourceRequestsCPU); peak.Cmp(resource.MustParse("1100m")) < 0 {
		t.Errorf("requests.cpu never counted a running job pod: peak %s", peak.String())
	}
	c.quotaMatchesPods(ctx, "after the Job's pods succeeded", map[corev1.ResourceName]string{corev1.ResourceRequestsCPU: "1", corev1.ResourcePods: "4"})

	// 5b. An Indexed Job with a success policy: it completes by the policy (upstream's
	// reason and message), and whatever of it was still running is deleted and credited.
	indexed := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "indexed"}, Spec: batchv1.JobSpec{
		Completions: ptr.To[int32](3), Parallelism: ptr.To[int32](3), CompletionMode: ptr.To(batchv1.IndexedCompletion),
		SuccessPolicy: &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](2)}}},
		Template:      podTemplate(nil, "100m", "64Mi", corev1.RestartPolicyNever),
	}}
	if _, err := cs.BatchV1().Jobs(ns).Create(ctx, indexed, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var done *batchv1.JobCondition
	until(ctx, t, "Job indexed to complete", c.listWatch(cs.BatchV1().RESTClient(), "jobs", ns, fields.OneTermEqualSelector("metadata.name", "indexed")), &batchv1.Job{},
		func(os []runtime.Object) bool {
			if len(os) != 1 {
				return false
			}
			for _, cond := range os[0].(*batchv1.Job).Status.Conditions {
				if cond.Type == batchv1.JobComplete && cond.Status == corev1.ConditionTrue {
					done = &cond
					return true
				}
			}
			return false
		})
	if done.Reason != batchv1.JobReasonSuccessPolicy || done.Message != "Matched rules at index 0" {
		t.Errorf("Job indexed: Complete with %q %q, want SuccessPolicy, Matched rules at index 0", done.Reason, done.Message)
	}
	c.quotaMatchesPods(ctx, "after the indexed Job completed", map[corev1.ResourceName]string{corev1.ResourceRequestsCPU: "1", corev1.ResourcePods: "4"})

	// 6. A pod that fits the quota but no node stays Pending, charged, with the scheduler's
	// FailedScheduling event.
	big := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Spec: podTemplate(nil, "3", "1Gi", corev1.RestartPolicyAlways).Spec}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, big, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	until(ctx, t, "pod big to be Unschedulable", c.listWatch(cs.CoreV1().RESTClient(), "pods", ns, fields.OneTermEqualSelector("metadata.name", "big")), &corev1.Pod{},
		func(os []runtime.Object) bool {
			if len(os) != 1 {
				return false
			}
			for _, cond := range os[0].(*corev1.Pod).Status.Conditions {
				if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
					return true
				}
			}
			return false
		})
	c.event(ctx, "big", "FailedScheduling", fmt.Sprintf("0/%d nodes are available: %d Insufficient cpu.", nodes, nodes))
	if p, err := cs.CoreV1().Pods(ns).Get(ctx, "big", metav1.GetOptions{}); err != nil || p.Spec.NodeName != "" || p.Status.Phase != corev1.PodPending {
		t.Errorf("pod big: %v node %q phase %s; want Pending on no node", err, p.Spec.NodeName, p.Status.Phase)
	}
	c.quotaMatchesPods(ctx, "with big Pending", map[corev1.ResourceName]string{corev1.ResourceRequestsCPU: "4", corev1.ResourcePods: "5"})

	// 7. The quota is full: scaling the Deployment up is refused pod by pod
	// (the ReplicaSet's ReplicaFailure), and nothing is charged beyond hard.
	if _, err := cs.AppsV1().Deployments(ns).Patch(ctx, "web", "application/merge-patch+json", []byte(`{"spec":{"replicas":6}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	c.untilQuotaRefused(ctx)
	c.quotaMatchesPods(ctx, "after the refused scale-up", map[corev1.ResourceName]string{corev1.ResourceRequestsCPU: "4", corev1.ResourcePods: "5"})
	out = c.must(ctx, "get", "pods", "-n", ns, "-o", "wide")
	if !regexp.MustCompile(`(?m)^big\s+0/1\s+Pending\s+0\s+\S+\s+<none>\s+<none>\s`).MatchString(out) {
		t.Errorf("kubectl get pods -o wide: big is not Pending on no node:\n%s", out)
	}

	// 8. kubectl delete pod waits for the node: the pod is marked terminating with its
	// grace period, kwok's pod-delete stage confirms with a zero-grace delete, and the
	// ReplicaSet's replacement takes the freed quota.
	victim := c.deleteThroughNode(ctx, web[0].Name, 30)
	until(ctx, t, "the web pods to be replaced up to the quota", c.listWatch(cs.CoreV1().RESTClient(), "pods", ns, fields.Everything()), &corev1.Pod{},
		func(os []runtime.Object) bool {
			running := 0
			for _, o := range os {
				if p := o.(*corev1.Pod); p.Labels["app"] == "web" && p.UID != victim.UID && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
					running++
				}
			}
			return running == 4
		})
	c.quotaMatchesPods(ctx, "after the deleted pod's replacement", map[corev1.ResourceName]string{corev1.ResourceRequestsCPU: "4", corev1.ResourcePods: "5"})
	t.Logf("kubectl describe quota:\n%s", c.must(ctx, "describe", "quota", "compute", "-n", ns))
	c.alive()
	c.noRefusals()
	qw.stop()
	if v := qw.violations(); len(v) > 0 {
		t.Errorf("the quota exceeded hard:\n%s", strings.Join(v, "\n"))
	}
}

func kwokNode(name string) *corev1.Node {
	res := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi"),
		corev1.ResourcePods: resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels: map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
				"type": "kwok", "node-role.kubernetes.io/agent": ""},
		},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res},
	}
}

func podTemplate(labels map[string]string, cpu, mem string, restart corev1.RestartPolicy) corev1.PodTemplateSpec {
	double := func(s string) resource.Quantity {
		q := resource.MustParse(s)
		q.Add(q)
		return q
	}
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
		RestartPolicy: restart,
		Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: double(cpu), corev1.ResourceMemory: double(mem)},
		}}},
	}}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func asLease(o runtime.Object) *coordinationv1.Lease { return o.(*coordinationv1.Lease) }

// listWatch lists and watches resource in namespace (all: "") with a field selector.
func (c *cluster) listWatch(rc rest.Interface, resource, namespace string, sel fields.Selector) cache.ListerWatcher {
	return cache.NewListWatchFromClient(rc, resource, namespace, sel)
}

// until waits, on a list and watch, for cond to hold of the objects, and returns them.
func until(ctx context.Context, t *testing.T, what string, lw cache.ListerWatcher, obj runtime.Object, cond func([]runtime.Object) bool) []runtime.Object {
	t.Helper()
	var store cache.Store
	var last []runtime.Object
	check := func() (bool, error) {
		last = nil
		for _, o := range store.List() {
			last = append(last, o.(runtime.Object))
		}
		return cond(last), nil
	}
	_, err := watchtools.UntilWithSync(ctx, lw, obj, func(s cache.Store) (bool, error) { store = s; return check() },
		func(watch.Event) (bool, error) { return check() })
	if err != nil {
		t.Fatalf("waiting for %s: %v (last seen: %d objects)", what, err, len(last))
	}
	return last
}

// pods lists the namespace's pods with a label selector.
func (c *cluster) pods(ctx context.Context, sel string) []corev1.Pod {
	c.t.Helper()
	l, err := c.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		c.t.Fatal(err)
	}
	return l.Items
}

// event waits for an event about pod name with reason whose message starts with prefix.
func (c *cluster) event(ctx context.Context, name, reason, prefix string) {
	c.t.Helper()
	sel := fields.SelectorFromSet(fields.Set{"involvedObject.name": name, "involvedObject.kind": "Pod"})
	until(ctx, c.t, fmt.Sprintf("a %s event for %s (%q)", reason, name, prefix), c.listWatch(c.client.CoreV1().RESTClient(), "events", ns, sel), &corev1.Event{},
		func(os []runtime.Object) bool {
			for _, o := range os {
				if e := o.(*corev1.Event); e.Reason == reason && strings.HasPrefix(e.Message, prefix) {
					if reason != "Scheduled" {
						c.t.Logf("event %s %s (%s): %s", reason, name, e.Source.Component+e.ReportingController, e.Message)
					}
					return true
				}
			}
			return false
		})
}

// quotaMatchesPods checks the quota's used against the namespace's pods, key by key and
// exactly: every pod not Succeeded or Failed counts its containers' requests and limits and
// one pod. want pins some of the values.
func (c *cluster) quotaMatchesPods(ctx context.Context, when string, want map[corev1.ResourceName]string) {
	t := c.t
	t.Helper()
	q, err := c.client.CoreV1().ResourceQuotas(ns).Get(ctx, "compute", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods := c.pods(ctx, "")
	exp := corev1.ResourceList{}
	for k := range q.Spec.Hard {
		exp[k] = resource.Quantity{}
	}
	add := func(k corev1.ResourceName, v resource.Quantity) {
		s := exp[k]
		s.Add(v)
		exp[k] = s
	}
	for _, p := range pods {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		add(corev1.ResourcePods, resource.MustParse("1"))
		for _, ctr := range p.Spec.Containers {
			add(corev1.ResourceRequestsCPU, ctr.Resources.Requests[corev1.ResourceCPU])
			add(corev1.ResourceRequestsMemory, ctr.Resources.Requests[corev1.ResourceMemory])
			add(corev1.ResourceLimitsCPU, ctr.Resources.Limits[corev1.ResourceCPU])
			add(corev1.ResourceLimitsMemory, ctr.Resources.Limits[corev1.ResourceMemory])
		}
	}
	for k, e := range exp {
		got, ok := q.Status.Used[k]
		if !ok || got.Cmp(e) != 0 {
			t.Errorf("%s: quota used %s = %s, want %s (from %d pods)", when, k, got.String(), e.String(), len(pods))
		}
		if w, ok := want[k]; ok && e.Cmp(resource.MustParse(w)) != 0 {
			t.Errorf("%s: pods count %s = %s, want %s", when, k, e.String(), w)
		}
	}
	if len(q.Status.Used) != len(exp) {
		t.Errorf("%s: quota used has %d resources, want %d: %v", when, len(q.Status.Used), len(exp), q.Status.Used)
	}
}

// quotaWatch records every state of the namespace's quotas a watch shows.
type quotaWatch struct {
	mu     sync.Mutex
	bad    []string
	max    corev1.ResourceList
	cancel context.CancelFunc
	done   chan struct{}
}

// untilQuotaRefused waits until a ReplicaSet of the test's namespace reports its pods
// refused by the quota "compute" (its ReplicaFailure condition).
func (c *cluster) untilQuotaRefused(ctx context.Context) {
	c.t.Helper()
	until(ctx, c.t, "the web ReplicaSet to report exceeded quota", c.listWatch(c.client.AppsV1().RESTClient(), "replicasets", ns, fields.Everything()), &appsv1.ReplicaSet{},
		func(os []runtime.Object) bool {
			for _, o := range os {
				for _, cond := range o.(*appsv1.ReplicaSet).Status.Conditions {
					if cond.Type == appsv1.ReplicaSetReplicaFailure && cond.Status == corev1.ConditionTrue && strings.Contains(cond.Message, "exceeded quota: compute") {
						return true
					}
				}
			}
			return false
		})
}

// computeQuota creates the namespace ns with a ResourceQuota "compute" whose requests.cpu
// is cpu (requests.memory 8Gi, limits 8 CPUs and 16Gi, 10 pods), and watches it.
func (c *cluster) computeQuota(ctx context.Context, ns, cpu string) *quotaWatch {
	c.t.Helper()
	if _, err := c.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		c.t.Fatal(err)
	}
	hard := corev1.ResourceList{
		corev1.ResourceRequestsCPU: resource.MustParse(cpu), corev1.ResourceRequestsMemory: resource.MustParse("8Gi"),
		corev1.ResourceLimitsCPU: resource.MustParse("8"), corev1.ResourceLimitsMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods: resource.MustParse("10"),
	}
	if _, err := c.client.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "compute"}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}, metav1.CreateOptions{}); err != nil {
		c.t.Fatal(err)
	}
	return c.watchQuota(ctx)
}

// watchQuota watches the namespace's quotas until stopped, recording any used above hard
// and the peak of each resource.
func (c *cluster) watchQuota(ctx context.Context) *quotaWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &quotaWatch{max: corev1.ResourceList{}, cancel: cancel, done: make(chan struct{})}
	see := func(o interface{}) {
		q, ok := o.(*corev1.ResourceQuota)
		if !ok {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		for k, u := range q.Status.Used {
			if h, ok := q.Spec.Hard[k]; ok && u.Cmp(h) > 0 {
				w.bad = append(w.bad, fmt.Sprintf("%s rv %s: used %s = %s > hard %s", q.Name, q.ResourceVersion, k, u.String(), h.String()))
			}
			if m, ok := w.max[k]; !ok || u.Cmp(m) > 0 {
				w.max[k] = u.DeepCopy()
			}
		}
	}
	inf := cache.NewSharedInformer(c.listWatch(c.client.CoreV1().RESTClient(), "resourcequotas", ns, fields.Everything()), &corev1.ResourceQuota{}, 0)
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: see, UpdateFunc: func(_, o interface{}) { see(o) }})
	go func() { inf.Run(ctx.Done()); close(w.done) }()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		c.t.Fatal("quota informer did not sync")
	}
	c.t.Cleanup(w.stop)
	return w
}

func (w *quotaWatch) stop() { w.cancel(); <-w.done }

func (w *quotaWatch) violations() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.bad)
}

func (w *quotaWatch) peak(k corev1.ResourceName) resource.Quantity {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.max[k].DeepCopy()
}

// noRefusals fails the test when a component's log shows the server refusing what it asked
// for: an API not served (the scheduler once waited forever on DeviceTaintRules), a field
// selector not supported (a kubelet's Services informer), a request forbidden.
func (c *cluster) noRefusals() {
	c.t.Helper()
	for _, p := range append([]*proc{c.scheduler, c.kwok}, c.extra...) {
		b, err := os.ReadFile(p.log)
		if err != nil {
			c.t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			for _, bad := range []string{"the server could not find the requested resource", "field label not supported", "is forbidden", "handlers are not fully synchronized"} {
				if strings.Contains(l, bad) {
					c.t.Errorf("%s: %s", p.name, l)
				}
			}
		}
	}
}

// deleteThroughNode deletes pod name with the real kubectl, which waits for it to be gone,
// and checks on a watch what the deletion went through: marked terminating with grace
// seconds (a pod bound to a node), then removed once its node confirmed. It returns the pod
// as it was before.
func (c *cluster) deleteThroughNode(ctx context.Context, name string, grace int64) *corev1.Pod {
	t := c.t
	t.Helper()
	pod, err := c.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: pod.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	c.must(ctx, "delete", "pod", name, "-n", ns, "--timeout=2m")
	var seen []string
	for ev := range w.ResultChan() {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok {
			t.Fatalf("watching %s: %v", name, ev.Object)
		}
		if ev.Type == watch.Deleted {
			seen = append(seen, "deleted")
			break
		}
		if p.DeletionTimestamp != nil {
			seen = append(seen, fmt.Sprintf("terminating (grace %ds)", ptr.Deref(p.DeletionGracePeriodSeconds, -1)))
		}
	}
	want := fmt.Sprintf("terminating (grace %ds)", grace)
	if len(seen) < 2 || seen[0] != want || seen[len(seen)-1] != "deleted" {
		t.Errorf("pod %s went through %v; want %s, then deleted", name, seen, want)
	}
	t.Logf("kubectl delete pod %s on %s: %v", name, pod.Spec.NodeName, seen)
	return pod
}
