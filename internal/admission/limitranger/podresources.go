package limitranger

import (
	corev1 "k8s.io/api/core/v1"
)

// podRequests returns a pod's effective requests from its spec (never its status, never
// its overhead): regular containers and sidecars (restartable init containers) add up, each
// other init container needs its own requests plus the sidecars started before it, and the
// pod needs the larger of the two. Pod-level cpu and memory, when set, replace the
// aggregate.
func podRequests(pod *corev1.Pod) corev1.ResourceList {
	return aggregate(pod, func(c *corev1.Container) corev1.ResourceList { return c.Resources.Requests }, podLevel(pod, true))
}

// podLimits is podRequests for limits.
func podLimits(pod *corev1.Pod) corev1.ResourceList {
	return aggregate(pod, func(c *corev1.Container) corev1.ResourceList { return c.Resources.Limits }, podLevel(pod, false))
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
func aggregate(pod *corev1.Pod, of func(*corev1.Container) corev1.ResourceList, podLevel corev1.ResourceList) corev1.ResourceList {
	// 1. Regular containers add up.
	total := corev1.ResourceList{}
	for i := range pod.Spec.Containers {
		add(total, of(&pod.Spec.Containers[i]))
	}
	// 2. Walk init containers in order: sidecars add to the total and to the running
	// sidecar sum; each init container needs itself plus the sidecars before it.
	sidecars, initMax := corev1.ResourceList{}, corev1.ResourceList{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		var need corev1.ResourceList
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(total, of(c))
			add(sidecars, of(c))
			need = sidecars
		} else {
			need = corev1.ResourceList{}
			add(need, of(c))
			add(need, sidecars)
		}
		raise(initMax, need)
	}
	raise(total, initMax)
	// 3. Pod-level cpu and memory override the aggregate.
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := podLevel[name]; ok {
			total[name] = q.DeepCopy()
		}
	}
	return total
}

// add adds every quantity of more into list.
func add(list, more corev1.ResourceList) {
	for name, q := range more {
		if cur, ok := list[name]; ok {
			cur.Add(q)
			list[name] = cur
		} else {
			list[name] = q.DeepCopy()
		}
	}
}

// raise sets every entry of list to the larger of it and the same entry of other.
func raise(list, other corev1.ResourceList) {
	for name, q := range other {
		if cur, ok := list[name]; !ok || q.Cmp(cur) > 0 {
			list[name] = q.DeepCopy()
		}
	}
}
