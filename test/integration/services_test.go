package integration

import (
	"fmt"
	"net"
	"slices"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
)

func nodePortService(name, clusterIP string, nodePort int32) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeNodePort, ClusterIP: clusterIP, Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080), NodePort: nodePort}},
		},
	}
}

// serviceRefusal returns a check that creating a Service is refused with 422 and want, and
// stores nothing.
func serviceRefusal(t *testing.T, svcs typedcorev1.ServiceInterface) func(svc *corev1.Service, want string) {
	ctx := ctxT(t)
	return func(svc *corev1.Service, want string) {
		t.Helper()
		_, err := svcs.Create(ctx, svc, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || err.Error() != want {
			t.Fatalf("create %s: %v\nwant 422 %s", svc.Name, err, want)
		}
		if _, err := svcs.Get(ctx, svc.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("refused service %s stored: %v", svc.Name, err)
		}
	}
}

// TestServiceAllocationsAreExclusive: a requested cluster IP or node port another service
// holds is refused with upstream's texts; deletion and a type change give them back.
func TestServiceAllocationsAreExclusive(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "svc")
	svcs := s.Client.CoreV1().Services("svc")
	if _, err := svcs.Create(ctx, nodePortService("a", "10.96.0.50", 30080), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	refused := serviceRefusal(t, svcs)
	refused(nodePortService("b", "10.96.0.50", 0),
		`Service "b" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.50"]: failed to allocate IP 10.96.0.50: provided IP is already allocated`)
	refused(nodePortService("c", "", 30080),
		`Service "c" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated`)

	if err := svcs.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := svcs.Create(ctx, nodePortService("b", "10.96.0.50", 0), metav1.CreateOptions{}); err != nil {
		t.Fatalf("the deleted service's cluster IP: %v", err)
	}
	if _, err := svcs.Create(ctx, nodePortService("c", "", 30080), metav1.CreateOptions{}); err != nil {
		t.Fatalf("the deleted service's node port: %v", err)
	}
	// NodePort to ClusterIP gives the node port back.
	if _, err := svcs.Patch(ctx, "c", types.MergePatchType, []byte(`{"spec":{"type":"ClusterIP"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := svcs.Create(ctx, nodePortService("d", "", 30080), metav1.CreateOptions{}); err != nil {
		t.Fatalf("the node port given back by a type change: %v", err)
	}
}

// TestServiceAllocationsUnderConcurrency: services created at once through two replicas get
// distinct cluster IPs and node ports, and of many asking for one node port exactly one gets it.
func TestServiceAllocationsUnderConcurrency(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	ctx := ctxT(t)
	mkNamespace(t, a, "svcrace")
	var wantedPort, failures []error
	const wanting = 20 // the first 20 all want node port 31000
	acrossReplicas(40, a, b, func(i int, s *servertest.Server) error {
		var port int32
		if i < wanting {
			port = 31000
		}
		_, err := s.Client.CoreV1().Services("svcrace").Create(ctx, nodePortService(fmt.Sprintf("s-%d", i), "", port), metav1.CreateOptions{})
		return err
	}, func(i int, err error) {
		switch {
		case i < wanting:
			wantedPort = append(wantedPort, err)
		case err != nil:
			failures = append(failures, err)
		}
	})
	if len(failures) > 0 {
		t.Fatalf("services with server-picked values failed: %v", failures)
	}
	won := 0
	for _, err := range wantedPort {
		switch {
		case err == nil:
			won++
		case !apierrors.IsInvalid(err):
			t.Errorf("asking for a taken node port: %v, want 422", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d services got node port 31000, want exactly 1", won)
	}
	list, err := a.Client.CoreV1().Services("svcrace").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 21 {
		t.Fatalf("%d services stored, want 21", len(list.Items))
	}
	// Every address has its IPAddress naming its Service, and no other IPAddress is left
	// by the refused or retried creates (the kubernetes Service's aside).
	addrs, err := a.Client.NetworkingV1().IPAddresses().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	parents := map[string]string{}
	for _, ip := range addrs.Items {
		parents[ip.Name] = ip.Spec.ParentRef.Namespace + "/" + ip.Spec.ParentRef.Name
	}
	if len(parents) != len(list.Items)+1 {
		t.Errorf("%d IPAddresses for %d services and the kubernetes Service", len(parents), len(list.Items))
	}
	for _, svc := range list.Items {
		if parents[svc.Spec.ClusterIP] != "svcrace/"+svc.Name {
			t.Errorf("service %s's address %s has IPAddress naming %q", svc.Name, svc.Spec.ClusterIP, parents[svc.Spec.ClusterIP])
		}
	}
	ips, ports := map[string]string{}, map[int32]string{}
	for _, svc := range list.Items {
		if prev, ok := ips[svc.Spec.ClusterIP]; ok || svc.Spec.ClusterIP == "" {
			t.Errorf("services %s and %s share cluster IP %q", prev, svc.Name, svc.Spec.ClusterIP)
		}
		ips[svc.Spec.ClusterIP] = svc.Name
		for _, p := range svc.Spec.Ports {
			if prev, ok := ports[p.NodePort]; ok || p.NodePort == 0 {
				t.Errorf("services %s and %s share node port %d", prev, svc.Name, p.NodePort)
			}
			ports[p.NodePort] = svc.Name
		}
	}
}

// TestServiceAllocationsBackfilled: services stored without allocation records or IPAddress
// objects (data from before they were kept) get them when a server starts.
func TestServiceAllocationsBackfilled(t *testing.T) {
	t.Parallel()
	etcd := sharedEtcd(t)
	a := servertest.Start(t, servertest.WithEtcd(etcd))
	ctx := ctxT(t)
	mkNamespace(t, a, "old")
	if _, err := a.Client.CoreV1().Services("old").Create(ctx, nodePortService("a", "10.96.0.60", 30090), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	files := etcd.ClientTLS()
	tlsCfg, err := storage.ExternalTLS(files.CAFile, files.CertFile, files.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := storage.ConnectExternal(ctx, etcd.Endpoints(), tlsCfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	del, err := cli.Delete(ctx, "/registry/quotad.io/allocations/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	// Service a's cluster IP and node port, and the kubernetes Service's cluster IP.
	if del.Deleted != 3 {
		t.Fatalf("%d allocation records deleted, want 3", del.Deleted)
	}
	if del, err = cli.Delete(ctx, "/registry/networking.k8s.io/ipaddresses/", clientv3.WithPrefix()); err != nil || del.Deleted != 2 {
		t.Fatalf("IPAddresses deleted: %v, err %v; want 2", del, err)
	}
	b := servertest.Start(t, servertest.WithEtcd(etcd))
	_, err = b.Client.CoreV1().Services("old").Create(ctx, nodePortService("b", "", 30090), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("node port of a service stored before the records: %v, want 422", err)
	}
	for ip, svc := range map[string]string{"10.96.0.60": "old/a", "10.96.0.1": "default/kubernetes"} {
		got, err := b.Client.NetworkingV1().IPAddresses().Get(ctx, ip, metav1.GetOptions{})
		if err != nil || got.Spec.ParentRef == nil || got.Spec.ParentRef.Namespace+"/"+got.Spec.ParentRef.Name != svc {
			t.Errorf("IPAddress %s after the backfill: %+v, %v; want one naming %s", ip, got, err, svc)
		}
	}
}

// TestServiceIPFamiliesAsUpstream: the IP family policy and families are set as upstream's
// allocator sets them on a cluster of IPv4 service addresses, and what that cluster cannot
// give is refused with its texts, writing nothing: a headless Service without a selector
// requires dual-stack and is stored with both families (and stays editable), one with a
// selector gets SingleStack and IPv4; dual-stack or an IPv6 family asked of a ClusterIP
// Service is refused; a family changed under the same cluster IP gets upstream's one error.
func TestServiceIPFamiliesAsUpstream(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "fam")
	svcs := s.Client.CoreV1().Services("fam")
	headless := func(name string, selector map[string]string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: selector, Ports: []corev1.ServicePort{{Port: 80}}}}
	}
	for _, c := range []struct {
		svc    *corev1.Service
		policy corev1.IPFamilyPolicy
		fams   string
	}{
		{headless("bare", nil), corev1.IPFamilyPolicyRequireDualStack, "[IPv4 IPv6]"},
		{headless("selecting", map[string]string{"app": "web"}), corev1.IPFamilyPolicySingleStack, "[IPv4]"},
	} {
		got, err := svcs.Create(ctx, c.svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.IPFamilyPolicy == nil || *got.Spec.IPFamilyPolicy != c.policy || fmt.Sprint(got.Spec.IPFamilies) != c.fams {
			t.Errorf("%s: policy %v, families %v; want %s %s", c.svc.Name, got.Spec.IPFamilyPolicy, got.Spec.IPFamilies, c.policy, c.fams)
		}
		if _, err := svcs.Patch(ctx, c.svc.Name, types.MergePatchType, []byte(`{"metadata":{"labels":{"edited":"yes"}}}`), metav1.PatchOptions{}); err != nil {
			t.Errorf("%s: an edit of the stored service: %v", c.svc.Name, err)
		}
	}
	require := corev1.IPFamilyPolicyRequireDualStack
	refused := func(err error, want string) {
		t.Helper()
		if !apierrors.IsInvalid(err) || err.Error() != want {
			t.Fatalf("%v\nwant 422 %s", err, want)
		}
	}
	web := nodePortService("web", "", 0)
	web.Spec.Type = corev1.ServiceTypeClusterIP
	dual := web.DeepCopy()
	dual.Spec.IPFamilyPolicy = &require
	_, err := svcs.Create(ctx, dual, metav1.CreateOptions{})
	refused(err, `Service "web" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`)
	v6 := web.DeepCopy()
	v6.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
	_, err = svcs.Create(ctx, v6, metav1.CreateOptions{})
	refused(err, `Service "web" is invalid: spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster`)
	created, err := svcs.Create(ctx, web, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = svcs.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"ipFamilies":["IPv6"]}}`), metav1.PatchOptions{})
	refused(err, fmt.Sprintf("Service \"web\" is invalid: spec.clusterIPs[0]: Invalid value: %q: expected an IPv6 value as indicated by `ipFamilies[0]`", created.Spec.ClusterIP))
	if now, err := svcs.Get(ctx, "web", metav1.GetOptions{}); err != nil || now.ResourceVersion != created.ResourceVersion {
		t.Fatalf("a refused change wrote: %v", err)
	}
}

// TestServiceIPAddressesAsUpstream: each cluster IP a Service holds has the IPAddress object
// upstream's allocator writes (labels, parent reference), written and deleted in the
// Service's own transactions; an IPAddress created by hand holds its address; requested
// cluster IPs outside every ServiceCIDR, or on a range's network or broadcast address, and
// node ports outside the range are refused with upstream's texts, writing nothing; an
// added ServiceCIDR gives its addresses.
func TestServiceIPAddressesAsUpstream(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "ipa")
	svcs := s.Client.CoreV1().Services("ipa")
	ips := s.Client.NetworkingV1().IPAddresses()
	a, err := svcs.Create(ctx, nodePortService("a", "", 0), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := ips.Get(ctx, a.Spec.ClusterIP, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the IPAddress of service a's %s: %v", a.Spec.ClusterIP, err)
	}
	want := networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "ipa", Name: "a"}}
	if !equality.Semantic.DeepEqual(got.Spec, want) || got.Labels[networkingv1.LabelIPAddressFamily] != "IPv4" || got.Labels[networkingv1.LabelManagedBy] != "ipallocator.k8s.io" || got.UID == "" {
		t.Fatalf("IPAddress %s: %+v labels %v, want %+v", got.Name, got.Spec, got.Labels, want)
	}
	if _, err := ips.Get(ctx, "10.96.0.1", metav1.GetOptions{}); err != nil {
		t.Fatalf("the kubernetes Service's IPAddress: %v", err)
	}
	// Dynamic addresses and ports come from above the ranges' static bands.
	if ip := net.ParseIP(a.Spec.ClusterIP).To4(); ip[1] == 96 && ip[2] == 0 {
		t.Errorf("picked %s, in the first 256 addresses kept for requests", a.Spec.ClusterIP)
	}
	if p := a.Spec.Ports[0].NodePort; p < 30086 {
		t.Errorf("picked node port %d, in the first 86 ports kept for requests", p)
	}

	// An IPAddress made by hand holds its address.
	if _, err := ips.Create(ctx, &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: "10.96.0.77"},
		Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "elsewhere", Name: "x"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	refused := serviceRefusal(t, svcs)
	refused(nodePortService("b", "10.96.0.77", 0),
		`Service "b" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.77"]: failed to allocate IP 10.96.0.77: provided IP is already allocated`)
	refused(nodePortService("b", "192.168.100.10", 0),
		`Service "b" is invalid: spec.clusterIPs: Invalid value: ["192.168.100.10"]: failed to allocate IP 192.168.100.10: the provided network does not match the current range`)
	refused(nodePortService("b", "10.96.0.0", 0),
		`Service "b" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.0"]: failed to allocate IP 10.96.0.0: the provided IP (10.96.0.0) is not in the valid range. The range of valid IPs is 10.96.0.0/12`)
	refused(nodePortService("b", "10.111.255.255", 0),
		`Service "b" is invalid: spec.clusterIPs: Invalid value: ["10.111.255.255"]: failed to allocate IP 10.111.255.255: the provided IP (10.111.255.255) is not in the valid range. The range of valid IPs is 10.96.0.0/12`)
	refused(nodePortService("b", "", 80),
		`Service "b" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767`)

	// A ServiceCIDR added gives its addresses; the last one it gives is .254.
	if _, err := s.Client.NetworkingV1().ServiceCIDRs().Create(ctx, &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: "extra"},
		Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"192.168.100.0/24"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := svcs.Create(ctx, nodePortService("b", "192.168.100.254", 0), metav1.CreateOptions{}); err != nil {
		t.Fatalf("an address of the added ServiceCIDR: %v", err)
	}
	if _, err := ips.Get(ctx, "192.168.100.254", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	// Giving the cluster IP up (ExternalName) and deleting the Service delete the IPAddresses.
	if _, err := svcs.Patch(ctx, "a", types.MergePatchType, []byte(`{"spec":{"type":"ExternalName","externalName":"example.com","clusterIP":"","clusterIPs":null,"ports":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := svcs.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, ip := range []string{a.Spec.ClusterIP, "192.168.100.254"} {
		if _, err := ips.Get(ctx, ip, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("IPAddress %s after its Service gave it up: %v, want 404", ip, err)
		}
	}
}

// TestServiceCIDRProtection: a ServiceCIDR holding a Service's address is protected by
// kube-controller-manager's finalizer: deleted, it stays (Ready=False, Terminating, with
// upstream's texts) and gives no more addresses; once the Service is gone, it goes. Addresses
// come from the ranges ready: each of a /25, then upstream's "range is full".
func TestServiceCIDRProtection(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "cidr")
	cidrs := s.Client.NetworkingV1().ServiceCIDRs()
	svcs := s.Client.CoreV1().Services("cidr")
	condition := func(name string, want metav1.ConditionStatus, reason, message string) func() bool {
		return func() bool {
			sc, err := cidrs.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			c := apimeta.FindStatusCondition(sc.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
			return slices.Contains(sc.Finalizers, "networking.k8s.io/service-cidr-finalizer") && c != nil && c.Status == want && c.Reason == reason && c.Message == message
		}
	}
	const readyMsg, terminatingMsg = "Kubernetes Service CIDR is ready", "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR"
	for name, cidr := range map[string]string{"extra": "192.168.100.0/24", "small": "192.168.200.0/25"} {
		if _, err := cidrs.Create(ctx, &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{cidr}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, condition(name, metav1.ConditionTrue, "", readyMsg))
	}
	if _, err := svcs.Create(ctx, nodePortService("a", "192.168.100.10", 0), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Deleted, the default range and extra stay (the kubernetes Service and a hold an
	// address in each) and give no more.
	for _, name := range []string{"kubernetes", "extra"} {
		if err := cidrs.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, condition(name, metav1.ConditionFalse, "Terminating", terminatingMsg))
	}
	serviceRefusal(t, svcs)(nodePortService("b", "192.168.100.11", 0),
		`Service "b" is invalid: spec.clusterIPs: Invalid value: ["192.168.100.11"]: failed to allocate IP 192.168.100.11: the provided network does not match the current range`)
	// small gives each of its 126 addresses (the last ones found by reading what is held),
	// then none.
	got := map[string]bool{}
	for i := range 126 {
		svc, err := svcs.Create(ctx, nodePortService(fmt.Sprintf("s%d", i), "", 0), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("address %d of small: %v", i, err)
		}
		got[svc.Spec.ClusterIP] = true
	}
	for i := 1; i <= 126; i++ {
		if ip := fmt.Sprintf("192.168.200.%d", i); !got[ip] {
			t.Errorf("small's address %s not given; given %v", ip, got)
		}
	}
	_, err := svcs.Create(ctx, nodePortService("full", "", 0), metav1.CreateOptions{})
	if want := `Internal error occurred: failed to allocate a serviceIP for Service "full": range is full`; !apierrors.IsInternalError(err) || err.Error() != want {
		t.Fatalf("a Service with every ready range full: %v, want 500 %s", err, want)
	}
	if err := svcs.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		_, err := cidrs.Get(ctx, "extra", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

// TestServiceNodePortsAsUpstream: a LoadBalancer with the Local policy gets a health check
// node port as upstream allocates it, held against every other node port; a requested one
// taken or out of range gets upstream's 500; leaving the Local policy gives it back. Ports
// with one port number share a node port (a DNS Service's TCP and UDP 53), one asked for a
// later port included; a LoadBalancer without node ports gets only those it asks for.
func TestServiceNodePortsAsUpstream(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "hc")
	svcs := s.Client.CoreV1().Services("hc")
	local := func(name string, hc int32) *corev1.Service {
		svc := nodePortService(name, "", 0)
		svc.Spec.Type = corev1.ServiceTypeLoadBalancer
		svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		svc.Spec.HealthCheckNodePort = hc
		return svc
	}
	lb, err := svcs.Create(ctx, local("lb", 0), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hc := lb.Spec.HealthCheckNodePort
	if hc < 30086 || hc > 32767 || hc == lb.Spec.Ports[0].NodePort {
		t.Fatalf("health check node port %d (node port %d), want a free one in 30086-32767", hc, lb.Spec.Ports[0].NodePort)
	}
	serviceRefusal(t, svcs)(nodePortService("np", "", hc),
		fmt.Sprintf(`Service "np" is invalid: spec.ports[0].nodePort: Invalid value: %d: provided port is already allocated`, hc))
	for _, c := range []struct {
		port int32
		want string
	}{
		{hc, fmt.Sprintf("Internal error occurred: failed to allocate requested HealthCheck NodePort %d: provided port is already allocated", hc)},
		{80, "Internal error occurred: failed to allocate requested HealthCheck NodePort 80: provided port is not in the valid range. The range of valid ports is 30000-32767"},
	} {
		_, err := svcs.Create(ctx, local("lb2", c.port), metav1.CreateOptions{})
		if !apierrors.IsInternalError(err) || err.Error() != c.want {
			t.Errorf("health check node port %d asked: %v\nwant 500 %s", c.port, err, c.want)
		}
	}
	cluster, err := svcs.Patch(ctx, "lb", types.MergePatchType, []byte(`{"spec":{"externalTrafficPolicy":"Cluster"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cluster.Spec.HealthCheckNodePort != 0 {
		t.Errorf("the Cluster policy kept health check node port %d", cluster.Spec.HealthCheckNodePort)
	}
	if _, err := svcs.Create(ctx, nodePortService("np", "", hc), metav1.CreateOptions{}); err != nil {
		t.Errorf("the health check node port given back: %v", err)
	}
	dns := nodePortService("dns", "", 0)
	dns.Spec.Ports = []corev1.ServicePort{{Name: "tcp", Port: 53, Protocol: corev1.ProtocolTCP}, {Name: "udp", Port: 53, Protocol: corev1.ProtocolUDP, NodePort: 30053},
		{Name: "metrics", Port: 9153, Protocol: corev1.ProtocolTCP}}
	got, err := svcs.Create(ctx, dns, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p := got.Spec.Ports; p[0].NodePort != 30053 || p[1].NodePort != 30053 || p[2].NodePort == 0 || p[2].NodePort == 30053 {
		t.Errorf("node ports %d, %d, %d; want 30053 shared by both 53s, another for 9153", p[0].NodePort, p[1].NodePort, p[2].NodePort)
	}
	off := false
	quiet := nodePortService("quiet", "", 0)
	quiet.Spec.Type, quiet.Spec.AllocateLoadBalancerNodePorts = corev1.ServiceTypeLoadBalancer, &off
	quiet.Spec.Ports = append(quiet.Spec.Ports, corev1.ServicePort{Name: "b", Port: 81, NodePort: 30081})
	quiet.Spec.Ports[0].Name = "a"
	if got, err = svcs.Create(ctx, quiet, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if p := got.Spec.Ports; p[0].NodePort != 0 || p[1].NodePort != 30081 {
		t.Errorf("node ports of a LoadBalancer without them: %d, %d; want 0, 30081", p[0].NodePort, p[1].NodePort)
	}
	serviceRefusal(t, svcs)(nodePortService("np2", "", 30081),
		`Service "np2" is invalid: spec.ports[0].nodePort: Invalid value: 30081: provided port is already allocated`)
}

// TestServiceRangesFromFlags: --service-cluster-ip-range and --service-node-port-range set
// the default ServiceCIDR, the kubernetes Service's address, and the ranges Services take
// values from and are refused outside of, with the range in upstream's text.
func TestServiceRangesFromFlags(t *testing.T) {
	t.Parallel()
	ranges, err := registry.ParseServiceRanges("172.30.0.0/16", "20000-20099")
	if err != nil {
		t.Fatal(err)
	}
	s := servertest.Start(t, func(c *server.Config) { c.ServiceRanges = ranges })
	ctx := ctxT(t)
	mkNamespace(t, s, "flags")
	svcs := s.Client.CoreV1().Services("flags")
	kube, err := s.Client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil || kube.Spec.ClusterIP != "172.30.0.1" {
		t.Fatalf("kubernetes Service: %v, %v; want 172.30.0.1", kube, err)
	}
	waitFor(t, func() bool {
		def, err := s.Client.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
		return err == nil && slices.Equal(def.Spec.CIDRs, []string{"172.30.0.0/16"})
	})
	svc, err := svcs.Create(ctx, nodePortService("a", "", 0), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ip, port := net.ParseIP(svc.Spec.ClusterIP).To4(), svc.Spec.Ports[0].NodePort
	if ip == nil || ip[0] != 172 || ip[1] != 30 || port < 20016 || port > 20099 {
		t.Fatalf("picked %s and node port %d; want 172.30.x.x and 20016-20099 (above the first 16 ports)", svc.Spec.ClusterIP, port)
	}
	serviceRefusal(t, svcs)(nodePortService("b", "", 30080),
		`Service "b" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is not in the valid range. The range of valid ports is 20000-20099`)
	serviceRefusal(t, svcs)(nodePortService("b", "10.96.0.10", 0),
		`Service "b" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.10"]: failed to allocate IP 10.96.0.10: the provided network does not match the current range`)
	if _, err := registry.ParseServiceRanges("10.0.0.0/8", "30000-32767"); err == nil || err.Error() != "service-cluster-ip-range: specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be >= 12" {
		t.Errorf("a /8: %v, want kube-apiserver's refusal", err)
	}
	for _, bad := range [][2]string{{"fd00::/108", "30000-32767"}, {"10.0.0.0/30", "30000-32767"}, {"10.96.0.0/12", "70000-70010"}, {"10.96.0.0/12", "nope"}} {
		if _, err := registry.ParseServiceRanges(bad[0], bad[1]); err == nil {
			t.Errorf("ranges %q accepted", bad)
		}
	}
}
