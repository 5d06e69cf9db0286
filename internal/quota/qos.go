package quota

import (
	corev1 "k8s.io/api/core/v1"

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

// ComputePodQOS computes a pod's QoS class from its resource requirements, with upstream's
// rules: only cpu and memory count, and only values above zero.
//   - The requirement sets are spec.resources when it is set (pod-level resources), else
//     every container and init container (ephemeral containers never count).
//   - BestEffort: no positive cpu/memory request or limit anywhere.
//   - Guaranteed: every requirement set has positive cpu and memory limits, and the summed
//     requests equal the summed limits for the same set of names.
//   - Burstable: everything else.
func ComputePodQOS(pod *corev1.Pod) corev1.PodQOSClass {
	requests := corev1.ResourceList{}
	limits := corev1.ResourceList{}
	guaranteed := true

	// add sums the positive cpu/memory values of in into sum and reports which it saw.
	add := func(sum, in corev1.ResourceList) (cpu, mem bool) {
		for name, q := range in {
			if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
				continue
			}
			if q.Sign() <= 0 {
				continue
			}
			v := q.DeepCopy()
			if prev, ok := sum[name]; ok {
				v = quantity.Add(v, prev)
			}
			sum[name] = v
			if name == corev1.ResourceCPU {
				cpu = true
			} else {
				mem = true
			}
		}
		return cpu, mem
	}

	if pod.Spec.Resources != nil {
		add(requests, pod.Spec.Resources.Requests)
		if len(pod.Spec.Resources.Limits) > 0 {
			if cpu, mem := add(limits, pod.Spec.Resources.Limits); !cpu || !mem {
				guaranteed = false
			}
		}
	} else {
		all := make([]corev1.Container, 0, len(pod.Spec.Containers)+len(pod.Spec.InitContainers))
		all = append(all, pod.Spec.Containers...)
		all = append(all, pod.Spec.InitContainers...)
		for i := range all {
			add(requests, all[i].Resources.Requests)
			if cpu, mem := add(limits, all[i].Resources.Limits); !cpu || !mem {
				guaranteed = false
			}
		}
	}

	if len(requests) == 0 && len(limits) == 0 {
		return corev1.PodQOSBestEffort
	}
	if guaranteed {
		for name, req := range requests {
			if lim, ok := limits[name]; !ok || quantity.Cmp(lim, req) != 0 {
				guaranteed = false
				break
			}
		}
	}
	if guaranteed && len(requests) == len(limits) {
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}
