package defaults

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/quotad/quotad/internal/quota/podresources"
)

// Pod-level resources (spec.resources) defaulting, after upstream's
// defaultHugePagePodLimits and defaultPodRequests (KEP-2837). Both only act
// when the pod already sets some pod-level resources.

// isHugePages reports whether name is a hugepages-<size> resource.
func isHugePages(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// overcommitAllowed is upstream's IsOvercommitAllowed: native resources other
// than hugepages.
func overcommitAllowed(name corev1.ResourceName) bool {
	s := string(name)
	native := !strings.Contains(s, "/") || strings.Contains(s, corev1.ResourceDefaultNamespacePrefix)
	return native && !isHugePages(name)
}

// defaultHugePagePodLimits sets pod-level hugepages limits to the aggregated
// container hugepages limits where the pod sets neither a limit nor a request
// for that size.
func defaultHugePagePodLimits(p *corev1.Pod) {
	r := p.Spec.Resources
	if r == nil || (len(r.Limits) == 0 && len(r.Requests) == 0) {
		return
	}
	lims := r.Limits
	if lims == nil {
		lims = corev1.ResourceList{}
	}
	for k, v := range podresources.Aggregate(p, podresources.ContainerLimits) {
		if !isHugePages(k) {
			continue
		}
		if _, ok := r.Requests[k]; ok {
			continue
		}
		if _, ok := lims[k]; !ok {
			lims[k] = v.DeepCopy()
		}
	}
	if len(lims) > 0 {
		r.Limits = lims
	}
}

// defaultPodRequests sets pod-level requests when pod-level limits are set:
// from the aggregated container requests for overcommittable resources, then
// from the pod-level limits for any supported resource still without one.
func defaultPodRequests(p *corev1.Pod) {
	r := p.Spec.Resources
	if r == nil || len(r.Limits) == 0 {
		return
	}
	reqs := r.Requests
	if reqs == nil {
		reqs = corev1.ResourceList{}
	}
	for k, v := range podresources.Aggregate(p, podresources.ContainerRequests) {
		if _, ok := reqs[k]; !ok && podresources.IsPodLevelResource(k) && overcommitAllowed(k) {
			reqs[k] = v.DeepCopy()
		}
	}
	for k, v := range r.Limits {
		if _, ok := reqs[k]; !ok && podresources.IsPodLevelResource(k) {
			reqs[k] = v.DeepCopy()
		}
	}
	if len(reqs) > 0 {
		r.Requests = reqs
	}
}
