package integration

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestKindsCProtobuf writes a ResourceClaim and a ServiceCIDR through protobuf clients,
// as kubectl's typed clients may send them.
func TestKindsCProtobuf(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	mkNamespace(t, s, "pb")
	cfg := rest.CopyConfig(s.Config)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	c, err := cs.ResourceV1().ResourceClaims("pb").Create(ctx, exactClaim("pb", "gpu", 3), metav1.CreateOptions{})
	if err != nil || c.Spec.Devices.Requests[0].Exactly.Count != 3 || c.Spec.Devices.Requests[0].Exactly.AllocationMode != resourcev1.DeviceAllocationModeExactCount {
		t.Fatalf("protobuf claim: %+v, err %v", c, err)
	}
	sc, err := cs.NetworkingV1().ServiceCIDRs().Create(ctx, &networkingv1.ServiceCIDR{ObjectMeta: meta("pb"), Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.250.0.0/24"}}}, metav1.CreateOptions{})
	if err != nil || len(sc.Spec.CIDRs) != 1 {
		t.Fatalf("protobuf ServiceCIDR: %+v, err %v", sc, err)
	}
}

// exactClaim is a claim asking for count devices of class (count 0: the default).
func exactClaim(name, class string, count int64) *resourcev1.ResourceClaim {
	return &resourcev1.ResourceClaim{ObjectMeta: meta(name), Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
		Requests: []resourcev1.DeviceRequest{{Name: "req", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class, Count: count}}}}}}
}

// TestResourceKinds walks the resource.k8s.io/v1 (DRA) kinds through their typed
// clients, checks upstream's defaults, one validation error of each kind, the
// immutable claim spec and a count quota on claim templates.
func TestResourceKinds(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "dra"
	mkNamespace(t, s, ns)
	rc := s.Client.ResourceV1()
	node := "node-1"
	slice := func(name string) *resourcev1.ResourceSlice {
		return &resourcev1.ResourceSlice{ObjectMeta: meta(name), Spec: resourcev1.ResourceSliceSpec{
			Driver: "gpu.example.com", Pool: resourcev1.ResourcePool{Name: "pool", ResourceSliceCount: 1}, NodeName: &node,
			Devices: []resourcev1.Device{{Name: "gpu-0"}}}}
	}
	template := func(name string) *resourcev1.ResourceClaimTemplate {
		return &resourcev1.ResourceClaimTemplate{ObjectMeta: meta(name), Spec: resourcev1.ResourceClaimTemplateSpec{Spec: exactClaim("", "gpu", 1).Spec}}
	}
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"deviceclasses", kindCase[*resourcev1.DeviceClass, *resourcev1.DeviceClassList]{
			client: rc.DeviceClasses(), obj: &resourcev1.DeviceClass{ObjectMeta: meta("gpu-class")},
			spec: func(o *resourcev1.DeviceClass) {
				o.Spec.Selectors = []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`}}}
			},
			specOf:     func(o *resourcev1.DeviceClass) interface{} { return len(o.Spec.Selectors) },
			generation: true,
		}.run},
		{"resourceclaims", kindCase[*resourcev1.ResourceClaim, *resourcev1.ResourceClaimList]{
			client: rc.ResourceClaims(ns), obj: exactClaim("claim", "gpu", 1),
			status: func(o *resourcev1.ResourceClaim) {
				o.Status.Allocation = &resourcev1.AllocationResult{}
				o.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: "uid-1"}}
			},
			statusOf: func(o *resourcev1.ResourceClaim) interface{} { return len(o.Status.ReservedFor) },
		}.run},
		{"resourceclaimtemplates", kindCase[*resourcev1.ResourceClaimTemplate, *resourcev1.ResourceClaimTemplateList]{
			client: rc.ResourceClaimTemplates(ns), obj: template("tpl"),
		}.run},
		{"resourceslices", kindCase[*resourcev1.ResourceSlice, *resourcev1.ResourceSliceList]{
			client: rc.ResourceSlices(), obj: slice("slice"),
			spec: func(o *resourcev1.ResourceSlice) {
				o.Spec.Devices = append(o.Spec.Devices, resourcev1.Device{Name: "gpu-1"})
			},
			specOf:     func(o *resourcev1.ResourceSlice) interface{} { return len(o.Spec.Devices) },
			generation: true,
		}.run},
	}
	for _, c := range cases {
		t.Run(c.name, c.run)
	}

	ctx := ctxT(t)
	// Upstream's request defaults: ExactCount, one device.
	c, err := rc.ResourceClaims(ns).Create(ctx, exactClaim("defaults", "gpu", 0), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if e := c.Spec.Devices.Requests[0].Exactly; e.AllocationMode != resourcev1.DeviceAllocationModeExactCount || e.Count != 1 {
		t.Errorf("claim request defaults: mode %q count %d, want ExactCount 1", e.AllocationMode, e.Count)
	}
	// The claim spec is immutable.
	c.Spec.Devices.Requests[0].Exactly.Count = 2
	if _, err := rc.ResourceClaims(ns).Update(ctx, c, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("claim spec update: err = %v, want 422", err)
	}

	// ResourceSlices are selectable by spec.nodeName and spec.driver, as upstream's.
	other := "node-2"
	for name, n := range map[string]*string{"on-1": &node, "on-2": &other} {
		sl := slice(name)
		sl.Spec.NodeName = n
		if _, err := rc.ResourceSlices().Create(ctx, sl, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	sl, err := rc.ResourceSlices().List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=node-2,spec.driver=gpu.example.com"})
	if err != nil || len(sl.Items) != 1 || sl.Items[0].Name != "on-2" {
		t.Errorf("slices of node-2: %v, err %v", sl, err)
	}

	// Consumers are reserved only for an allocated claim.
	c.Spec.Devices.Requests[0].Exactly.Count = 1
	c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: "uid-1"}}
	_, err = rc.ResourceClaims(ns).UpdateStatus(ctx, c, metav1.UpdateOptions{})
	expectInvalid(t, err, "ResourceClaim.resource.k8s.io \"defaults\" is invalid: status.reservedFor: Forbidden: may not be specified when `allocated` is not set")

	// One validation error of each kind, with upstream's text.
	_, err = rc.DeviceClasses().Create(ctx, &resourcev1.DeviceClass{ObjectMeta: meta("bad"), Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{}}}}, metav1.CreateOptions{})
	expectInvalid(t, err, `DeviceClass.resource.k8s.io "bad" is invalid: spec.selectors[0].cel: Required value`)
	_, err = rc.ResourceClaims(ns).Create(ctx, exactClaim("bad", "", 1), metav1.CreateOptions{})
	expectInvalid(t, err, `ResourceClaim.resource.k8s.io "bad" is invalid: spec.devices.requests[0].exactly.deviceClassName: Required value`)
	all := exactClaim("bad-all", "gpu", 2)
	all.Spec.Devices.Requests[0].Exactly.AllocationMode = resourcev1.DeviceAllocationModeAll
	_, err = rc.ResourceClaims(ns).Create(ctx, all, metav1.CreateOptions{})
	expectInvalid(t, err, `ResourceClaim.resource.k8s.io "bad-all" is invalid: spec.devices.requests[0].exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All'`)
	badTpl := template("bad")
	badTpl.Spec.Spec.Devices.Requests[0].Exactly.Count = -1
	_, err = rc.ResourceClaimTemplates(ns).Create(ctx, badTpl, metav1.CreateOptions{})
	expectInvalid(t, err, `ResourceClaimTemplate.resource.k8s.io "bad" is invalid: spec.spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero`)
	badSlice := slice("bad")
	badSlice.Spec.NodeName = nil
	_, err = rc.ResourceSlices().Create(ctx, badSlice, metav1.CreateOptions{})
	expectInvalid(t, err, "ResourceSlice.resource.k8s.io \"bad\" is invalid: spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required")

	// count/resourceclaimtemplates.resource.k8s.io quota refuses the second template.
	const qns = "dra-quota"
	mkNamespace(t, s, qns)
	mkQuota(t, s, qns, "q", map[string]string{"count/resourceclaimtemplates.resource.k8s.io": "1"})
	if _, err := rc.ResourceClaimTemplates(qns).Create(ctx, template("one"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = rc.ResourceClaimTemplates(qns).Create(ctx, template("two"), metav1.CreateOptions{})
	expectForbidden(t, err, `resourceclaimtemplates.resource.k8s.io "two" is forbidden: exceeded quota: q, requested: count/resourceclaimtemplates.resource.k8s.io=1, used: count/resourceclaimtemplates.resource.k8s.io=1, limited: count/resourceclaimtemplates.resource.k8s.io=1`)
	s.CheckInvariant()
}

// TestResourceClaimDeviceQuota checks upstream's resource claim evaluator: claims charge
// count/resourceclaims.resource.k8s.io and, per device class, the devices they request
// (a firstAvailable request its largest alternative per class), and a quota refuses the
// claim that would exceed it with upstream's text.
func TestResourceClaimDeviceQuota(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "dra-devices"
	mkNamespace(t, s, ns)
	ctx := ctxT(t)
	claims := s.Client.ResourceV1().ResourceClaims(ns)
	mkQuota(t, s, ns, "gpus", map[string]string{"gpu.deviceclass.resource.k8s.io/devices": "2", "count/resourceclaims.resource.k8s.io": "10"})
	if _, err := claims.Create(ctx, exactClaim("one", "gpu", 0), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A firstAvailable request charges, per class, its largest sub-request: gpu 1 (not 1+1).
	alt := &resourcev1.ResourceClaim{ObjectMeta: meta("alt"), Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
		Name: "req", FirstAvailable: []resourcev1.DeviceSubRequest{{Name: "big", DeviceClassName: "gpu", Count: 1}, {Name: "other", DeviceClassName: "fpga", Count: 3}, {Name: "small", DeviceClassName: "gpu", Count: 1}},
	}}}}}
	if _, err := claims.Create(ctx, alt, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, ns, "gpus", map[string]string{"gpu.deviceclass.resource.k8s.io/devices": "2", "count/resourceclaims.resource.k8s.io": "2"})
	_, err := claims.Create(ctx, exactClaim("third", "gpu", 1), metav1.CreateOptions{})
	expectForbidden(t, err, `resourceclaims.resource.k8s.io "third" is forbidden: exceeded quota: gpus, requested: gpu.deviceclass.resource.k8s.io/devices=1, used: gpu.deviceclass.resource.k8s.io/devices=2, limited: gpu.deviceclass.resource.k8s.io/devices=2`)
	// Another class is not limited; allocationMode All charges 32 of its class.
	allReq := exactClaim("all-fpga", "fpga", 0)
	allReq.Spec.Devices.Requests[0].Exactly.AllocationMode = resourcev1.DeviceAllocationModeAll
	if _, err := claims.Create(ctx, allReq, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mkQuota(t, s, ns, "fpgas", map[string]string{"fpga.deviceclass.resource.k8s.io/devices": "100"})
	waitFor(t, func() bool { return used(t, s, ns, "fpgas")["fpga.deviceclass.resource.k8s.io/devices"] == "35" })
	// Deleting a claim gives its devices back.
	if err := claims.Delete(ctx, "one", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := claims.Create(ctx, exactClaim("third", "gpu", 1), metav1.CreateOptions{}); err != nil {
		t.Fatalf("claim after a delete: %v", err)
	}

	// count/resourceclaims.resource.k8s.io refuses the second claim.
	const cns = "dra-count"
	mkNamespace(t, s, cns)
	mkQuota(t, s, cns, "claims", map[string]string{"count/resourceclaims.resource.k8s.io": "1"})
	if _, err := s.Client.ResourceV1().ResourceClaims(cns).Create(ctx, exactClaim("one", "gpu", 0), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Client.ResourceV1().ResourceClaims(cns).Create(ctx, exactClaim("two", "gpu", 0), metav1.CreateOptions{})
	expectForbidden(t, err, `resourceclaims.resource.k8s.io "two" is forbidden: exceeded quota: claims, requested: count/resourceclaims.resource.k8s.io=1, used: count/resourceclaims.resource.k8s.io=1, limited: count/resourceclaims.resource.k8s.io=1`)
	s.CheckInvariant()
}

// TestServiceCIDRKinds checks the default ServiceCIDR, the ServiceCIDR and IPAddress
// kinds through their typed clients and one validation error of each.
func TestServiceCIDRKinds(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	nw := s.Client.NetworkingV1()
	// kube-controller-manager's service-cidr-controller protects it with its finalizer and
	// reports it Ready with its own message.
	var def *networkingv1.ServiceCIDR
	waitFor(t, func() bool {
		var err error
		def, err = nw.ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("default ServiceCIDR: %v", err)
		}
		ready := apimeta.FindStatusCondition(def.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
		return slices.Contains(def.Finalizers, "networking.k8s.io/service-cidr-finalizer") && ready != nil && ready.Message == "Kubernetes Service CIDR is ready"
	})
	if ready := apimeta.FindStatusCondition(def.Status.Conditions, networkingv1.ServiceCIDRConditionReady); !slices.Equal(def.Spec.CIDRs, []string{"10.96.0.0/12"}) || ready.Status != metav1.ConditionTrue || ready.Reason != "" {
		t.Errorf("default ServiceCIDR: cidrs %v, Ready %+v", def.Spec.CIDRs, ready)
	}
	// Deleted, it stays while the kubernetes Service's address is in it (Ready=False,
	// Terminating), as upstream's does; gone (its finalizer removed by hand), it is created
	// again and made Ready, as upstream's controller does.
	if err := nw.ServiceCIDRs().Delete(ctx, "kubernetes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		cur, err := nw.ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ready := apimeta.FindStatusCondition(cur.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
		return cur.DeletionTimestamp != nil && ready != nil && ready.Status == metav1.ConditionFalse && ready.Reason == "Terminating" &&
			ready.Message == "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR"
	})
	if _, err := nw.ServiceCIDRs().Patch(ctx, "kubernetes", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		again, err := nw.ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
		return err == nil && again.UID != def.UID && apimeta.IsStatusConditionTrue(again.Status.Conditions, networkingv1.ServiceCIDRConditionReady)
	})
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"servicecidrs", kindCase[*networkingv1.ServiceCIDR, *networkingv1.ServiceCIDRList]{
			client: nw.ServiceCIDRs(), obj: &networkingv1.ServiceCIDR{ObjectMeta: meta("extra"), Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.200.0.0/16"}}},
			spec:   func(o *networkingv1.ServiceCIDR) { o.Spec.CIDRs = append(o.Spec.CIDRs, "fd00:10:200::/108") },
			specOf: func(o *networkingv1.ServiceCIDR) interface{} { return len(o.Spec.CIDRs) },
			status: func(o *networkingv1.ServiceCIDR) {
				o.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Test", LastTransitionTime: metav1.Now()}}
			},
			statusOf: func(o *networkingv1.ServiceCIDR) interface{} { // the controller sets its own Ready, without a reason
				if c := apimeta.FindStatusCondition(o.Status.Conditions, "Ready"); c != nil {
					return c.Reason
				}
				return nil
			},
			finalized: true,
		}.run},
		{"ipaddresses", kindCase[*networkingv1.IPAddress, *networkingv1.IPAddressList]{
			client: nw.IPAddresses(), obj: &networkingv1.IPAddress{ObjectMeta: meta("10.200.0.5"), Spec: networkingv1.IPAddressSpec{
				ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "web"}}},
		}.run},
	}
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
	_, err := nw.ServiceCIDRs().Create(ctx, &networkingv1.ServiceCIDR{ObjectMeta: meta("bad")}, metav1.CreateOptions{})
	expectInvalid(t, err, `ServiceCIDR.networking.k8s.io "bad" is invalid: spec.cidrs: Required value: at least one CIDR required`)
	_, err = nw.IPAddresses().Create(ctx, &networkingv1.IPAddress{ObjectMeta: meta("10.200.0.6")}, metav1.CreateOptions{})
	expectInvalid(t, err, `IPAddress.networking.k8s.io "10.200.0.6" is invalid: spec.parentRef: Required value`)
	_, err = nw.IPAddresses().Create(ctx, &networkingv1.IPAddress{ObjectMeta: meta("010.200.0.6"), Spec: networkingv1.IPAddressSpec{
		ParentRef: &networkingv1.ParentReference{Resource: "services", Name: "web"}}}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Errorf("non-canonical IPAddress name: err = %v, want 422", err)
	}
	s.CheckInvariant()
}

// TestBindingsResource binds a pod through POST namespaces/<ns>/bindings, which
// discovery lists as create-only.
func TestBindingsResource(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "bind"
	mkNamespace(t, s, ns)
	ctx := ctxT(t)
	if _, err := s.Client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: meta("p"), Spec: podTemplate("web").Spec}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &corev1.Binding{ObjectMeta: meta("p"), Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}
	if err := s.Client.CoreV1().RESTClient().Post().Namespace(ns).Resource("bindings").Body(binding).Do(ctx).Error(); err != nil {
		t.Fatalf("create binding: %v", err)
	}
	pod, err := s.Client.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.NodeName != "node-1" {
		t.Errorf("bound pod nodeName = %q", pod.Spec.NodeName)
	}
	err = s.Client.CoreV1().RESTClient().Post().Namespace(ns).Resource("bindings").Body(binding).Do(ctx).Error()
	if want := `Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "node-1"`; !apierrors.IsConflict(err) || err.Error() != want {
		t.Errorf("second binding: err = %v, want %s", err, want)
	}
	missing := &corev1.Binding{ObjectMeta: meta("nope"), Target: corev1.ObjectReference{Name: "node-1"}}
	if err := s.Client.CoreV1().RESTClient().Post().Namespace(ns).Resource("bindings").Body(missing).Do(ctx).Error(); !apierrors.IsNotFound(err) {
		t.Errorf("binding a missing pod: err = %v, want NotFound", err)
	}
	list, err := s.Client.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range list.APIResources {
		if r.Name == "bindings" {
			found = true
			if !r.Namespaced || r.Kind != "Binding" || !slices.Equal(r.Verbs, []string{"create"}) {
				t.Errorf("discovery bindings = %+v", r)
			}
		}
	}
	if !found {
		t.Error("discovery does not list bindings")
	}
}
