package defaults

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Pod-level resources (spec.resources) defaulting, after upstream's
// defaultHugePagePodLimits and defaultPodRequests (KEP-2837). Both only act
// when the pod already sets some pod-level resources.

// podLevelSupported reports whether name may be set at pod level: cpu,
// memory and hugepages-<size>.
func podLevelSupported(name corev1.ResourceName) bool {
	return name == corev1.ResourceCPU || name == corev1.ResourceMemory || isHugePages(name)
}

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
	for k, v := range aggregateContainers(p, func(c *corev1.Container) corev1.ResourceList { return c.Resources.Limits }) {
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
	for k, v := range aggregateContainers(p, func(c *corev1.Container) corev1.ResourceList { return c.Resources.Requests }) {
		if _, ok := reqs[k]; !ok && podLevelSupported(k) && overcommitAllowed(k) {
			reqs[k] = v.DeepCopy()
		}
	}
	for k, v := range r.Limits {
		if _, ok := reqs[k]; !ok && podLevelSupported(k) {
			reqs[k] = v.DeepCopy()
		}
	}
	if len(reqs) > 0 {
		r.Requests = reqs
	}
}

// aggregateContainers is the effective pod total of one container resource
// list: the sum over regular and restartable (sidecar) init containers, or,
// if larger per resource, the peak while an init container runs (that init
// container plus the sidecars started before it).
func aggregateContainers(p *corev1.Pod, list func(*corev1.Container) corev1.ResourceList) corev1.ResourceList {
	total := corev1.ResourceList{}
	for i := range p.Spec.Containers {
		addList(total, list(&p.Spec.Containers[i]))
	}
	sidecars := corev1.ResourceList{}
	initPeak := corev1.ResourceList{}
	for i := range p.Spec.InitContainers {
		c := &p.Spec.InitContainers[i]
		var use corev1.ResourceList
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addList(total, list(c))
			addList(sidecars, list(c))
			use = sidecars
		} else {
			use = corev1.ResourceList{}
			addList(use, list(c))
			addList(use, sidecars)
		}
		maxList(initPeak, use)
	}
	maxList(total, initPeak)
	return total
}

func addList(dst, src corev1.ResourceList) {
	for k, v := range src {
		if cur, ok := dst[k]; ok {
			cur.Add(v)
			dst[k] = cur
		} else {
			dst[k] = v.DeepCopy()
		}
	}
}

func maxList(dst, src corev1.ResourceList) {
	for k, v := range src {
		if cur, ok := dst[k]; !ok || v.Cmp(cur) > 0 {
			dst[k] = v.DeepCopy()
		}
	}
}
