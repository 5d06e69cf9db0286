package evaluator

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestResourceClaimUsage(t *testing.T) {
	exact := func(class string, mode resourcev1.DeviceAllocationMode, count int64) resourcev1.DeviceRequest {
		return resourcev1.DeviceRequest{Name: "r", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class, AllocationMode: mode, Count: count}}
	}
	sub := func(class string, mode resourcev1.DeviceAllocationMode, count int64) resourcev1.DeviceSubRequest {
		return resourcev1.DeviceSubRequest{Name: "s", DeviceClassName: class, AllocationMode: mode, Count: count}
	}
	claim := func(reqs ...resourcev1.DeviceRequest) *resourcev1.ResourceClaim {
		return &resourcev1.ResourceClaim{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: reqs}}}
	}
	const ec, all = resourcev1.DeviceAllocationModeExactCount, resourcev1.DeviceAllocationModeAll
	tests := []struct {
		name  string
		claim *resourcev1.ResourceClaim
		want  string
	}{
		{"no requests", claim(), "count/resourceclaims.resource.k8s.io=1"},
		{"exact count", claim(exact("gpu", ec, 2)),
			"count/resourceclaims.resource.k8s.io=1 gpu.deviceclass.resource.k8s.io/devices=2 requests.deviceclass.resource.kubernetes.io/gpu=2"},
		{"all is the most a claim can get", claim(exact("gpu", all, 0)),
			"count/resourceclaims.resource.k8s.io=1 gpu.deviceclass.resource.k8s.io/devices=32 requests.deviceclass.resource.kubernetes.io/gpu=32"},
		{"unknown mode counts nothing", claim(exact("gpu", "Some", 5)),
			"count/resourceclaims.resource.k8s.io=1 gpu.deviceclass.resource.k8s.io/devices=0"},
		{"requests of one class add up", claim(exact("gpu", ec, 1), exact("gpu", ec, 3), exact("fpga", ec, 1)),
			"count/resourceclaims.resource.k8s.io=1 fpga.deviceclass.resource.k8s.io/devices=1 gpu.deviceclass.resource.k8s.io/devices=4 requests.deviceclass.resource.kubernetes.io/fpga=1 requests.deviceclass.resource.kubernetes.io/gpu=4"},
		{"first available takes the max per class", claim(resourcev1.DeviceRequest{Name: "r", FirstAvailable: []resourcev1.DeviceSubRequest{
			sub("gpu", ec, 2), sub("gpu", ec, 1), sub("fpga", ec, 4), sub("gpu", ec, 3)}}),
			"count/resourceclaims.resource.k8s.io=1 fpga.deviceclass.resource.k8s.io/devices=4 gpu.deviceclass.resource.k8s.io/devices=3 requests.deviceclass.resource.kubernetes.io/fpga=4 requests.deviceclass.resource.kubernetes.io/gpu=3"},
		{"first available in unknown modes charges no class", claim(resourcev1.DeviceRequest{Name: "r", FirstAvailable: []resourcev1.DeviceSubRequest{sub("gpu", "Some", 2)}}),
			"count/resourceclaims.resource.k8s.io=1"},
		{"first available with all", claim(resourcev1.DeviceRequest{Name: "r", FirstAvailable: []resourcev1.DeviceSubRequest{sub("gpu", ec, 2), sub("gpu", all, 0)}}, exact("gpu", ec, 1)),
			"count/resourceclaims.resource.k8s.io=1 gpu.deviceclass.resource.k8s.io/devices=33 requests.deviceclass.resource.kubernetes.io/gpu=33"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResourceClaims{}.Usage(tc.claim)
			if err != nil {
				t.Fatal(err)
			}
			if show(got) != tc.want {
				t.Errorf("usage = %s, want %s", show(got), tc.want)
			}
		})
	}
	if _, err := (ResourceClaims{}).Usage(&corev1.Pod{}); err == nil {
		t.Error("usage of a pod: no error")
	}
}

func TestResourceClaimMatchingAndRegistry(t *testing.T) {
	names := []corev1.ResourceName{"count/resourceclaims.resource.k8s.io", "gpu.deviceclass.resource.k8s.io/devices", "pods", "requests.cpu", "resourceclaims"}
	got := ResourceClaims{}.MatchingResources(names)
	if len(got) != 2 || got[0] != names[0] || got[1] != names[1] {
		t.Errorf("matching = %v", got)
	}
	r := NewRegistry()
	if _, ok := r.Get(resourceClaimsGR).(ResourceClaims); !ok {
		t.Errorf("registry evaluator for resourceclaims = %T", r.Get(resourceClaimsGR))
	}
	grs := r.GroupResourcesFor([]corev1.ResourceName{"gpu.deviceclass.resource.k8s.io/devices"})
	if len(grs) != 1 || grs[0] != (schema.GroupResource{Group: "resource.k8s.io", Resource: "resourceclaims"}) {
		t.Errorf("group resources for a device-class name = %v", grs)
	}
	if !(ResourceClaims{}).Handles("") || (ResourceClaims{}).Handles("status") {
		t.Error("handles: want the claim only")
	}
}

// classes is a fixed DeviceClasses.
type classes []*resourcev1.DeviceClass

func (c classes) DeviceClasses() ([]*resourcev1.DeviceClass, error) { return c, nil }

func deviceClass(name, extended string) *resourcev1.DeviceClass {
	c := &resourcev1.DeviceClass{}
	c.Name = name
	if extended != "" {
		c.Spec.ExtendedResourceName = &extended
	}
	return c
}

func TestResourceClaimExtendedResources(t *testing.T) {
	ev := ResourceClaims{Classes: classes{deviceClass("gpu", "example.com/gpu"), deviceClass("fpga", "")}}
	exact := func(class string, count int64) resourcev1.DeviceRequest {
		return resourcev1.DeviceRequest{Name: "r", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: count}}
	}
	claim := func(reqs ...resourcev1.DeviceRequest) *resourcev1.ResourceClaim {
		return &resourcev1.ResourceClaim{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: reqs}}}
	}
	podOwned := claim(exact("gpu", 2))
	podOwned.Annotations = map[string]string{resourcev1.ExtendedResourceClaimAnnotation: "true"}
	tr := true
	podOwned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "u", Controller: &tr}}
	tests := []struct {
		name  string
		claim *resourcev1.ResourceClaim
		want  string
	}{
		{"explicit and implicit names", claim(exact("gpu", 2)),
			"count/resourceclaims.resource.k8s.io=1 gpu.deviceclass.resource.k8s.io/devices=2 requests.deviceclass.resource.kubernetes.io/gpu=2 requests.example.com/gpu=2"},
		{"a class without an extended resource name: the implicit one", claim(exact("fpga", 1)),
			"count/resourceclaims.resource.k8s.io=1 fpga.deviceclass.resource.k8s.io/devices=1 requests.deviceclass.resource.kubernetes.io/fpga=1"},
		{"an unknown class: the implicit one", claim(exact("tpu", 3)),
			"count/resourceclaims.resource.k8s.io=1 requests.deviceclass.resource.kubernetes.io/tpu=3 tpu.deviceclass.resource.k8s.io/devices=3"},
		{"zero devices charge no extended resource", claim(exact("gpu", 0)),
			"count/resourceclaims.resource.k8s.io=1 gpu.deviceclass.resource.k8s.io/devices=0"},
		{"the scheduler's claim for a pod: the pod pays", podOwned,
			"count/resourceclaims.resource.k8s.io=1 gpu.deviceclass.resource.k8s.io/devices=2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ev.Usage(tt.claim)
			if err != nil {
				t.Fatal(err)
			}
			if show(got) != tt.want {
				t.Errorf("Usage = %s\nwant    %s", show(got), tt.want)
			}
		})
	}
	in := []corev1.ResourceName{"requests.example.com/gpu", "requests.example.com/other", "requests.deviceclass.resource.kubernetes.io/tpu", "requests.cpu", "gpu.deviceclass.resource.k8s.io/devices"}
	got := ev.MatchingResources(in)
	want := []corev1.ResourceName{"gpu.deviceclass.resource.k8s.io/devices", "requests.deviceclass.resource.kubernetes.io/tpu", "requests.example.com/gpu"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MatchingResources = %v, want %v", got, want)
	}
	reg := NewRegistryWithDeviceClasses(ev.Classes)
	grs := reg.GroupResourcesFor([]corev1.ResourceName{"requests.example.com/gpu"})
	if len(grs) != 2 || grs[0].Resource != "pods" || grs[1] != resourceClaimsGR {
		t.Errorf("GroupResourcesFor(requests.example.com/gpu) = %v, want pods and resourceclaims", grs)
	}
	if grs := reg.GroupResourcesFor([]corev1.ResourceName{"requests.example.com/other"}); len(grs) != 1 || grs[0].Resource != "pods" {
		t.Errorf("GroupResourcesFor(requests.example.com/other) = %v, want pods", grs)
	}
}

func TestPodImplicitExtendedResource(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
		Requests: rl(t, "deviceclass.resource.kubernetes.io/gpu=1", "example.com/gpu=2"),
		Limits:   rl(t, "deviceclass.resource.kubernetes.io/gpu=1", "example.com/gpu=2"),
	}}}}}
	got, err := Pods{}.Usage(pod)
	if err != nil {
		t.Fatal(err)
	}
	want := "count/pods=1 pods=1 requests.deviceclass.resource.kubernetes.io/gpu=1 requests.example.com/gpu=2"
	if show(got) != want {
		t.Errorf("Usage = %s\nwant    %s", show(got), want)
	}
}
