package podresources

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/quotad/quotad/internal/quota/quantity"
)

// ContainerRequests picks a container's resource requests; pass it to Aggregate.
func ContainerRequests(c *corev1.Container) corev1.ResourceList { return c.Resources.Requests }

// ContainerLimits picks a container's resource limits; pass it to Aggregate.
func ContainerLimits(c *corev1.Container) corev1.ResourceList { return c.Resources.Limits }

// Aggregate returns the pod total of the list that of picks from each container, with
// upstream's sidecar-aware rules (component-helpers PodRequests, spec only): the sum over
// regular containers and sidecars (init containers with restartPolicy Always), raised per
// name to the largest init-phase demand (each regular init container plus the sidecars
// declared before it, each sidecar plus those before it). Ephemeral containers, overhead
// and pod-level resources are not considered. The result is never nil.
func Aggregate(pod *corev1.Pod, of func(*corev1.Container) corev1.ResourceList) corev1.ResourceList {
	total := corev1.ResourceList{}
	for i := range pod.Spec.Containers {
		addInto(total, of(&pod.Spec.Containers[i]))
	}
	if len(pod.Spec.InitContainers) == 0 {
		return total
	}
	sidecars := corev1.ResourceList{}
	initMax := corev1.ResourceList{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		var need corev1.ResourceList
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addInto(total, of(c))
			addInto(sidecars, of(c))
			need = sidecars
		} else {
			need = corev1.ResourceList{}
			addInto(need, of(c))
			addInto(need, sidecars)
		}
		maxInto(initMax, need)
	}
	maxInto(total, initMax)
	return total
}

// IsPodLevelResource reports whether pod-level resources (spec.resources) may set name:
// cpu, memory and hugepages-<size>.
func IsPodLevelResource(name corev1.ResourceName) bool {
	return name == corev1.ResourceCPU || name == corev1.ResourceMemory ||
		strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// addInto adds every entry of more into list.
func addInto(list, more corev1.ResourceList) {
	for name, q := range more {
		if cur, ok := list[name]; ok {
			list[name] = quantity.Add(cur, q)
		} else {
			list[name] = q.DeepCopy()
		}
	}
}

// maxInto raises every entry of list to the value in other, adding missing names.
func maxInto(list, other corev1.ResourceList) {
	for name, q := range other {
		if cur, ok := list[name]; !ok || quantity.Cmp(q, cur) > 0 {
			list[name] = q.DeepCopy()
		}
	}
}
