package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
)

// nlWatch lists, then watches, until cond holds for the objects seen (by name), failing
// the test after a deadline that only bounds a broken controller.
func nlWatch[T runtime.Object](t *testing.T, what string, list func(ctx context.Context) ([]T, string, error),
	watchFrom func(ctx context.Context, rv string) (watch.Interface, error), name func(T) string, cond func(map[string]T) bool) map[string]T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for {
		items, rv, err := list(ctx)
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		seen := map[string]T{}
		for _, it := range items {
			seen[name(it)] = it
		}
		if cond(seen) {
			return seen
		}
		w, err := watchFrom(ctx, rv)
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		for ev := range w.ResultChan() {
			obj, ok := ev.Object.(T)
			if !ok {
				break // an error event: list again
			}
			switch ev.Type {
			case watch.Deleted:
				delete(seen, name(obj))
			case watch.Added, watch.Modified:
				seen[name(obj)] = obj
			}
			if cond(seen) {
				w.Stop()
				return seen
			}
		}
		w.Stop()
		if ctx.Err() != nil {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// nlPods waits until cond holds for the pods of ns.
func nlPods(t *testing.T, c kubernetes.Interface, ns, what string, cond func(map[string]*corev1.Pod) bool) map[string]*corev1.Pod {
	t.Helper()
	return nlWatch(t, what, func(ctx context.Context) ([]*corev1.Pod, string, error) {
		l, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, "", err
		}
		out := make([]*corev1.Pod, 0, len(l.Items))
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
		return out, l.ResourceVersion, nil
	}, func(ctx context.Context, rv string) (watch.Interface, error) {
		return c.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	}, func(p *corev1.Pod) string { return p.Name }, cond)
}

// nlNode waits until cond holds for the node called name.
func nlNode(t *testing.T, c kubernetes.Interface, name, what string, cond func(*corev1.Node) bool) *corev1.Node {
	t.Helper()
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	got := nlWatch(t, what, func(ctx context.Context) ([]*corev1.Node, string, error) {
		l, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			return nil, "", err
		}
		out := make([]*corev1.Node, 0, len(l.Items))
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
		return out, l.ResourceVersion, nil
	}, func(ctx context.Context, rv string) (watch.Interface, error) {
		return c.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: rv})
	}, func(n *corev1.Node) string { return n.Name }, func(m map[string]*corev1.Node) bool { return m[name] != nil && cond(m[name]) })
	return got[name]
}

// nlQuota waits until the quota's status.used is exactly want (on the resources named).
func nlQuota(t *testing.T, c kubernetes.Interface, ns, name string, want map[string]string) {
	t.Helper()
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	nlWatch(t, fmt.Sprintf("quota %s used %v", name, want), func(ctx context.Context) ([]*corev1.ResourceQuota, string, error) {
		l, err := c.CoreV1().ResourceQuotas(ns).List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			return nil, "", err
		}
		out := make([]*corev1.ResourceQuota, 0, len(l.Items))
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
		return out, l.ResourceVersion, nil
	}, func(ctx context.Context, rv string) (watch.Interface, error) {
		return c.CoreV1().ResourceQuotas(ns).Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: rv})
	}, func(q *corev1.ResourceQuota) string { return q.Name }, func(m map[string]*corev1.ResourceQuota) bool {
		q := m[name]
		if q == nil {
			return false
		}
		for k, v := range want {
			got, ok := q.Status.Used[corev1.ResourceName(k)]
			if !ok || got.Cmp(resource.MustParse(v)) != 0 {
				return false
			}
		}
		return true
	})
}

// nlKubelet registers a node as a kubelet would: the Node, Ready now, and its Lease.
func nlKubelet(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	ctx := ctxT(t)
	if _, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nlPostReady(t, c, name)
	now := metav1.NewMicroTime(time.Now())
	secs := int32(40)
	if _, err := c.CoordinationV1().Leases(corev1.NamespaceNodeLease).Create(ctx, &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: coordv1.LeaseSpec{HolderIdentity: &name, LeaseDurationSeconds: &secs, RenewTime: &now}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// nlPostReady posts the node's Ready condition, heartbeat now.
func nlPostReady(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	ctx := ctxT(t)
	n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now}}
	if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// nlHeartbeat renews the node's Lease, as its kubelet does, until ctx ends.
func nlHeartbeat(ctx context.Context, c kubernetes.Interface, name string, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		l, err := c.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			continue
		}
		now := metav1.NewMicroTime(time.Now())
		l.Spec.RenewTime = &now
		_, _ = c.CoordinationV1().Leases(corev1.NamespaceNodeLease).Update(ctx, l, metav1.UpdateOptions{})
	}
}

// nlRunningPod creates a pod bound to node, then reports it Running and Ready with ip.
func nlRunningPod(t *testing.T, c kubernetes.Interface, ns, name, node, ip string, tols []corev1.Toleration, labels map[string]string) {
	t.Helper()
	ctx := ctxT(t)
	zero := int64(0)
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.PodSpec{
		NodeName: node, Tolerations: tols, TerminationGracePeriodSeconds: &zero,
		Containers: []corev1.Container{{Name: "c", Image: "nginx",
			Ports:     []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}}
	p, err := c.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nlPodStatus(t, c, p, ip, corev1.ConditionTrue)
}

// nlPodStatus reports the pod Running with ip and its Ready condition as given.
func nlPodStatus(t *testing.T, c kubernetes.Interface, p *corev1.Pod, ip string, ready corev1.ConditionStatus) {
	t.Helper()
	now := metav1.Now()
	p.Status.Phase = corev1.PodRunning
	p.Status.PodIP, p.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready, LastTransitionTime: now}}
	if _, err := c.CoreV1().Pods(p.Namespace).UpdateStatus(ctxT(t), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func nlSeconds(s int64) *int64 { return &s }

// TestNodeLifecycleEviction: a node that stops heartbeating goes Ready=Unknown and is
// tainted unreachable (NoSchedule and NoExecute), its pods are marked not Ready, and each
// is evicted once its toleration runs out (at once, after tolerationSeconds, never), the
// quota's used falling with each pod exactly; a node that heartbeats is left alone, and
// the dead node loses its taints when it reports again.
func TestNodeLifecycleEviction(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, func(c *server.Config) {
		c.NodeMonitorPeriod = 100 * time.Millisecond
		c.NodeMonitorGracePeriod = 2 * time.Second
		c.NodeStartupGracePeriod = 2 * time.Second
	})
	c := s.Client
	ns := "nodelife"
	mkNamespace(t, s, ns)
	mkQuota(t, s, ns, "compute", map[string]string{"pods": "10", "requests.cpu": "2"})
	nlKubelet(t, c, "alive")
	nlKubelet(t, c, "dead")
	hb, stop := context.WithCancel(context.Background())
	defer stop()
	go nlHeartbeat(hb, c, "alive", 200*time.Millisecond)

	unreachable := func(secs *int64) []corev1.Toleration {
		return []corev1.Toleration{{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secs}}
	}
	nlRunningPod(t, c, ns, "healthy", "alive", "10.0.0.1", nil, nil)
	nlRunningPod(t, c, ns, "fast", "dead", "10.0.1.1", unreachable(nlSeconds(1)), nil)
	nlRunningPod(t, c, ns, "later", "dead", "10.0.1.2", unreachable(nil), nil)
	nlRunningPod(t, c, ns, "forever", "dead", "10.0.1.3", unreachable(nil), nil)
	nlQuota(t, c, ns, "compute", map[string]string{"pods": "4", "requests.cpu": "400m"})

	// 1. The dead node's lease and status go stale: Unknown, tainted unreachable.
	n := nlNode(t, c, "dead", "dead node tainted unreachable:NoExecute", func(n *corev1.Node) bool {
		for _, tn := range n.Spec.Taints {
			if tn.Key == corev1.TaintNodeUnreachable && tn.Effect == corev1.TaintEffectNoExecute {
				return true
			}
		}
		return false
	})
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady && (cond.Status != corev1.ConditionUnknown || cond.Reason != "NodeStatusUnknown" || cond.Message != "Kubelet stopped posting node status.") {
			t.Errorf("dead node Ready %+v", cond)
		}
	}
	// 2. The pod without enough toleration is evicted; the others on the node are not
	// Ready; the quota credits exactly one pod.
	pods := nlPods(t, c, ns, "fast evicted, the dead node's pods not Ready", func(m map[string]*corev1.Pod) bool {
		if m["fast"] != nil {
			return false
		}
		for _, name := range []string{"later", "forever"} {
			if m[name] == nil || podReadyStatus(m[name]) != corev1.ConditionFalse {
				return false
			}
		}
		return true
	})
	if podReadyStatus(pods["healthy"]) != corev1.ConditionTrue {
		t.Errorf("healthy pod on the live node: Ready %s", podReadyStatus(pods["healthy"]))
	}
	nlQuota(t, c, ns, "compute", map[string]string{"pods": "3", "requests.cpu": "300m"})
	if a := nlNode(t, c, "alive", "alive node", func(*corev1.Node) bool { return true }); len(a.Spec.Taints) != 0 {
		t.Errorf("alive node tainted: %+v", a.Spec.Taints)
	}

	// 3. "later" gets a toleration time: it is evicted after it, "forever" stays.
	later := pods["later"]
	later.Spec.Tolerations = unreachable(nlSeconds(1))
	if _, err := c.CoreV1().Pods(ns).Update(ctxT(t), later, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods = nlPods(t, c, ns, "later evicted", func(m map[string]*corev1.Pod) bool { return m["later"] == nil })
	if pods["forever"] == nil || pods["healthy"] == nil {
		t.Fatalf("pods left: %v", pods)
	}
	nlQuota(t, c, ns, "compute", map[string]string{"pods": "2", "requests.cpu": "200m"})

	// 4. The dead node reports again: its taints go.
	nlPostReady(t, c, "dead")
	go nlHeartbeat(hb, c, "dead", 200*time.Millisecond)
	nlNode(t, c, "dead", "dead node untainted", func(n *corev1.Node) bool { return len(n.Spec.Taints) == 0 })
	nlQuota(t, c, ns, "compute", map[string]string{"pods": "2", "requests.cpu": "200m"})
}

func podReadyStatus(p *corev1.Pod) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status
		}
	}
	return ""
}

// TestEndpointSliceFollowsReadiness: a Service's EndpointSlice and Endpoints list a
// selected pod not ready, then ready once it reports Ready, on its named target port.
func TestEndpointSliceFollowsReadiness(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	c := s.Client
	ns := "endpoints"
	mkNamespace(t, s, ns)
	nlKubelet(t, c, "ep-node")
	if _, err := c.CoreV1().Services(ns).Create(ctxT(t), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nlRunningPod(t, c, ns, "web-1", "ep-node", "10.0.2.1", nil, map[string]string{"app": "web"})
	p, err := c.CoreV1().Pods(ns).Get(ctxT(t), "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nlPodStatus(t, c, p, "10.0.2.1", corev1.ConditionFalse)

	slice := func(ready bool) func(map[string]*discovery.EndpointSlice) bool {
		return func(m map[string]*discovery.EndpointSlice) bool {
			for _, sl := range m {
				for _, ep := range sl.Endpoints {
					if len(ep.Addresses) == 1 && ep.Addresses[0] == "10.0.2.1" && ep.Conditions.Ready != nil && *ep.Conditions.Ready == ready &&
						len(sl.Ports) == 1 && *sl.Ports[0].Port == 8080 && *sl.Ports[0].Name == "http" {
						return true
					}
				}
			}
			return false
		}
	}
	waitSlice := func(what string, cond func(map[string]*discovery.EndpointSlice) bool) map[string]*discovery.EndpointSlice {
		sel := discovery.LabelServiceName + "=web"
		return nlWatch(t, what, func(ctx context.Context) ([]*discovery.EndpointSlice, string, error) {
			l, err := c.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
			if err != nil {
				return nil, "", err
			}
			out := make([]*discovery.EndpointSlice, 0, len(l.Items))
			for i := range l.Items {
				out = append(out, &l.Items[i])
			}
			return out, l.ResourceVersion, nil
		}, func(ctx context.Context, rv string) (watch.Interface, error) {
			return c.DiscoveryV1().EndpointSlices(ns).Watch(ctx, metav1.ListOptions{LabelSelector: sel, ResourceVersion: rv})
		}, func(s *discovery.EndpointSlice) string { return s.Name }, cond)
	}
	waitSlice("the pod in the slice, not ready", slice(false))

	p, err = c.CoreV1().Pods(ns).Get(ctxT(t), "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nlPodStatus(t, c, p, "10.0.2.1", corev1.ConditionTrue)
	slices := waitSlice("the pod in the slice, ready", slice(true))
	for _, sl := range slices {
		if sl.Labels[discovery.LabelManagedBy] != "endpointslice-controller.k8s.io" || len(sl.OwnerReferences) != 1 || sl.OwnerReferences[0].Name != "web" {
			t.Errorf("slice %s labels %v owners %v", sl.Name, sl.Labels, sl.OwnerReferences)
		}
	}
	ep, err := c.CoreV1().Endpoints(ns).Get(ctxT(t), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = ep
	nlWatch(t, "the pod in the Endpoints, ready", func(ctx context.Context) ([]*corev1.Endpoints, string, error) {
		l, err := c.CoreV1().Endpoints(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, "", err
		}
		out := make([]*corev1.Endpoints, 0, len(l.Items))
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
		return out, l.ResourceVersion, nil
	}, func(ctx context.Context, rv string) (watch.Interface, error) {
		return c.CoreV1().Endpoints(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	}, func(e *corev1.Endpoints) string { return e.Name }, func(m map[string]*corev1.Endpoints) bool {
		e := m["web"]
		return e != nil && len(e.Subsets) == 1 && len(e.Subsets[0].Addresses) == 1 && e.Subsets[0].Addresses[0].IP == "10.0.2.1" &&
			e.Subsets[0].Ports[0].Port == 8080 && e.Labels["endpoints.kubernetes.io/managed-by"] == "endpoint-controller"
	})
}
