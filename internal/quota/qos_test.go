package quota_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/quotad/quotad/internal/quota"
)

func TestPodQOS(t *testing.T) {
	c := func(requests, limits []string) corev1.Container {
		return corev1.Container{Resources: corev1.ResourceRequirements{Requests: rl(t, requests...), Limits: rl(t, limits...)}}
	}
	pod := func(containers ...corev1.Container) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: containers}}
	}
	guaranteed := c([]string{"cpu=1", "memory=1Gi"}, []string{"cpu=1", "memory=1Gi"})
	tests := []struct {
		name string
		pod  *corev1.Pod
		want corev1.PodQOSClass
	}{
		{"no resources", pod(c(nil, nil)), corev1.PodQOSBestEffort},
		{"only zero values", pod(c([]string{"cpu=0"}, []string{"memory=0"})), corev1.PodQOSBestEffort},
		{"only ephemeral-storage and extended", pod(c([]string{"ephemeral-storage=1Gi", "example.com/gpu=1"}, []string{"example.com/gpu=1"})), corev1.PodQOSBestEffort},
		{"requests equal limits", pod(guaranteed), corev1.PodQOSGuaranteed},
		{"requests equal limits, extra ephemeral-storage", pod(c([]string{"cpu=1", "memory=1Gi", "ephemeral-storage=1Gi"}, []string{"cpu=1", "memory=1Gi"})), corev1.PodQOSGuaranteed},
		{"limits only (not defaulted)", pod(c(nil, []string{"cpu=1", "memory=1Gi"})), corev1.PodQOSBurstable},
		{"request below limit", pod(c([]string{"cpu=500m", "memory=1Gi"}, []string{"cpu=1", "memory=1Gi"})), corev1.PodQOSBurstable},
		{"cpu only", pod(c([]string{"cpu=1"}, []string{"cpu=1"})), corev1.PodQOSBurstable},
		{"guaranteed and best-effort containers", pod(guaranteed, c(nil, nil)), corev1.PodQOSBurstable},
		{"two guaranteed containers", pod(guaranteed, guaranteed), corev1.PodQOSGuaranteed},
		{"init container counts", &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{c(nil, nil)}, InitContainers: []corev1.Container{c([]string{"cpu=1"}, nil)}}}, corev1.PodQOSBurstable},
		{"status wins", &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{guaranteed}}, Status: corev1.PodStatus{QOSClass: corev1.PodQOSBurstable}}, corev1.PodQOSBurstable},
		{"pod-level resources guaranteed", &corev1.Pod{Spec: corev1.PodSpec{
			Resources:  &corev1.ResourceRequirements{Requests: rl(t, "cpu=1", "memory=1Gi"), Limits: rl(t, "cpu=1", "memory=1Gi")},
			Containers: []corev1.Container{c(nil, nil)},
		}}, corev1.PodQOSGuaranteed},
		{"pod-level requests only", &corev1.Pod{Spec: corev1.PodSpec{
			Resources:  &corev1.ResourceRequirements{Requests: rl(t, "cpu=1")},
			Containers: []corev1.Container{guaranteed},
		}}, corev1.PodQOSBurstable},
		// 1.37 (PodLevelResourcesFixKubeletQOSClass): an empty spec.resources sets nothing,
		// so the containers decide.
		{"pod-level resources without cpu or memory", &corev1.Pod{Spec: corev1.PodSpec{
			Resources:  &corev1.ResourceRequirements{},
			Containers: []corev1.Container{guaranteed},
		}}, corev1.PodQOSGuaranteed},
		// hugepages are a pod-level resource: spec.resources decides, without cpu or memory.
		{"pod-level resources of hugepages only", &corev1.Pod{Spec: corev1.PodSpec{
			Resources:  &corev1.ResourceRequirements{Limits: rl(t, "hugepages-2Mi=2Mi")},
			Containers: []corev1.Container{guaranteed},
		}}, corev1.PodQOSBestEffort},
		{"a Guaranteed container and a BestEffort one", &corev1.Pod{Spec: corev1.PodSpec{
			Containers: []corev1.Container{guaranteed, {Name: "b"}},
		}}, corev1.PodQOSBurstable},
	}
	for _, tt := range tests {
		if got := quota.PodQOS(tt.pod); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
}
