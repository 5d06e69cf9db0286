package podresources

import (
	corev1 "k8s.io/api/core/v1"
)

// Charged requests and limits of a running pod, as upstream's quota evaluator computes them
// since in-place resize (component-helpers PodRequests and PodLimits with
// UseStatusResources, pod-level status not used): what the spec asks, what the node has
// allocated (status.containerStatuses[].allocatedResources) and what the containers
// actually run with (status.containerStatuses[].resources) may differ while a resize is in
// flight, and the pod is charged the larger of them. Each of the three is aggregated over
// the containers first (Aggregate's rules), then the pod takes the per-name maximum of the
// aggregates. A resize the node marks Infeasible (IsResizeInfeasible) no longer counts its
// spec: the pod is charged by what was allocated and actuated.

// IsResizeInfeasible reports whether the pod's PodResizePending condition has reason
// Infeasible (component-helpers IsPodResizeInfeasible).
func IsResizeInfeasible(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodResizePending {
			return c.Reason == corev1.PodReasonInfeasible
		}
	}
	return false
}

// ChargedRequests returns the pod's container requests with its status considered: the
// per-name maximum of the aggregated spec, allocated and actual requests; of allocated and
// actual only when the resize is Infeasible. A container without a status (or whose status
// reports nothing) counts with its spec, unless the resize is Infeasible: then it counts
// nothing. The result is never nil.
func ChargedRequests(pod *corev1.Pod) corev1.ResourceList {
	if !reportsStatus(pod) {
		return Aggregate(pod, ContainerRequests) // allocated and actual are the spec
	}
	infeasible := IsResizeInfeasible(pod)
	allocated := aggregateWithStatus(pod, func(c *corev1.Container, cs *corev1.ContainerStatus) corev1.ResourceList {
		switch {
		case cs != nil && cs.AllocatedResources != nil:
			return cs.AllocatedResources
		case infeasible:
			return nil
		}
		return c.Resources.Requests
	})
	actual := aggregateWithStatus(pod, func(c *corev1.Container, cs *corev1.ContainerStatus) corev1.ResourceList {
		switch {
		case cs != nil && cs.Resources != nil && cs.Resources.Requests != nil:
			return cs.Resources.Requests
		case cs != nil && cs.AllocatedResources != nil:
			return cs.AllocatedResources
		case infeasible:
			return nil
		}
		return c.Resources.Requests
	})
	result := actual
	if !infeasible {
		result = Aggregate(pod, ContainerRequests)
		maxInto(result, actual)
	}
	maxInto(result, allocated)
	return result
}

// ChargedLimits returns the pod's container limits with its status considered: the
// per-name maximum of the aggregated spec and actual limits; only the actual ones when the
// resize is Infeasible. A container whose status reports no limits counts with its spec
// limits, unless the resize is Infeasible. The result is never nil.
func ChargedLimits(pod *corev1.Pod) corev1.ResourceList {
	if !reportsStatus(pod) {
		return Aggregate(pod, ContainerLimits)
	}
	infeasible := IsResizeInfeasible(pod)
	actual := aggregateWithStatus(pod, func(c *corev1.Container, cs *corev1.ContainerStatus) corev1.ResourceList {
		switch {
		case cs != nil && cs.Resources != nil && cs.Resources.Limits != nil:
			return cs.Resources.Limits
		case infeasible:
			return nil
		}
		return c.Resources.Limits
	})
	if infeasible {
		return actual
	}
	result := Aggregate(pod, ContainerLimits)
	maxInto(result, actual)
	return result
}

// reportsStatus reports whether the pod's status can change what it is charged: a
// container status or a PodResizePending condition. Without either, allocated and actual
// are the spec's.
func reportsStatus(pod *corev1.Pod) bool {
	return len(pod.Status.ContainerStatuses) > 0 || len(pod.Status.InitContainerStatuses) > 0 || IsResizeInfeasible(pod)
}

// aggregateWithStatus is Aggregate over what of picks from each container and its status
// (nil when the pod reports none for it).
func aggregateWithStatus(pod *corev1.Pod, of func(*corev1.Container, *corev1.ContainerStatus) corev1.ResourceList) corev1.ResourceList {
	return Aggregate(pod, func(c *corev1.Container) corev1.ResourceList {
		return of(c, containerStatus(pod, c.Name))
	})
}

// containerStatus finds a container's status by name, among the container statuses and
// then the init container statuses, as upstream's findContainerStatus.
func containerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == name {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	for i := range pod.Status.InitContainerStatuses {
		if pod.Status.InitContainerStatuses[i].Name == name {
			return &pod.Status.InitContainerStatuses[i]
		}
	}
	return nil
}
