package validation

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/randfill"
)

// resourceAndServiceCIDRKinds are the resource.k8s.io kinds, ServiceCIDRs and IPAddresses.
func resourceAndServiceCIDRKinds() []runtime.Object {
	return []runtime.Object{
		&resourcev1.DeviceClass{}, &resourcev1.ResourceClaim{}, &resourcev1.ResourceClaimTemplate{}, &resourcev1.ResourceSlice{}, &resourcev1.DeviceTaintRule{},
		&networkingv1.ServiceCIDR{}, &networkingv1.IPAddress{},
	}
}

func TestKindsCRandomObjectsNeverPanic(t *testing.T) {
	for _, k := range resourceAndServiceCIDRKinds() {
		for seed := int64(0); seed < 60; seed++ {
			obj := k.DeepCopyObject()
			randfill.NewWithSeed(seed).NilChance(0.3).NumElements(0, 3).MaxDepth(12).Funcs(
				func(q *resource.Quantity, c randfill.Continue) {
					*q = *resource.NewMilliQuantity(c.Int63n(1<<40)-(1<<20), resource.DecimalSI)
				},
				func(r *runtime.RawExtension, c randfill.Continue) {
					if c.Bool() {
						r.Raw = []byte(`{"a":1}`)
					}
				},
			).Fill(obj)
			exercise(t, obj, fmt.Sprintf("seed %d", seed))
		}
	}
}

func TestKindsCEmptyObjectsAreInvalid(t *testing.T) {
	for _, k := range resourceAndServiceCIDRKinds() {
		if errs := Validate(k.DeepCopyObject()); len(errs) == 0 {
			t.Errorf("%T: an empty object validates", k)
		}
	}
}

// TestKindsCTexts checks upstream's wording of the main field errors.
func TestKindsCTexts(t *testing.T) {
	om := metav1.ObjectMeta{Name: "x", Namespace: "ns"}
	cluster := metav1.ObjectMeta{Name: "x"}
	req := func(e *resourcev1.ExactDeviceRequest, subs ...resourcev1.DeviceSubRequest) *resourcev1.ResourceClaim {
		return &resourcev1.ResourceClaim{ObjectMeta: om, Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "r", Exactly: e, FirstAvailable: subs}}}}}
	}
	node, yes := "n", true
	slice := func(mut func(*resourcev1.ResourceSliceSpec)) *resourcev1.ResourceSlice {
		s := &resourcev1.ResourceSlice{ObjectMeta: cluster, Spec: resourcev1.ResourceSliceSpec{Driver: "d.example.com", NodeName: &node,
			Pool: resourcev1.ResourcePool{Name: "p", ResourceSliceCount: 1}}}
		mut(&s.Spec)
		return s
	}
	tests := []struct {
		name string
		obj  runtime.Object
		want string
	}{
		{"no request kind", req(nil), "spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required"},
		{"both request kinds", req(&resourcev1.ExactDeviceRequest{DeviceClassName: "c", AllocationMode: "ExactCount", Count: 1}, resourcev1.DeviceSubRequest{Name: "s", DeviceClassName: "c", AllocationMode: "ExactCount", Count: 1}),
			"spec.devices.requests[0]: Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"},
		{"unknown mode", req(&resourcev1.ExactDeviceRequest{DeviceClassName: "c", AllocationMode: "Some"}),
			`spec.devices.requests[0].exactly.allocationMode: Unsupported value: "Some": supported values: "All", "ExactCount"`},
		{"zero count", req(&resourcev1.ExactDeviceRequest{DeviceClassName: "c", AllocationMode: "ExactCount"}),
			"spec.devices.requests[0].exactly.count: Invalid value: 0: must be greater than zero"},
		{"sub-request without class", req(nil, resourcev1.DeviceSubRequest{Name: "s", AllocationMode: "ExactCount", Count: 1}),
			"spec.devices.requests[0].firstAvailable[0].deviceClassName: Required value"},
		{"slice without pool name", slice(func(s *resourcev1.ResourceSliceSpec) { s.Pool.Name = "" }), "spec.pool.name: Required value"},
		{"slice with zero slice count", slice(func(s *resourcev1.ResourceSliceSpec) { s.Pool.ResourceSliceCount = 0 }),
			"spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero"},
		{"slice with two node choices", slice(func(s *resourcev1.ResourceSliceSpec) { s.AllNodes = new(bool); *s.AllNodes = true }),
			"spec: Invalid value: \"{`nodeName`, `allNodes`}\": exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"},
		{"slice with an empty selector term", slice(func(s *resourcev1.ResourceSliceSpec) {
			s.NodeName = nil
			s.NodeSelector = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: "Near"}}}}}
		}), `spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator`},
		{"device node without per-device selection", slice(func(s *resourcev1.ResourceSliceSpec) {
			s.Devices = []resourcev1.Device{{Name: "d", NodeName: &node}}
		}), "spec.devices[0]: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec"},
		{"device without its node", slice(func(s *resourcev1.ResourceSliceSpec) {
			s.NodeName, s.PerDeviceNodeSelection = nil, &yes
			s.Devices = []resourcev1.Device{{Name: "d"}}
		}), "spec.devices[0]: Required value: exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"},
		{"device with two node choices", slice(func(s *resourcev1.ResourceSliceSpec) {
			s.NodeName, s.PerDeviceNodeSelection = nil, &yes
			s.Devices = []resourcev1.Device{{Name: "d", NodeName: &node, AllNodes: &yes}}
		}), "spec.devices[0]: Invalid value: \"{`nodeName`, `allNodes`}\": exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"},
		{"device with an empty node name", slice(func(s *resourcev1.ResourceSliceSpec) {
			s.NodeName, s.PerDeviceNodeSelection = nil, &yes
			s.Devices = []resourcev1.Device{{Name: "d", NodeName: new(string), NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{}}}}}
		}), `spec.devices[0].nodeName: Invalid value: "": must not be empty`},
		{"three cidrs", &networkingv1.ServiceCIDR{ObjectMeta: cluster, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.0.0.0/24", "10.1.0.0/24", "10.2.0.0/24"}}},
			`spec.cidrs: Invalid value: {"CIDRs":["10.0.0.0/24","10.1.0.0/24","10.2.0.0/24"]}: may only hold up to 2 values`},
		{"two cidrs of one family", &networkingv1.ServiceCIDR{ObjectMeta: cluster, Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.0.0.0/24", "10.1.0.0/24"}}},
			`spec.cidrs: Invalid value: ["10.0.0.0/24","10.1.0.0/24"]: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64`},
		{"non-canonical ip name", &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: "2001:db8::0"}, Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Name: "s"}}},
			`metadata.name: Invalid value: "2001:db8::0": must be a canonical format IP address`},
		{"parent without resource", &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: "10.0.0.1"}, Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Name: "s"}}},
			"spec.parentRef.resource: Required value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs := Validate(tc.obj)
			if len(errs) != 1 || errs[0].Error() != tc.want {
				t.Errorf("errors = %v\nwant   %s", errs, tc.want)
			}
		})
	}
}

func TestResourceClaimStatusUpdate(t *testing.T) {
	node := "n"
	old := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", ResourceVersion: "1"},
		Status: resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{}}}
	changed := old.DeepCopy()
	changed.Status.Allocation.NodeSelector = nil
	changed.Status.Allocation.Devices.Results = []resourcev1.DeviceRequestAllocationResult{{Request: "r", Driver: "d.example.com", Pool: "p", Device: node}}
	if errs := ValidateUpdate(changed, old); len(errs) != 1 || errs[0].Type != "FieldValueInvalid" || errs[0].Field != "status.allocation" || errs[0].Detail != "field is immutable" {
		t.Errorf("allocation change: %v", errs)
	}
	// A new allocation's node selector is validated as a pod's.
	unallocated := old.DeepCopy()
	unallocated.Status.Allocation = nil
	allocated := unallocated.DeepCopy()
	allocated.Status.Allocation = &resourcev1.AllocationResult{NodeSelector: &corev1.NodeSelector{}}
	if errs := ValidateUpdate(allocated, unallocated); fmt.Sprint(errs) != "[status.allocation.nodeSelector.nodeSelectorTerms: Required value: must have at least one node selector term]" {
		t.Errorf("allocation with an empty node selector: %v", errs)
	}
	reserved := old.DeepCopy()
	reserved.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: "u"}, {Resource: "pods", Name: "q", UID: "u"}, {}}
	want := `[status.reservedFor[1]: Duplicate value: "u" status.reservedFor[2].resource: Required value status.reservedFor[2].name: Required value status.reservedFor[2].uid: Required value]`
	if errs := ValidateUpdate(reserved, old); fmt.Sprint(errs) != want {
		t.Errorf("reservedFor:\n got %v\nwant %s", errs, want)
	}
}

// TestDeviceTaintRule checks upstream's errors for DeviceTaintRules: the selector's names,
// the taint's key, value and effect, and an effect checked on update only when it changes.
func TestDeviceTaintRule(t *testing.T) {
	str := func(s string) *string { return &s }
	rule := func(sel *resourcev1.DeviceTaintSelector, taint resourcev1.DeviceTaint) *resourcev1.DeviceTaintRule {
		return &resourcev1.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "r", ResourceVersion: "1"}, Spec: resourcev1.DeviceTaintRuleSpec{DeviceSelector: sel, Taint: taint}}
	}
	ok := resourcev1.DeviceTaint{Key: "example.com/k", Effect: resourcev1.DeviceTaintEffectNoSchedule}
	for _, tc := range []struct {
		name string
		r    *resourcev1.DeviceTaintRule
		want string
	}{
		{"valid", rule(&resourcev1.DeviceTaintSelector{Driver: str("gpu.example.com"), Pool: str("a/b"), Device: str("gpu-0")}, ok), "[]"},
		{"bad pool", rule(&resourcev1.DeviceTaintSelector{Pool: str("a//b")}, ok),
			`[spec.deviceSelector.pool: Invalid value: "": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]`},
		{"bad device", rule(&resourcev1.DeviceTaintSelector{Device: str("GPU")}, ok),
			`[spec.deviceSelector.device: Invalid value: "GPU": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')]`},
		{"no effect", rule(nil, resourcev1.DeviceTaint{Key: "k"}), `[spec.taint.effect: Required value]`},
		{"no key", rule(nil, resourcev1.DeviceTaint{Effect: resourcev1.DeviceTaintEffectNone}), `[spec.taint.key: Invalid value: "": name part must be non-empty spec.taint.key: Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')]`},
		{"bad value", rule(nil, resourcev1.DeviceTaint{Key: "k", Value: "-x", Effect: resourcev1.DeviceTaintEffectNone}),
			`[spec.taint.value: Invalid value: "-x": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fmt.Sprint(DeviceTaintRule(tc.r)); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	// An effect no longer supported passes an update that keeps it, as upstream.
	old := rule(nil, resourcev1.DeviceTaint{Key: "k", Effect: "Legacy"})
	upd := old.DeepCopy()
	upd.Spec.Taint.Value = "v"
	if errs := DeviceTaintRuleUpdate(upd, old); len(errs) != 0 {
		t.Errorf("update keeping the effect: %v", errs)
	}
	upd.Spec.Taint.Effect = "Other"
	if got := fmt.Sprint(DeviceTaintRuleUpdate(upd, old)); got != `[spec.taint.effect: Unsupported value: "Other": supported values: "NoExecute", "NoSchedule", "None"]` {
		t.Errorf("update changing the effect: %s", got)
	}
}
