package nodelifecycle

import (
	"context"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/quotad/quotad/internal/controller/fake"
	"github.com/quotad/quotad/internal/registry"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type env struct {
	t   *testing.T
	ctx context.Context
	clk *clocktesting.FakeClock
	fc  *fake.Client
	c   *Controller
}

func newEnv(t *testing.T, objs ...runtime.Object) *env {
	clk := clocktesting.NewFakeClock(t0)
	fc := fake.New(clk)
	fc.Add(objs...)
	e := &env{t: t, ctx: context.Background(), clk: clk, fc: fc, c: New(fc, Options{Clock: clk})}
	e.refresh()
	return e
}

// refresh shows the controller what the store holds, as its watches would.
func (e *env) refresh() {
	for _, o := range e.fc.Objects(nodesGVR, "") {
		e.c.Feed(o, false)
	}
	for _, o := range e.fc.Objects(leasesGVR, "") {
		e.c.Feed(o, false)
	}
	for _, o := range e.fc.Objects(podsGVR, "") {
		e.c.Feed(o, false)
	}
}

func (e *env) node(name string) *corev1.Node {
	return e.fc.Object(nodesGVR, "", name).(*corev1.Node)
}

func (e *env) monitor() {
	e.t.Helper()
	if err := e.c.Monitor(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	e.refresh()
}

func (e *env) taintPass() {
	e.c.TaintPass(e.ctx)
	e.refresh()
}

// renew renews node's lease now.
func (e *env) renew(node string) {
	e.t.Helper()
	now := metav1.NewMicroTime(e.clk.Now())
	_, err := e.fc.Update(e.ctx, e.fc.Catalogue().Get(leasesGVR), corev1.NamespaceNodeLease, node, "", func(cur runtime.Object) (runtime.Object, error) {
		l := cur.(*coordv1.Lease)
		l.Spec.RenewTime = &now
		return l, nil
	}, registry.WriteOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	e.refresh()
}

// post sets node's Ready condition as its kubelet would, heartbeat now.
func (e *env) post(node string, st corev1.ConditionStatus) {
	e.t.Helper()
	now := metav1.NewTime(e.clk.Now())
	_, err := e.fc.Update(e.ctx, e.fc.Catalogue().Get(nodesGVR), "", node, "status", func(cur runtime.Object) (runtime.Object, error) {
		n := cur.(*corev1.Node)
		c := condition(&n.Status, corev1.NodeReady)
		if c.Status != st {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason, c.Message, c.LastHeartbeatTime = st, "KubeletReady", "kubelet is posting ready status", now
		return n, nil
	}, registry.WriteOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	e.refresh()
}

func readyNode(name string, zone string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour))}}
	if zone != "" {
		n.Labels = map[string]string{corev1.LabelTopologyZone: zone, corev1.LabelTopologyRegion: "r"}
	}
	hb := metav1.NewTime(t0)
	n.Status.Conditions = []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: hb, LastTransitionTime: hb},
		{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", LastHeartbeatTime: hb, LastTransitionTime: hb},
	}
	return n
}

func lease(node string) *coordv1.Lease {
	rt := metav1.NewMicroTime(t0)
	return &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: corev1.NamespaceNodeLease}, Spec: coordv1.LeaseSpec{RenewTime: &rt}}
}

func readyPod(name, node string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: corev1.PodSpec{NodeName: node}}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)}}
	return p
}

func taintKeys(n *corev1.Node) map[string]bool {
	out := map[string]bool{}
	for _, t := range n.Spec.Taints {
		out[t.Key+":"+string(t.Effect)] = true
	}
	return out
}

// TestLifecycle walks three nodes through upstream's states: a node whose kubelet stops
// (n1) goes Unknown after the grace period, its pods not Ready, then is tainted
// unreachable; a node that only renews its Lease (n2) stays Ready; a node that never
// posted status (n3) goes Unknown after the startup grace period; rate limits space the
// NoExecute taints; a node that recovers loses its taints.
func TestLifecycle(t *testing.T) {
	n3 := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n3", CreationTimestamp: metav1.NewTime(t0)}}
	e := newEnv(t, readyNode("n1", ""), readyNode("n2", ""), n3, lease("n1"), lease("n2"), readyPod("p1", "n1"), readyPod("p2", "n2"))
	e.monitor()
	// The recorder writes asynchronously: wait for the three.
	var got []runtime.Object
	_ = wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		got = e.fc.Objects(corev1.SchemeGroupVersion.WithResource("events"), "default")
		return len(got) >= 3, nil
	})
	if len(got) != 3 {
		t.Fatalf("want 3 RegisteredNode events, got %d", len(got))
	}
	ev := got[0].(*corev1.Event)
	if ev.Reason != "RegisteredNode" || ev.Message != "Node n1 event: Registered Node n1 in Controller" || ev.Source.Component != "node-controller" {
		t.Errorf("event %q %q %q", ev.Reason, ev.Message, ev.Source.Component)
	}

	steps := []struct {
		name    string
		advance time.Duration
		act     func()
		ready   map[string]corev1.ConditionStatus
		taints  map[string][]string
	}{
		{"within grace", 45 * time.Second, func() { e.renew("n2") },
			map[string]corev1.ConditionStatus{"n1": corev1.ConditionTrue, "n2": corev1.ConditionTrue}, nil},
		{"n1 past grace; n2's lease keeps it", 10 * time.Second, nil,
			map[string]corev1.ConditionStatus{"n1": corev1.ConditionUnknown, "n2": corev1.ConditionTrue},
			map[string][]string{"n1": {"node.kubernetes.io/unreachable:NoExecute", "node.kubernetes.io/unreachable:NoSchedule"}, "n2": nil}},
		{"n3 past startup grace; rate limit holds its taint", 6 * time.Second, func() { e.renew("n2") },
			map[string]corev1.ConditionStatus{"n3": corev1.ConditionUnknown, "n2": corev1.ConditionTrue},
			map[string][]string{"n3": {"node.kubernetes.io/unreachable:NoSchedule"}}},
		{"a token 10s after the last", 4 * time.Second, nil, nil,
			map[string][]string{"n3": {"node.kubernetes.io/unreachable:NoExecute", "node.kubernetes.io/unreachable:NoSchedule"}}},
		{"n1 reports NotReady: taints swap at once", time.Second, func() { e.renew("n2"); e.post("n1", corev1.ConditionFalse) },
			map[string]corev1.ConditionStatus{"n1": corev1.ConditionFalse},
			map[string][]string{"n1": {"node.kubernetes.io/not-ready:NoExecute", "node.kubernetes.io/not-ready:NoSchedule"}}},
		{"n1 recovers", time.Second, func() { e.post("n1", corev1.ConditionTrue) },
			map[string]corev1.ConditionStatus{"n1": corev1.ConditionTrue}, map[string][]string{"n1": nil}},
	}
	for _, s := range steps {
		e.clk.Step(s.advance)
		if s.act != nil {
			s.act()
		}
		e.monitor()
		e.taintPass()
		for _, n := range e.c.cachedNodes() {
			if err := e.c.NoScheduleTaint(e.ctx, n.Name); err != nil {
				t.Fatal(err)
			}
		}
		e.refresh()
		for name, want := range s.ready {
			if got := readyCondition(&e.node(name).Status).Status; got != want {
				t.Errorf("%s: %s Ready %s, want %s", s.name, name, got, want)
			}
		}
		for name, want := range s.taints {
			got := taintKeys(e.node(name))
			if len(got) != len(want) {
				t.Errorf("%s: %s taints %v, want %v", s.name, name, got, want)
			}
			for _, k := range want {
				if !got[k] {
					t.Errorf("%s: %s taints %v, want %v", s.name, name, got, want)
				}
			}
		}
	}

	// n1's conditions as upstream writes them; the pods of n1 were marked not Ready.
	p1 := e.fc.Object(podsGVR, "ns", "p1").(*corev1.Pod)
	if p1.Status.Conditions[0].Status != corev1.ConditionFalse || !p1.Status.Conditions[0].LastTransitionTime.Time.Equal(t0.Add(55*time.Second)) {
		t.Errorf("p1 Ready %+v", p1.Status.Conditions[0])
	}
	if p2 := e.fc.Object(podsGVR, "ns", "p2").(*corev1.Pod); p2.Status.Conditions[0].Status != corev1.ConditionTrue {
		t.Errorf("p2 Ready %+v", p2.Status.Conditions[0])
	}
	n3 = e.node("n3")
	if len(n3.Status.Conditions) != 4 {
		t.Fatalf("n3 conditions %+v", n3.Status.Conditions)
	}
	for _, c := range n3.Status.Conditions {
		if c.Status != corev1.ConditionUnknown || c.Reason != "NodeStatusNeverUpdated" || c.Message != "Kubelet never posted node status." {
			t.Errorf("n3 condition %+v", c)
		}
	}
	for _, tn := range e.node("n3").Spec.Taints {
		if tn.TimeAdded == nil || !tn.TimeAdded.Time.Equal(t0.Add(65*time.Second)) && tn.Effect == corev1.TaintEffectNoExecute {
			t.Errorf("n3 taint %+v", tn)
		}
	}
}

func TestReconcileLabels(t *testing.T) {
	n := readyNode("a", "")
	n.Labels = map[string]string{corev1.LabelOSStable: "linux", corev1.LabelArchStable: "arm64", "beta.kubernetes.io/arch": "amd64"}
	e := newEnv(t, n)
	if err := e.c.ReconcileLabels(e.ctx, "a"); err != nil {
		t.Fatal(err)
	}
	got := e.node("a").Labels
	if got["beta.kubernetes.io/os"] != "linux" || got["beta.kubernetes.io/arch"] != "arm64" {
		t.Errorf("labels %v", got)
	}
}

// TestUnknownConditions checks the conditions of a node past its grace period.
func TestUnknownConditions(t *testing.T) {
	e := newEnv(t, readyNode("a", ""), readyNode("b", ""), lease("b"))
	e.monitor()
	e.clk.Step(51 * time.Second)
	e.renew("b")
	e.monitor()
	got := e.node("a").Status.Conditions
	want := map[corev1.NodeConditionType][2]string{
		corev1.NodeReady:          {"NodeStatusUnknown", "Kubelet stopped posting node status."},
		corev1.NodeMemoryPressure: {"NodeStatusUnknown", "Kubelet stopped posting node status."},
		corev1.NodeDiskPressure:   {"NodeStatusNeverUpdated", "Kubelet never posted node status."},
		corev1.NodePIDPressure:    {"NodeStatusNeverUpdated", "Kubelet never posted node status."},
	}
	if len(got) != 4 {
		t.Fatalf("conditions %+v", got)
	}
	for _, c := range got {
		w := want[c.Type]
		if c.Status != corev1.ConditionUnknown || c.Reason != w[0] || c.Message != w[1] || !c.LastTransitionTime.Time.Equal(t0.Add(51*time.Second)) {
			t.Errorf("condition %+v", c)
		}
		if c.Type == corev1.NodeReady && !c.LastHeartbeatTime.Time.Equal(t0) {
			t.Errorf("heartbeat changed: %+v", c)
		}
	}
}

// TestZoneStates: a zone with every node down stops tainting (and, all zones down, the
// NoExecute taints are removed); a partially disrupted small zone stops, a large one
// goes at the secondary rate.
func TestZoneStates(t *testing.T) {
	cases := []struct {
		name    string
		zones   map[string][2]int // zone → nodes, of which down
		opts    Options
		state   map[string]ZoneState
		rate    map[string]float32
		tainted int
	}{
		{"all down: master disruption", map[string][2]int{"z1": {2, 2}}, Options{},
			map[string]ZoneState{"r:\x00:z1": StateFullDisruption}, map[string]float32{"r:\x00:z1": 0}, 0},
		{"one zone down of two", map[string][2]int{"z1": {2, 2}, "z2": {2, 0}}, Options{},
			map[string]ZoneState{"r:\x00:z1": StateFullDisruption, "r:\x00:z2": StateNormal}, map[string]float32{"r:\x00:z1": 0.1, "r:\x00:z2": 0.1}, 1},
		{"partial, small zone", map[string][2]int{"z1": {4, 3}}, Options{},
			map[string]ZoneState{"r:\x00:z1": StatePartialDisruption}, map[string]float32{"r:\x00:z1": 0}, 0},
		{"partial, large zone", map[string][2]int{"z1": {4, 3}}, Options{LargeClusterThreshold: 3},
			map[string]ZoneState{"r:\x00:z1": StatePartialDisruption}, map[string]float32{"r:\x00:z1": 0.01}, 1},
		{"two down of four: normal", map[string][2]int{"z1": {4, 2}}, Options{},
			map[string]ZoneState{"r:\x00:z1": StateNormal}, map[string]float32{"r:\x00:z1": 0.1}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var objs []runtime.Object
			var up []string
			for z, nd := range tc.zones {
				for i := 0; i < nd[0]; i++ {
					name := z + "-" + string(rune('a'+i))
					objs = append(objs, readyNode(name, z), lease(name))
					if i >= nd[1] {
						up = append(up, name)
					}
				}
			}
			clk := clocktesting.NewFakeClock(t0)
			fc := fake.New(clk)
			fc.Add(objs...)
			tc.opts.Clock = clk
			e := &env{t: t, ctx: context.Background(), clk: clk, fc: fc, c: New(fc, tc.opts)}
			e.refresh()
			e.monitor()
			e.clk.Step(51 * time.Second)
			for _, n := range up {
				e.renew(n)
			}
			e.monitor()
			e.taintPass()
			for z, want := range tc.state {
				if got := e.c.ZoneStates()[z]; got != want {
					t.Errorf("zone %q state %s, want %s", z, got, want)
				}
			}
			for z, want := range tc.rate {
				if got := e.c.ZoneRate(z); got != want {
					t.Errorf("zone %q rate %v, want %v", z, got, want)
				}
			}
			tainted := 0
			for _, o := range e.fc.Objects(nodesGVR, "") {
				if hasTaint(o.(*corev1.Node).Spec.Taints, UnreachableTaint) {
					tainted++
				}
			}
			if tainted != tc.tainted {
				t.Errorf("%d nodes tainted NoExecute, want %d", tainted, tc.tainted)
			}
		})
	}
}

// TestLeaseCircuitBreaker: a node whose Lease was renewed in storage while the watch has
// not delivered the renewal yet is not marked Unknown, nor is any other node, until the
// watch caught up (upstream's NodeControllerLeaseCircuitBreaker); then the renewed node
// stays Ready and the silent one becomes Unknown.
func TestLeaseCircuitBreaker(t *testing.T) {
	e := newEnv(t, readyNode("n1", ""), readyNode("n2", ""), lease("n1"), lease("n2"))
	e.monitor()
	// n1's kubelet renews its Lease; the controller's watch lags behind.
	now := metav1.NewMicroTime(t0.Add(40 * time.Second))
	if _, err := e.fc.Update(e.ctx, e.fc.Catalogue().Get(leasesGVR), corev1.NamespaceNodeLease, "n1", "", func(cur runtime.Object) (runtime.Object, error) {
		l := cur.(*coordv1.Lease)
		l.Spec.RenewTime = &now
		return l, nil
	}, registry.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	ready := func(name string) corev1.ConditionStatus { return readyCondition(&e.node(name).Status).Status }
	e.clk.Step(DefaultGracePeriod + time.Second)
	for pass := 0; pass < 2; pass++ {
		if err := e.c.Monitor(e.ctx); err != nil {
			t.Fatal(err)
		}
		if ready("n1") != corev1.ConditionTrue || ready("n2") != corev1.ConditionTrue {
			t.Fatalf("pass %d with the Leases cache behind: n1 %s, n2 %s; want both True", pass, ready("n1"), ready("n2"))
		}
	}
	// The watch delivers the renewal.
	e.refresh()
	e.monitor()
	if ready("n1") != corev1.ConditionTrue || ready("n2") != corev1.ConditionUnknown {
		t.Errorf("with the Leases cache current: n1 %s, n2 %s; want True, Unknown", ready("n1"), ready("n2"))
	}
}
