package quota

import (
	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/quotad/quotad/internal/quota/quantity"
)

// PodQOS returns a pod's QoS class: status.qosClass when the API server has set it,
// otherwise ComputePodQOS.
func PodQOS(pod *corev1.Pod) corev1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	return ComputePodQOS(pod)
}

// ComputePodQOS computes a pod's QoS class with upstream's rules of v1.37: only cpu and
// memory count.
//   - When the pod sets pod-level resources for cpu or memory (spec.resources,
//     PodLevelResourcesFixKubeletQOSClass), its class is that of spec.resources alone.
//   - Else each container and init container has the class of its requirements (ephemeral
//     containers never count): the pod is BestEffort or Guaranteed when all of them are, and
//     Burstable otherwise.
//   - A set of requirements is BestEffort when it has none, or cpu and memory with neither
//     request nor limit; Guaranteed when cpu and memory each have a request equal to a
//     non-zero limit; Burstable otherwise.
func ComputePodQOS(pod *corev1.Pod) corev1.PodQOSClass {
	if pod.Spec.Resources != nil && resourcehelper.IsPodLevelResourcesSet(pod) {
		return requirementsQOS(pod.Spec.Resources)
	}
	var podQOS corev1.PodQOSClass
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			switch c := requirementsQOS(&list[i].Resources); {
			case c == corev1.PodQOSBurstable:
				return c
			case podQOS == "":
				podQOS = c
			case podQOS != c:
				return corev1.PodQOSBurstable
			}
		}
	}
	if podQOS == "" {
		return corev1.PodQOSBestEffort
	}
	return podQOS
}

// requirementsQOS is the class of one set of requirements.
func requirementsQOS(r *corev1.ResourceRequirements) corev1.PodQOSClass {
	if len(r.Requests) == 0 && len(r.Limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	var qos corev1.PodQOSClass
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := r.Requests[name], r.Limits[name]
		var c corev1.PodQOSClass
		switch {
		case quantity.Cmp(req, lim) != 0:
			c = corev1.PodQOSBurstable
		case req.IsZero():
			c = corev1.PodQOSBestEffort
		default:
			c = corev1.PodQOSGuaranteed
		}
		if c == corev1.PodQOSBurstable {
			return c
		}
		if qos == "" {
			qos = c
		} else if qos != c {
			return corev1.PodQOSBurstable
		}
	}
	return qos
}
