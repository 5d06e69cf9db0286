package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestPodLevelResourcesConsistency: pod-level requests and limits are checked as
// upstream's validatePodResourceConsistency: only the names the pod level sets, with
// upstream's texts.
func TestPodLevelResourcesConsistency(t *testing.T) {
	rl := func(kv ...string) corev1.ResourceList {
		out := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return out
	}
	pod := func(podReq, podLim, ctrReq, ctrLim corev1.ResourceList) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{
			Resources:  &corev1.ResourceRequirements{Requests: podReq, Limits: podLim},
			Containers: []corev1.Container{{Name: "a", Image: "x:1", Resources: corev1.ResourceRequirements{Requests: ctrReq, Limits: ctrLim}}},
		}}
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want []string
	}{
		{name: "a container's ephemeral-storage and extended resources the pod level does not set",
			pod: pod(rl("cpu", "1", "memory", "1Gi"), rl("cpu", "1", "memory", "1Gi"),
				rl("cpu", "500m", "memory", "512Mi", "ephemeral-storage", "1Gi", "example.com/gpu", "1"), rl("example.com/gpu", "1"))},
		{name: "requests below the containers'",
			pod:  pod(rl("cpu", "1"), nil, rl("cpu", "2"), nil),
			want: []string{`spec.resources.requests[cpu]: Invalid value: "1": must be greater than or equal to aggregate container requests of 2`}},
		{name: "a container limit above the pod's",
			pod:  pod(rl("memory", "1Gi"), rl("memory", "1Gi"), rl("memory", "1Gi"), rl("memory", "2Gi")),
			want: []string{`spec.resources.containers[0][memory].limits: Invalid value: "2Gi": must be less than or equal to pod limits of 1Gi`}},
		{name: "hugepages limits below the containers'",
			pod: pod(rl("memory", "1Gi"), rl("memory", "1Gi", "hugepages-2Mi", "2Mi"), rl("memory", "1Gi", "hugepages-2Mi", "4Mi"), rl("hugepages-2Mi", "4Mi")),
			want: []string{`spec.resources.limits[hugepages-2Mi]: Invalid value: "2Mi": must be greater than or equal to aggregate container limits of 4Mi`,
				`spec.resources.containers[0][hugepages-2Mi].limits: Invalid value: "4Mi": must be less than or equal to pod limits of 2Mi`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range Pod(tc.pod) {
				if e.Field == "spec.resources" || len(e.Field) > len("spec.resources") && e.Field[:len("spec.resources")] == "spec.resources" {
					got = append(got, e.Error())
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("errors %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("error %d: %q, want %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}
