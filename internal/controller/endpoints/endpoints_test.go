package endpoints

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/quotad/quotad/internal/controller/endpointslice"
	"github.com/quotad/quotad/internal/controller/endpointslice/endpointstest"
	"github.com/quotad/quotad/internal/controller/fake"
	"github.com/quotad/quotad/internal/registry"
)

var (
	svc = endpointstest.Service
	pod = endpointstest.Pod
)

func ips(as []corev1.EndpointAddress) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.IP)
	}
	return out
}

func TestSubsets(t *testing.T) {
	now := metav1.Now()
	cases := []struct {
		name string
		svc  *corev1.Service
		pods []*corev1.Pod
		want string // fmt of [ready] [notReady] [ports] per subset
	}{
		{"ready and not", svc(nil), []*corev1.Pod{pod("b", "10.0.0.2", true, nil), pod("a", "10.0.0.1", false, nil), pod("c", "10.0.0.3", true, nil)},
			"[[10.0.0.2 10.0.0.3] [10.0.0.1] [http:8080]]"},
		{"no IP, terminal and terminating left out", svc(nil), []*corev1.Pod{pod("a", "", true, nil),
			pod("b", "10.0.0.2", true, func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }),
			pod("c", "10.0.0.3", true, func(p *corev1.Pod) { p.DeletionTimestamp = &now }), pod("d", "10.0.0.4", true, nil)},
			"[[10.0.0.4] [] [http:8080]]"},
		{"publishNotReadyAddresses", svc(func(s *corev1.Service) { s.Spec.PublishNotReadyAddresses = true }),
			[]*corev1.Pod{pod("a", "10.0.0.1", false, nil), pod("c", "10.0.0.3", true, func(p *corev1.Pod) { p.DeletionTimestamp = &now })},
			"[[10.0.0.1 10.0.0.3] [] [http:8080]]"},
		{"numeric target port", svc(func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromInt32(9000) }),
			[]*corev1.Pod{pod("a", "10.0.0.1", true, nil)}, "[[10.0.0.1] [] [http:9000]]"},
		{"named port missing: no subset", svc(func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromString("grpc") }),
			[]*corev1.Pod{pod("a", "10.0.0.1", true, nil)}, "[]"},
		{"headless without ports", svc(func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone; s.Spec.Ports = nil }),
			[]*corev1.Pod{pod("a", "10.0.0.1", true, nil)}, "[[10.0.0.1] [] []]"},
		{"pods on different ports: two subsets", svc(nil), []*corev1.Pod{pod("a", "10.0.0.1", true, nil),
			pod("b", "10.0.0.2", true, func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 8081 })},
			"two"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			subs := Subsets(tc.svc, tc.pods)
			var parts []string
			for _, s := range subs {
				var ports []string
				for _, p := range s.Ports {
					ports = append(ports, fmt.Sprintf("%s:%d", p.Name, p.Port))
				}
				parts = append(parts, fmt.Sprintf("%v %v %v", ips(s.Addresses), ips(s.NotReadyAddresses), ports))
			}
			got := fmt.Sprintf("%v", parts)
			if tc.want == "two" {
				if len(subs) != 2 {
					t.Errorf("got %s", got)
				}
				return
			}
			if got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDesired(t *testing.T) {
	s := svc(func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone })
	var pods []*corev1.Pod
	for i := 0; i < 1100; i++ {
		pods = append(pods, pod(fmt.Sprintf("p%04d", i), fmt.Sprintf("10.1.%d.%d", i/250, i%250+1), i%2 == 0, nil))
	}
	ep := Desired(s, nil, pods)
	if ep.Annotations[corev1.EndpointsOverCapacity] != "truncated" {
		t.Errorf("annotations %v", ep.Annotations)
	}
	n, ready := 0, 0
	for _, sub := range ep.Subsets {
		n += len(sub.Addresses) + len(sub.NotReadyAddresses)
		ready += len(sub.Addresses)
	}
	if n != 1000 || ready != 550 {
		t.Errorf("%d addresses, %d ready", n, ready)
	}
	want := map[string]string{"team": "a", LabelManagedBy: ControllerName, corev1.IsHeadlessService: ""}
	if len(ep.Labels) != len(want) {
		t.Errorf("labels %v", ep.Labels)
	}
	for k, v := range want {
		if ep.Labels[k] != v {
			t.Errorf("labels %v", ep.Labels)
		}
	}
	// Unchanged: nothing to write.
	small := Desired(svc(nil), nil, pods[:3])
	if Desired(svc(nil), small, pods[:3]) != nil {
		t.Error("rewrite of an unchanged Endpoints")
	}
}

func TestSync(t *testing.T) {
	fc := fake.New(nil)
	fc.Add(svc(nil), pod("a", "10.0.0.1", true, nil), pod("b", "10.0.0.2", false, nil),
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "noselector", Namespace: "ns"}})
	c := New(fc, Options{})
	ctx := context.Background()
	for _, k := range []string{"ns/web", "ns/noselector"} {
		if err := syncFed(ctx, c, fc, k); err != nil {
			t.Fatal(err)
		}
	}
	ep := fc.Object(endpointsGVR, "ns", "web").(*corev1.Endpoints)
	if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != 1 || len(ep.Subsets[0].NotReadyAddresses) != 1 || ep.Subsets[0].Addresses[0].TargetRef.Name != "a" {
		t.Fatalf("subsets %+v", ep.Subsets)
	}
	if fc.Object(endpointsGVR, "ns", "noselector") != nil {
		t.Error("endpoints for a Service without selector")
	}
	fc.Actions()
	if err := syncFed(ctx, c, fc, "ns/web"); err != nil {
		t.Fatal(err)
	}
	if a := fc.Actions(); len(a) != 0 {
		t.Errorf("writes on an unchanged sync: %+v", a)
	}
	if _, err := fc.Delete(ctx, fc.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("services")), "ns", "web", metav1.DeleteOptions{}, registryWrite); err != nil {
		t.Fatal(err)
	}
	if err := syncFed(ctx, c, fc, "ns/web"); err != nil {
		t.Fatal(err)
	}
	if fc.Object(endpointsGVR, "ns", "web") != nil {
		t.Error("endpoints of a deleted Service kept")
	}
}

var registryWrite = registry.WriteOptions{}

// syncFed runs Sync with the watcher's pod cache holding the pods fc holds, as the
// controller's watch keeps it.
func syncFed(ctx context.Context, c *Controller, fc *fake.Client, key string) error {
	c.w = endpointslice.NewWatcher(nil)
	for _, o := range fc.Objects(corev1.SchemeGroupVersion.WithResource("pods"), "") {
		c.w.PodChanged(o.(*corev1.Pod), false)
	}
	return c.Sync(ctx, key)
}
