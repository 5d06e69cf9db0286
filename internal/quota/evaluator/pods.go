package evaluator

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/podresources"
	"github.com/quotad/quotad/internal/quota/quantity"
)

// countPods is the object-count name of pods.
const countPods = corev1.ResourceName("count/pods")

// draDeviceClassRequestsPrefix starts the quota names of DRA implicit extended resources
// (requests.deviceclass.resource.kubernetes.io/<class>); pods match them.
const draDeviceClassRequestsPrefix = "requests.deviceclass.resource.kubernetes.io/"

// Pods is the evaluator for core pods. It implements quota.Evaluator, quota.ScopeMatcher
// and quota.Constrainer.
type Pods struct{}

// isPodResource reports whether name is one of the fixed pod quota names.
func isPodResource(name corev1.ResourceName) bool {
	switch name {
	case countPods, corev1.ResourceCPU, corev1.ResourceMemory,
		corev1.ResourceEphemeralStorage, corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory,
		corev1.ResourceRequestsEphemeralStorage, corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
		corev1.ResourceLimitsEphemeralStorage, corev1.ResourcePods:
		return true
	}
	return false
}

// Handles accepts the pod itself, its status (phase changes credit) and resize.
func (Pods) Handles(subresource string) bool {
	return subresource == "" || subresource == "status" || subresource == "resize"
}

// MatchingResources returns the pod quota names among input: the fixed names, every
// hugepages-* and requests.hugepages-* name, and requests.<extended resource> names.
// Bare or limits.* extended names are not matched.
func (Pods) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, name := range input {
		switch {
		case isPodResource(name),
			quota.ContainsPrefix([]string{corev1.ResourceHugePagesPrefix, corev1.ResourceRequestsHugePagesPrefix}, name),
			!quota.IsNativeResource(name) && strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix),
			strings.HasPrefix(string(name), draDeviceClassRequestsPrefix):
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Usage returns a pod's usage: count/pods always; for a quota-eligible pod also pods and
// the compute names of its aggregated requests and limits.
func (Pods) Usage(obj runtime.Object) (corev1.ResourceList, error) {
	pod, err := toPod(obj)
	if err != nil {
		return nil, err
	}
	count := *resource.NewQuantity(1, resource.DecimalSI)
	if !QuotaEligible(pod) {
		return corev1.ResourceList{countPods: count}, nil
	}
	result := computeUsage(PodRequests(pod), PodLimits(pod))
	result[countPods] = count
	return result, nil
}

// QuotaEligible reports whether a pod's compute resources count: not when it has reached
// Succeeded or Failed, nor when it is being deleted with no grace period left
// (deletionTimestamp set and deletionGracePeriodSeconds set and <= 0: a zero-grace
// delete of a pod held by finalizers). A pod in its grace period counts, however long
// its node takes to confirm: upstream stops counting it once deletionTimestamp+grace
// has passed by the clock, but no clock is consulted here, so usage is a pure function
// of the stored object and every credit commits with the write that ends the counting
// (the node's zero-grace delete, or a status write to a terminal phase; design.md §2).
func QuotaEligible(pod *corev1.Pod) bool {
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return false
	}
	if pod.DeletionTimestamp != nil && pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds <= 0 {
		return false
	}
	return true
}

// MatchesScope evaluates one scope selector against a pod.
func (Pods) MatchesScope(sel corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error) {
	pod, err := toPod(obj)
	if err != nil {
		return false, err
	}
	switch sel.ScopeName {
	case corev1.ResourceQuotaScopeTerminating:
		return isTerminating(pod), nil
	case corev1.ResourceQuotaScopeNotTerminating:
		return !isTerminating(pod), nil
	case corev1.ResourceQuotaScopeBestEffort:
		return quota.PodQOS(pod) == corev1.PodQOSBestEffort, nil
	case corev1.ResourceQuotaScopeNotBestEffort:
		return quota.PodQOS(pod) != corev1.PodQOSBestEffort, nil
	case corev1.ResourceQuotaScopePriorityClass:
		if sel.Operator == corev1.ScopeSelectorOpExists {
			return pod.Spec.PriorityClassName != "", nil
		}
		selector, err := quota.ScopeSelectorAsLabelSelector(sel)
		if err != nil {
			return false, fmt.Errorf("failed to parse and convert selector: %v", err)
		}
		var set labels.Set
		if pod.Spec.PriorityClassName != "" {
			set = labels.Set{string(corev1.ResourceQuotaScopePriorityClass): pod.Spec.PriorityClassName}
		}
		return selector.Matches(set), nil
	case corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return usesCrossNamespacePodAffinity(pod), nil
	}
	return false, nil
}

// requiredByConstraints are the names whose quota requires every container to set them
// (upstream's acknowledged mistake, kept for compatibility).
func requiredByConstraints(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceRequestsCPU,
		corev1.ResourceRequestsMemory, corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory:
		return true
	}
	return false
}

// Constraints requires every container and init container to set each cpu/memory name of
// required: "must specify limits.cpu for: a,b; requests.memory for: b". Pods with
// pod-level cpu, memory or hugepages resources are exempt.
func (Pods) Constraints(required []corev1.ResourceName, obj runtime.Object) error {
	pod, err := toPod(obj)
	if err != nil {
		return err
	}
	if podLevelResourcesSet(pod) {
		return nil
	}
	var need []corev1.ResourceName
	for _, r := range required {
		if requiredByConstraints(r) && !slices.Contains(need, r) {
			need = append(need, r)
		}
	}
	var missing map[corev1.ResourceName]sets.Set[string]
	check := func(c *corev1.Container) {
		for _, r := range need {
			if !setsConstrained(c, r) {
				if missing == nil {
					missing = map[corev1.ResourceName]sets.Set[string]{}
				}
				if missing[r] == nil {
					missing[r] = sets.New[string]()
				}
				missing[r].Insert(c.Name)
			}
		}
	}
	for i := range pod.Spec.Containers {
		check(&pod.Spec.Containers[i])
	}
	for i := range pod.Spec.InitContainers {
		check(&pod.Spec.InitContainers[i])
	}
	if len(missing) == 0 {
		return nil
	}
	var msgs []string
	for _, r := range sets.List(sets.KeySet(missing)) {
		msgs = append(msgs, fmt.Sprintf("%s for: %s", r, strings.Join(sets.List(missing[r]), ",")))
	}
	return fmt.Errorf("must specify %s", strings.Join(msgs, "; "))
}

// setsConstrained reports whether a container sets the request or limit a constrained name
// stands for (cpu and requests.cpu are its cpu request, limits.cpu its cpu limit, and so
// for memory), as computeUsage would report it.
func setsConstrained(c *corev1.Container, name corev1.ResourceName) bool {
	list, base := c.Resources.Requests, name
	switch name {
	case corev1.ResourceRequestsCPU:
		base = corev1.ResourceCPU
	case corev1.ResourceRequestsMemory:
		base = corev1.ResourceMemory
	case corev1.ResourceLimitsCPU:
		list, base = c.Resources.Limits, corev1.ResourceCPU
	case corev1.ResourceLimitsMemory:
		list, base = c.Resources.Limits, corev1.ResourceMemory
	}
	_, ok := list[base]
	return ok
}

// computeUsage turns requests and limits into quota names: pods = 1, cpu/memory/
// ephemeral-storage as bare and requests.* names from requests and limits.* from limits,
// hugepages-* and requests.hugepages-* from requests, requests.<extended> from requests.
func computeUsage(requests, limits corev1.ResourceList) corev1.ResourceList {
	result := corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(1, resource.DecimalSI)}
	for _, r := range []struct{ name, request, limit corev1.ResourceName }{
		{corev1.ResourceCPU, corev1.ResourceRequestsCPU, corev1.ResourceLimitsCPU},
		{corev1.ResourceMemory, corev1.ResourceRequestsMemory, corev1.ResourceLimitsMemory},
		{corev1.ResourceEphemeralStorage, corev1.ResourceRequestsEphemeralStorage, corev1.ResourceLimitsEphemeralStorage},
	} {
		if q, ok := requests[r.name]; ok {
			result[r.name] = q.DeepCopy()
			result[r.request] = q.DeepCopy()
		}
		if q, ok := limits[r.name]; ok {
			result[r.limit] = q.DeepCopy()
		}
	}
	for name, q := range requests {
		if strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
			result[name] = q.DeepCopy()
			result[corev1.DefaultResourceRequestsPrefix+name] = q.DeepCopy()
		}
		if quota.IsExtendedResourceName(name) || isDRAExtendedResourceName(name) {
			result[corev1.DefaultResourceRequestsPrefix+name] = q.DeepCopy()
		}
	}
	return result
}

// toPod asserts obj is a *corev1.Pod.
func toPod(obj runtime.Object) (*corev1.Pod, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("expect *v1.Pod, got %T", obj)
	}
	return pod, nil
}

// isTerminating reports whether spec.activeDeadlineSeconds is set and >= 0.
func isTerminating(pod *corev1.Pod) bool {
	return pod.Spec.ActiveDeadlineSeconds != nil && *pod.Spec.ActiveDeadlineSeconds >= 0
}

// usesCrossNamespacePodAffinity reports whether any pod (anti-)affinity term, required or
// preferred, names namespaces or has a namespace selector (even an empty one).
func usesCrossNamespacePodAffinity(pod *corev1.Pod) bool {
	if pod.Spec.Affinity == nil {
		return false
	}
	cross := func(t *corev1.PodAffinityTerm) bool {
		return len(t.Namespaces) != 0 || t.NamespaceSelector != nil
	}
	anyCross := func(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm) bool {
		for i := range required {
			if cross(&required[i]) {
				return true
			}
		}
		for i := range preferred {
			if cross(&preferred[i].PodAffinityTerm) {
				return true
			}
		}
		return false
	}
	if a := pod.Spec.Affinity.PodAffinity; a != nil &&
		anyCross(a.RequiredDuringSchedulingIgnoredDuringExecution, a.PreferredDuringSchedulingIgnoredDuringExecution) {
		return true
	}
	if a := pod.Spec.Affinity.PodAntiAffinity; a != nil &&
		anyCross(a.RequiredDuringSchedulingIgnoredDuringExecution, a.PreferredDuringSchedulingIgnoredDuringExecution) {
		return true
	}
	return false
}

// PodRequests returns a pod's effective requests, with upstream's rules (component-helpers
// PodRequests with the status resources, as upstream's 1.37 evaluator asks): the
// sidecar-aware aggregates of the spec, of what the node allocated and of what the
// containers actually run with, the larger per name (podresources.ChargedRequests); then
// pod-level spec.resources.requests replace cpu, memory and hugepages-*; then spec.overhead
// is added to every name.
func PodRequests(pod *corev1.Pod) corev1.ResourceList {
	reqs := podresources.ChargedRequests(pod)
	if podLevelRequestsSet(pod) {
		applyPodLevel(reqs, pod.Spec.Resources.Requests)
	}
	if len(pod.Spec.Overhead) == 0 {
		return reqs
	}
	return quota.Add(reqs, pod.Spec.Overhead)
}

// PodLimits returns a pod's effective limits: the larger of the spec's and the actual
// aggregated limits (podresources.ChargedLimits), pod-level
// limits replacing cpu, memory and hugepages-* when pod-level resources are set, and
// spec.overhead added only to limits that exist and are not zero.
func PodLimits(pod *corev1.Pod) corev1.ResourceList {
	limits := podresources.ChargedLimits(pod)
	if podLevelResourcesSet(pod) {
		applyPodLevel(limits, pod.Spec.Resources.Limits)
	}
	for name, q := range pod.Spec.Overhead {
		if v, ok := limits[name]; ok && !v.IsZero() {
			limits[name] = quantity.Add(v, q)
		}
	}
	return limits
}

// podLevelRequestsSet reports whether spec.resources.requests has a pod-level name.
func podLevelRequestsSet(pod *corev1.Pod) bool {
	return pod.Spec.Resources != nil && hasPodLevel(pod.Spec.Resources.Requests)
}

// podLevelResourcesSet reports whether spec.resources requests or limits have a
// pod-level name.
func podLevelResourcesSet(pod *corev1.Pod) bool {
	return podLevelRequestsSet(pod) ||
		pod.Spec.Resources != nil && hasPodLevel(pod.Spec.Resources.Limits)
}

// hasPodLevel reports whether list has a name that pod-level resources may set.
func hasPodLevel(list corev1.ResourceList) bool {
	for name := range list {
		if podresources.IsPodLevelResource(name) {
			return true
		}
	}
	return false
}

// applyPodLevel overwrites result with the pod-level names of podLevel.
func applyPodLevel(result, podLevel corev1.ResourceList) {
	for name, q := range podLevel {
		if podresources.IsPodLevelResource(name) {
			result[name] = q.DeepCopy()
		}
	}
}
