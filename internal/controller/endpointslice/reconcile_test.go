package endpointslice

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/controller/endpointslice/endpointstest"
	"github.com/quotad/quotad/internal/controller/fake"
	"github.com/quotad/quotad/internal/registry"
)

var (
	svc = endpointstest.Service
	pod = endpointstest.Pod
)

var node1 = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{corev1.LabelTopologyZone: "z1"}}}

func nodes(name string) *corev1.Node {
	if name == "n1" {
		return node1
	}
	return nil
}

// cond renders an endpoint as "ip r/s/t".
func cond(ep discovery.Endpoint) string {
	b := func(p *bool) int {
		if p != nil && *p {
			return 1
		}
		return 0
	}
	return fmt.Sprintf("%v %d/%d/%d", ep.Addresses, b(ep.Conditions.Ready), b(ep.Conditions.Serving), b(ep.Conditions.Terminating))
}

func TestReconcileNew(t *testing.T) {
	now := metav1.Now()
	cases := []struct {
		name string
		svc  *corev1.Service
		pods []*corev1.Pod
		want []string // per created slice: endpoints rendered
	}{
		{"ready, not ready, terminating", svc(nil), []*corev1.Pod{pod("a", "10.0.0.1", true, nil), pod("b", "10.0.0.2", false, nil),
			pod("c", "10.0.0.3", true, func(p *corev1.Pod) { p.DeletionTimestamp = &now })},
			[]string{"[[10.0.0.1] 1/1/0 [10.0.0.2] 0/0/0 [10.0.0.3] 0/1/1]"}},
		{"publishNotReadyAddresses", svc(func(s *corev1.Service) { s.Spec.PublishNotReadyAddresses = true }),
			[]*corev1.Pod{pod("b", "10.0.0.2", false, nil)}, []string{"[[10.0.0.2] 1/0/0]"}},
		{"no pods: placeholder", svc(nil), nil, []string{"[]"}},
		{"node missing: skipped", svc(nil), []*corev1.Pod{pod("a", "10.0.0.1", true, func(p *corev1.Pod) { p.Spec.NodeName = "gone" })}, []string{"[]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan, _ := Reconcile(tc.svc, tc.pods, nodes, nil, 100)
			if len(plan.Create) != len(tc.want) || len(plan.Update)+len(plan.Delete) != 0 {
				t.Fatalf("plan %d/%d/%d", len(plan.Create), len(plan.Update), len(plan.Delete))
			}
			for i, s := range plan.Create {
				var eps []string
				for _, ep := range s.Endpoints {
					eps = append(eps, cond(ep))
				}
				if got := fmt.Sprint(eps); got != tc.want[i] {
					t.Errorf("endpoints %s, want %s", got, tc.want[i])
				}
				if s.GenerateName != "web-" || s.AddressType != discovery.AddressTypeIPv4 || s.Labels[discovery.LabelManagedBy] != ControllerName ||
					s.Labels[discovery.LabelServiceName] != "web" || s.Labels["team"] != "a" || len(s.OwnerReferences) != 1 || s.OwnerReferences[0].UID != "svc-uid" {
					t.Errorf("slice meta %+v", s.ObjectMeta)
				}
				if len(s.Endpoints) > 0 && (*s.Ports[0].Port != 8080 || *s.Ports[0].Name != "http" || *s.Endpoints[0].Zone != "z1" || *s.Endpoints[0].NodeName != "n1") {
					t.Errorf("ports %+v endpoint %+v", s.Ports, s.Endpoints[0])
				}
			}
		})
	}
}

// TestSync: 250 pods make 3 slices of at most 100; a pod becoming Ready updates one slice
// only; removing every pod leaves one placeholder; a headless Service's slices are
// labelled so.
func TestSync(t *testing.T) {
	fc := fake.New(nil)
	fc.Add(svc(func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone }), node1)
	for i := 0; i < 250; i++ {
		fc.Add(pod(fmt.Sprintf("p%03d", i), fmt.Sprintf("10.0.%d.%d", i/200, i%200+1), false, nil))
	}
	c := New(fc, Options{})
	ctx := context.Background()
	if err := syncFed(ctx, c, fc, "ns/web"); err != nil {
		t.Fatal(err)
	}
	slices := fc.Objects(SlicesGVR, "ns")
	if len(slices) != 3 {
		t.Fatalf("%d slices", len(slices))
	}
	total := 0
	for _, o := range slices {
		s := o.(*discovery.EndpointSlice)
		if len(s.Endpoints) > 100 {
			t.Errorf("slice of %d", len(s.Endpoints))
		}
		if _, ok := s.Labels[corev1.IsHeadlessService]; !ok {
			t.Errorf("labels %v", s.Labels)
		}
		total += len(s.Endpoints)
	}
	if total != 250 {
		t.Fatalf("%d endpoints", total)
	}
	fc.Actions()
	if err := syncFed(ctx, c, fc, "ns/web"); err != nil {
		t.Fatal(err)
	}
	if a := fc.Actions(); len(a) != 0 {
		t.Fatalf("writes on an unchanged sync: %+v", a)
	}
	p := fc.Object(PodsGVR, "ns", "p007").(*corev1.Pod)
	p.Status.Conditions[0].Status = corev1.ConditionTrue
	fc.Add(p)
	if err := syncFed(ctx, c, fc, "ns/web"); err != nil {
		t.Fatal(err)
	}
	if a := fc.Actions(); len(a) != 1 || a[0].Verb != "update" {
		t.Fatalf("actions %+v", a)
	}
	for _, o := range fc.Objects(PodsGVR, "ns") {
		if _, err := fc.Delete(ctx, fc.Catalogue().Get(PodsGVR), "ns", o.(*corev1.Pod).Name, metav1.DeleteOptions{}, writeOpts); err != nil {
			t.Fatal(err)
		}
	}
	if err := syncFed(ctx, c, fc, "ns/web"); err != nil {
		t.Fatal(err)
	}
	slices = fc.Objects(SlicesGVR, "ns")
	if len(slices) != 1 || len(slices[0].(*discovery.EndpointSlice).Endpoints) != 0 {
		t.Fatalf("after every pod went: %d slices", len(slices))
	}
}

var writeOpts = registry.WriteOptions{}

// syncFed runs Sync with the watcher's pod cache holding the pods fc holds, and the slice
// index the slices fc holds, as the controller's watches keep them.
func syncFed(ctx context.Context, c *Controller, fc *fake.Client, key string) error {
	c.w = NewWatcher(nil)
	for _, o := range fc.Objects(PodsGVR, "") {
		c.w.PodChanged(o.(*corev1.Pod), false)
	}
	c.slices = sliceIndex()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go c.loop.WatchIndex(wctx, fc.Catalogue().Get(SlicesGVR), c.slices, nil)
	if err := c.slices.WaitFor(ctx, fc.Revision()); err != nil {
		return err
	}
	return c.Sync(ctx, key)
}
