package defaults

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Pod-level resources (spec.resources) defaulting of v1.37 (PodLevelResourcesFixDefaulting):
// run when a pod is created, after admission has added every container (upstream's
// PrepareForCreate), and when a resize sets pod-level resources. It acts only when the pod
// already sets some pod-level requests or limits.

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

// PodLevelResources is upstream's DefaultPodLevelResources, in its order:
//  1. pod-level hugepages limits from the containers' aggregated hugepages limits, for sizes
//     the pod sets neither a request nor a limit for;
//  2. pod-level requests from the containers' aggregated requests (overcommittable
//     resources), then from the pod-level limits, for names without one;
//  3. pod-level limits, for requested names without one whose every container (init and
//     sidecar included) has a limit: the larger of the aggregated container limits and the
//     pod-level request.
func PodLevelResources(p *corev1.Pod) {
	r := p.Spec.Resources
	if r == nil || (len(r.Requests) == 0 && len(r.Limits) == 0) {
		return
	}
	// The containers only (ephemeral containers set no resources).
	cp := &corev1.Pod{Spec: corev1.PodSpec{Containers: p.Spec.Containers, InitContainers: p.Spec.InitContainers}}
	// 1.
	lims := r.Limits
	if lims == nil {
		lims = corev1.ResourceList{}
	}
	for k, v := range resourcehelper.AggregateContainerLimits(cp, resourcehelper.PodResourcesOptions{}) {
		if !resourcehelper.IsSupportedPodLevelResource(k) || !isHugePages(k) {
			continue
		}
		if _, ok := r.Requests[k]; ok {
			continue
		}
		if _, ok := lims[k]; !ok {
			lims[k] = v
		}
	}
	if len(lims) > 0 {
		r.Limits = lims
	}
	// 2.
	reqs := r.Requests
	if reqs == nil {
		reqs = corev1.ResourceList{}
	}
	for k, v := range resourcehelper.AggregateContainerRequests(cp, resourcehelper.PodResourcesOptions{}) {
		if _, ok := reqs[k]; !ok && resourcehelper.IsSupportedPodLevelResource(k) && overcommitAllowed(k) {
			reqs[k] = v
		}
	}
	for k, v := range r.Limits {
		if _, ok := reqs[k]; !ok && resourcehelper.IsSupportedPodLevelResource(k) {
			reqs[k] = v.DeepCopy()
		}
	}
	if len(reqs) > 0 {
		r.Requests = reqs
	}
	// 3.
	candidates := map[corev1.ResourceName]bool{}
	for k := range r.Requests {
		if _, ok := r.Limits[k]; !ok && resourcehelper.IsSupportedPodLevelResource(k) {
			candidates[k] = true
		}
	}
	for _, list := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for _, c := range list {
			for k := range candidates {
				if _, ok := c.Resources.Limits[k]; !ok {
					delete(candidates, k)
				}
			}
		}
	}
	if len(candidates) == 0 {
		return
	}
	agg := resourcehelper.AggregateContainerLimits(cp, resourcehelper.PodResourcesOptions{})
	for k := range candidates {
		v, ok := agg[k]
		if !ok {
			continue
		}
		if req := r.Requests[k]; req.Cmp(v) > 0 {
			v = req
		}
		if r.Limits == nil {
			r.Limits = corev1.ResourceList{}
		}
		r.Limits[k] = v
	}
}
