package podresources

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/quotad/quotad/internal/quota"
)

func list(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func ctr(req, lim corev1.ResourceList) corev1.Container {
	return corev1.Container{Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}
}

func sidecar(req, lim corev1.ResourceList) corev1.Container {
	always := corev1.ContainerRestartPolicyAlways
	c := ctr(req, lim)
	c.RestartPolicy = &always
	return c
}

func TestAggregate(t *testing.T) {
	tests := []struct {
		name       string
		spec       corev1.PodSpec
		wantReqs   corev1.ResourceList
		wantLimits corev1.ResourceList
	}{
		{name: "empty pod", spec: corev1.PodSpec{}, wantReqs: list(), wantLimits: list()},
		{
			name: "regular containers add up",
			spec: corev1.PodSpec{Containers: []corev1.Container{
				ctr(list("cpu", "100m", "memory", "1Gi"), list("cpu", "200m")),
				ctr(list("cpu", "250m", "example.com/gpu", "1"), list("memory", "2Gi")),
			}},
			wantReqs:   list("cpu", "350m", "memory", "1Gi", "example.com/gpu", "1"),
			wantLimits: list("cpu", "200m", "memory", "2Gi"),
		},
		{
			name: "regular init container larger than containers wins per name",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{ctr(list("cpu", "2", "memory", "10Mi"), nil)},
				Containers:     []corev1.Container{ctr(list("cpu", "1", "memory", "1Gi"), nil)},
			},
			wantReqs:   list("cpu", "2", "memory", "1Gi"),
			wantLimits: list(),
		},
		{
			name: "sidecars add to the total and to later init containers",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{
					sidecar(list("cpu", "500m"), list("cpu", "1")),
					ctr(list("cpu", "2"), list("cpu", "3")),
					sidecar(list("cpu", "300m"), nil),
				},
				Containers: []corev1.Container{ctr(list("cpu", "1"), list("cpu", "1"))},
			},
			// total 1+0.5+0.3 = 1.8; init peak 2+0.5 = 2.5
			wantReqs: list("cpu", "2500m"),
			// total 1+1 = 2; init peak 3+1 = 4
			wantLimits: list("cpu", "4"),
		},
		{
			name: "init container declared before a sidecar does not include it",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{
					ctr(list("memory", "1Gi"), nil),
					sidecar(list("memory", "512Mi"), nil),
				},
				Containers: []corev1.Container{ctr(list("memory", "256Mi"), nil)},
			},
			wantReqs:   list("memory", "1Gi"),
			wantLimits: list(),
		},
		{
			name: "ephemeral containers, overhead and pod-level resources are ignored",
			spec: corev1.PodSpec{
				Containers: []corev1.Container{ctr(list("cpu", "1"), list("cpu", "2"))},
				EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
					Resources: corev1.ResourceRequirements{Requests: list("cpu", "5"), Limits: list("cpu", "5")},
				}}},
				Overhead:  list("cpu", "100m"),
				Resources: &corev1.ResourceRequirements{Requests: list("cpu", "7"), Limits: list("cpu", "8")},
			},
			wantReqs:   list("cpu", "1"),
			wantLimits: list("cpu", "2"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: tt.spec}
			if got := Aggregate(pod, ContainerRequests); !quota.Equals(got, tt.wantReqs) {
				t.Errorf("Aggregate(requests) = %v, want %v", got, tt.wantReqs)
			}
			if got := Aggregate(pod, ContainerLimits); !quota.Equals(got, tt.wantLimits) {
				t.Errorf("Aggregate(limits) = %v, want %v", got, tt.wantLimits)
			}
		})
	}
}

func TestAggregateDoesNotAlias(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{RestartPolicy: &always,
			Resources: corev1.ResourceRequirements{Requests: list("cpu", "3")}}},
		Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: list("cpu", "1")}}},
	}}
	before := pod.DeepCopy()
	got := Aggregate(pod, ContainerRequests)
	q := got[corev1.ResourceCPU]
	q.Add(resource.MustParse("10"))
	got[corev1.ResourceCPU] = q
	if !quota.Equals(pod.Spec.Containers[0].Resources.Requests, before.Spec.Containers[0].Resources.Requests) ||
		!quota.Equals(pod.Spec.InitContainers[0].Resources.Requests, before.Spec.InitContainers[0].Resources.Requests) {
		t.Fatalf("pod changed through the result: %v", pod.Spec)
	}
}

func TestIsPodLevelResource(t *testing.T) {
	tests := []struct {
		name corev1.ResourceName
		want bool
	}{
		{corev1.ResourceCPU, true},
		{corev1.ResourceMemory, true},
		{"hugepages-2Mi", true},
		{"hugepages-1Gi", true},
		{corev1.ResourceEphemeralStorage, false},
		{corev1.ResourceRequestsCPU, false},
		{"requests.hugepages-2Mi", false},
		{"example.com/gpu", false},
	}
	for _, tt := range tests {
		if got := IsPodLevelResource(tt.name); got != tt.want {
			t.Errorf("IsPodLevelResource(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
