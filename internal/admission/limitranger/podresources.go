package limitranger

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/quotad/quotad/internal/quota/podresources"
)

// podRequests returns a pod's effective requests from its spec (never its status, never
// its overhead): regular containers and sidecars (restartable init containers) add up, each
// other init container needs its own requests plus the sidecars started before it, and the
// pod needs the larger of the two. Pod-level cpu and memory, when set, replace the
// aggregate.
func podRequests(pod *corev1.Pod) corev1.ResourceList {
	return aggregate(pod, podresources.ContainerRequests, podLevel(pod, true))
}

// podLimits is podRequests for limits.
func podLimits(pod *corev1.Pod) corev1.ResourceList {
	return aggregate(pod, podresources.ContainerLimits, podLevel(pod, false))
}

func podLevel(pod *corev1.Pod, requests bool) corev1.ResourceList {
	if pod.Spec.Resources == nil {
		return nil
	}
	if requests {
		return pod.Spec.Resources.Requests
	}
	return pod.Spec.Resources.Limits
}

// aggregate implements podRequests and podLimits; of picks the list from a container.
// Unlike the quota evaluator it ignores spec.overhead and lets only pod-level cpu and
// memory (not hugepages-*) override, each list from its own pod-level list.
func aggregate(pod *corev1.Pod, of func(*corev1.Container) corev1.ResourceList, podLevel corev1.ResourceList) corev1.ResourceList {
	total := podresources.Aggregate(pod, of)
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := podLevel[name]; ok {
			total[name] = q.DeepCopy()
		}
	}
	return total
}
