package integration

import (
	"net"
	"net/url"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/quotad/quotad/internal/server/servertest"
)

func serverPort(t *testing.T, s *servertest.Server) int32 {
	t.Helper()
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, p, _ := net.SplitHostPort(u.Host)
	n, _ := strconv.Atoi(p)
	return int32(n)
}

// TestKubernetesService: the kubernetes Service in default (first address of the service
// range, https 443 → the secure port), its Endpoints and EndpointSlice naming the replica,
// and kube-node-lease, exist as soon as the server serves.
func TestKubernetesService(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	port := serverPort(t, s)
	svc, err := s.Client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := corev1.ServicePort{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(port)}
	if svc.Spec.ClusterIP != "10.96.0.1" || svc.Spec.Type != corev1.ServiceTypeClusterIP || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0] != want ||
		svc.Labels["component"] != "apiserver" || svc.Labels["provider"] != "kubernetes" || svc.Spec.Selector != nil {
		t.Errorf("kubernetes service: %+v %+v", svc.Labels, svc.Spec)
	}
	ep, err := s.Client.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != 1 || ep.Subsets[0].Addresses[0].IP != "127.0.0.1" ||
		len(ep.Subsets[0].Ports) != 1 || ep.Subsets[0].Ports[0] != (corev1.EndpointPort{Name: "https", Port: port, Protocol: corev1.ProtocolTCP}) {
		t.Errorf("kubernetes endpoints: %+v", ep.Subsets)
	}
	es, err := s.Client.DiscoveryV1().EndpointSlices("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if es.Labels[discoveryv1.LabelServiceName] != "kubernetes" || es.AddressType != discoveryv1.AddressTypeIPv4 || len(es.Endpoints) != 1 ||
		es.Endpoints[0].Addresses[0] != "127.0.0.1" || len(es.Ports) != 1 || *es.Ports[0].Port != port || *es.Ports[0].Name != "https" {
		t.Errorf("kubernetes endpointslice: %+v", es)
	}
	if _, err := s.Client.CoreV1().Namespaces().Get(ctx, "kube-node-lease", metav1.GetOptions{}); err != nil {
		t.Errorf("kube-node-lease: %v", err)
	}
	// A Service created afterwards never gets the kubernetes Service's address.
	other, err := s.Client.CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: meta("web"), Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	if err != nil || other.Spec.ClusterIP == "10.96.0.1" {
		t.Errorf("other service: %v %v", other, err)
	}
	s.CheckInvariant()
}

// TestKubernetesServiceReplicas: replicas sharing one etcd are each listed in the
// Endpoints (and, sharing a port group rule, agree on the EndpointSlice and Service).
func TestKubernetesServiceReplicas(t *testing.T) {
	t.Parallel()
	etcd := sharedEtcd(t)
	a := servertest.Start(t, servertest.WithEtcd(etcd))
	b := servertest.Start(t, servertest.WithEtcd(etcd))
	ctx := ctxT(t)
	ep, err := a.Client.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ports := map[int32]bool{}
	for _, ss := range ep.Subsets {
		for _, p := range ss.Ports {
			ports[p.Port] = true
		}
	}
	if !ports[serverPort(t, a)] || !ports[serverPort(t, b)] {
		t.Errorf("endpoints %+v do not list both replicas (%d, %d)", ep.Subsets, serverPort(t, a), serverPort(t, b))
	}
	svcs, err := b.Client.CoreV1().Services("default").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=kubernetes"})
	if err != nil || len(svcs.Items) != 1 {
		t.Fatalf("services: %v %v", svcs, err)
	}
}
