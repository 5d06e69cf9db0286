package endpointslice

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/controller/fake"
	"github.com/quotad/quotad/internal/registry"
)

// A pod's deletion that the watch missed (compacted away while it was down) still takes
// the pod out of its Service's slice: the pod index starts over from the current pods,
// delivers the deletion and queues the Service.
func TestWatcherLostPodDeletion(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fc := fake.New(nil)
	fc.Add(node1, svc(nil), pod("a", "10.0.0.1", true, nil), pod("b", "10.0.0.2", true, nil))
	sync := watching(t, ctx, fc)
	if got := fmt.Sprint(sync()); got != "[10.0.0.1 10.0.0.2]" {
		t.Fatalf("endpoints %s, want both pods", got)
	}
	fc.LoseDeletion(PodsGVR, "ns", "a")
	if got := fmt.Sprint(sync()); got != "[10.0.0.2]" {
		t.Fatalf("endpoints %s after the lost deletion, want [10.0.0.2]", got)
	}
}

// A pod whose labels are all removed leaves the pod index (which keeps only pods with
// labels: no Service selects the others) and its Service's slice: its event still queues
// the Services that selected it.
func TestWatcherPodLosesItsLabels(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fc := fake.New(nil)
	fc.Add(node1, svc(nil), pod("a", "10.0.0.1", true, nil), pod("b", "10.0.0.2", true, nil))
	sync := watching(t, ctx, fc)
	if got := fmt.Sprint(sync()); got != "[10.0.0.1 10.0.0.2]" {
		t.Fatalf("endpoints %s, want both pods", got)
	}
	if _, err := fc.Update(ctx, fc.Catalogue().Get(PodsGVR), "ns", "a", "", func(o runtime.Object) (runtime.Object, error) {
		o.(*corev1.Pod).Labels = nil
		return o, nil
	}, registry.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(sync()); got != "[10.0.0.2]" {
		t.Fatalf("endpoints %s after a's labels went, want [10.0.0.2]", got)
	}
}

// watching starts a controller's watches on fc and returns its sync: wait until every index
// holds fc's current revision, take the one queued key (the Service ns/web), sync it and
// return the addresses of its slices.
func watching(t *testing.T, ctx context.Context, fc *fake.Client) func() []string {
	t.Helper()
	c := New(fc, Options{})
	q := controller.NewQueue("test")
	t.Cleanup(q.ShutDown)
	c.w.Watch(ctx, c.loop, fc.Catalogue(), q)
	go c.loop.WatchIndex(ctx, fc.Catalogue().Get(SlicesGVR), c.slices, nil)
	return func() []string {
		t.Helper()
		for _, x := range []controller.Cache{c.w.Services, c.w.Pods, c.slices} {
			if err := x.WaitFor(ctx, fc.Revision()); err != nil {
				t.Fatal(err)
			}
		}
		key, _ := q.Get()
		defer q.Done(key)
		if key != "ns/web" {
			t.Fatalf("queued %q, want ns/web", key)
		}
		if err := c.Sync(ctx, key); err != nil {
			t.Fatal(err)
		}
		var ips []string
		for _, o := range fc.Objects(SlicesGVR, "ns") {
			for _, ep := range o.(*discovery.EndpointSlice).Endpoints {
				ips = append(ips, ep.Addresses...)
			}
		}
		return ips
	}
}

// TestEmptySelectorIsNone: a Service whose selector is an empty map, as its object may be
// before a storage round trip drops it, is no more managed than one without a selector and
// selects no pod, labelled or not (upstream's controllers read it decoded from storage).
func TestEmptySelectorIsNone(t *testing.T) {
	s := svc(nil)
	s.Spec.Selector = map[string]string{}
	for _, p := range []*corev1.Pod{pod("a", "10.0.0.1", true, nil), pod("b", "10.0.0.2", true, nil)} {
		if Selects(s, p) {
			t.Errorf("an empty selector selects %s", p.Name)
		}
		p.Labels = nil
		if Selects(s, p) {
			t.Errorf("an empty selector selects %s without labels", p.Name)
		}
	}
	if Managed(s) {
		t.Error("a Service with an empty selector is managed")
	}
}
