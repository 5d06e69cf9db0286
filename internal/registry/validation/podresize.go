package validation

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/convert"
)

// PodResize is upstream's ValidatePodResize (pods/resize, in-place resize GA in 1.35,
// pod-level resize beta in 1.36, memory-backed volume resize alpha and off): n and o differ
// only in container resources and resize policies and in spec.resources once the resize
// strategy prepared n. qosChanged reports that the QoS class the resized spec computes
// differs from the pod's (upstream compares GetPodQOS(old) and ComputePodQOS(new); the
// caller owns the QoS computation).
func PodResize(n, o *corev1.Pod, qosChanged bool) field.ErrorList {
	// 1. The pod's metadata and spec, and whether it may be resized at all.
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, podMetadataAndSpec(n, o)...)
	if _, ok := o.Annotations[mirrorPodAnnotation]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods cannot be resized")}
	}
	if o.Spec.OS != nil && o.Spec.OS.Name == corev1.Windows {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "windows pods cannot be resized")}
	}
	sp := field.NewPath("spec")
	if qosChanged {
		errs = append(errs, field.Invalid(sp, n.Status.QOSClass, "Pod QOS Class may not change as a result of resizing"))
	}
	if !resizeSupported(o) {
		errs = append(errs, field.Forbidden(sp, "Pod running on node without support for resize"))
	}
	// 2. Pod-level resources: only cpu and memory change, none is removed.
	masked := *n.Spec.DeepCopy()
	if podLevelSet(o) || podLevelSet(n) {
		errs = append(errs, podLevelResize(n, o, &masked, sp)...)
	}
	// 3. Containers keep their names and order; their cpu and memory may change, nothing
	// is removed.
	orderErrs := resizeContainerOrdering(n, o, sp)
	errs = append(errs, orderErrs...)
	if orderErrs != nil {
		return errs
	}
	for i := range o.Spec.InitContainers {
		errs = append(errs, containerResize(&n.Spec.InitContainers[i].Resources, &o.Spec.InitContainers[i].Resources,
			sp.Child("initContainers").Index(i).Child("resources"))...)
	}
	for i := range o.Spec.Containers {
		errs = append(errs, containerResize(&n.Spec.Containers[i].Resources, &o.Spec.Containers[i].Resources,
			sp.Child("containers").Index(i).Child("resources"))...)
	}
	for i := range masked.Containers {
		c := &masked.Containers[i]
		keepCPUMemory(c, &o.Spec.Containers[i])
		if !semantic.DeepEqual(*c, o.Spec.Containers[i]) {
			errs = append(errs, field.Forbidden(sp, "only cpu and memory resources are mutable"))
		}
	}
	for i := range masked.InitContainers {
		c := &masked.InitContainers[i]
		restartable := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		modified := !semantic.DeepEqual(*c, o.Spec.InitContainers[i])
		// Init containers are resizable (InPlacePodVerticalScalingInitContainers, GA 1.37).
		keepCPUMemory(c, &o.Spec.InitContainers[i])
		if !semantic.DeepEqual(*c, o.Spec.InitContainers[i]) {
			errs = append(errs, field.Forbidden(sp.Child("initContainers").Index(i), "only cpu and memory resources for init or sidecar containers are mutable"))
		}
		if modified && !restartable {
			for _, rp := range c.ResizePolicy {
				if rp.RestartPolicy == corev1.RestartContainer {
					errs = append(errs, field.Forbidden(sp.Child("initContainers").Index(i), "non-sidecar init containers with a resize policy of RestartContainer cannot be resized"))
				}
			}
		}
	}
	// 4. Volumes (InPlacePodVerticalScalingMemoryBackedVolumes is alpha, off).
	if !semantic.DeepEqual(n.Spec.Volumes, o.Spec.Volumes) {
		errs = append(errs, field.Forbidden(sp.Child("volumes"), "volumes are immutable on resize when InPlacePodVerticalScalingMemoryBackedVolumes feature gate is disabled"))
	}
	if len(errs) > 0 {
		return errs
	}
	// 5. Anything else changed.
	if !semantic.DeepEqual(masked, o.Spec) {
		errs = append(errs, field.Forbidden(sp, "only cpu and memory resources are mutable"))
	}
	return errs
}

// podLevelSet reports spec.resources with a request or limit (upstream's
// isPodLevelResourcesSet in ValidatePodResize).
func podLevelSet(p *corev1.Pod) bool {
	return p.Spec.Resources != nil && len(p.Spec.Resources.Requests)+len(p.Spec.Resources.Limits) > 0
}

// podLevelResize is upstream's validatePodLevelResourcesResize: masked.Resources gets the
// old cpu and memory, so that step 5 sees any other pod-level change.
func podLevelResize(n, o *corev1.Pod, masked *corev1.PodSpec, sp *field.Path) field.ErrorList {
	var errs field.ErrorList
	rp := sp.Child("resources")
	if o.Spec.Resources != nil && n.Spec.Resources == nil {
		return append(errs, field.Forbidden(rp, "pod-level resources cannot be removed"))
	}
	if o.Spec.Resources != nil {
		if resourcesRemoved(n.Spec.Resources.Requests, o.Spec.Resources.Requests) {
			errs = append(errs, field.Forbidden(rp.Child("requests"), "pod-level resource requests cannot be removed"))
		}
		if resourcesRemoved(n.Spec.Resources.Limits, o.Spec.Resources.Limits) {
			errs = append(errs, field.Forbidden(rp.Child("limits"), "pod-level resource limits cannot be removed"))
		}
	}
	masked.Resources = keepPodLevelCPUMemory(masked.Resources, o.Spec.Resources)
	if !semantic.DeepEqual(masked.Resources, o.Spec.Resources) {
		errs = append(errs, field.Forbidden(sp, "only cpu and memory resources are mutable at pod-level"))
	}
	return errs
}

// keepPodLevelCPUMemory is upstream's dropCPUMemoryResourceRequirementsUpdates.
func keepPodLevelCPUMemory(r, old *corev1.ResourceRequirements) *corev1.ResourceRequirements {
	if r == nil {
		return nil
	}
	var oldReqs, oldLims corev1.ResourceList
	if old != nil {
		oldReqs, oldLims = old.Requests, old.Limits
	}
	r.Requests = keepCPUMemoryOf(r.Requests, oldReqs)
	r.Limits = keepCPUMemoryOf(r.Limits, oldLims)
	if old == nil && len(r.Requests) == 0 && len(r.Limits) == 0 && len(r.Claims) == 0 {
		return nil
	}
	return r
}

// keepCPUMemory gives a container the old container's cpu and memory requests and limits
// (upstream's dropCPUMemoryResourcesFromContainer).
func keepCPUMemory(c, old *corev1.Container) {
	c.Resources = corev1.ResourceRequirements{
		Limits:   keepCPUMemoryOf(c.Resources.Limits, old.Resources.Limits),
		Requests: keepCPUMemoryOf(c.Resources.Requests, old.Resources.Requests),
		Claims:   c.Resources.Claims,
	}
}

// keepCPUMemoryOf is upstream's dropCPUMemoryUpdates: list with cpu and memory as in old.
func keepCPUMemoryOf(list, old corev1.ResourceList) corev1.ResourceList {
	var out corev1.ResourceList
	if list == nil {
		if old == nil {
			return nil
		}
		out = corev1.ResourceList{}
	} else {
		out = list.DeepCopy()
	}
	delete(out, corev1.ResourceCPU)
	delete(out, corev1.ResourceMemory)
	if v, ok := old[corev1.ResourceCPU]; ok {
		out[corev1.ResourceCPU] = v
	}
	if v, ok := old[corev1.ResourceMemory]; ok {
		out[corev1.ResourceMemory] = v
	}
	return out
}

// resizeContainerOrdering is upstream's validatePodResizeContainerOrdering.
func resizeContainerOrdering(n, o *corev1.Pod, sp *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(n.Spec.Containers) != len(o.Spec.Containers) {
		errs = append(errs, field.Forbidden(sp.Child("containers"), "containers may not be added or removed on resize"))
	} else {
		for i, c := range o.Spec.Containers {
			if n.Spec.Containers[i].Name != c.Name {
				errs = append(errs, field.Forbidden(sp.Child("containers").Index(i).Child("name"), "containers may not be renamed or reordered on resize"))
			}
		}
	}
	if len(n.Spec.InitContainers) != len(o.Spec.InitContainers) {
		errs = append(errs, field.Forbidden(sp.Child("initContainers"), "initContainers may not be added or removed on resize"))
	} else {
		for i, c := range o.Spec.InitContainers {
			if n.Spec.InitContainers[i].Name != c.Name {
				errs = append(errs, field.Forbidden(sp.Child("initContainers").Index(i).Child("name"), "initContainers may not be renamed or reordered on resize"))
			}
		}
	}
	return errs
}

// resizeSupported is upstream's isPodResizeRequestSupported: the first running container
// must report its resources (its node supports resize); with none running, assume so.
func resizeSupported(p *corev1.Pod) bool {
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Running != nil {
			return c.Resources != nil
		}
	}
	return true
}

// containerResize is upstream's validateContainerResize: no request or limit is removed.
func containerResize(n, o *corev1.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if resourcesRemoved(n.Requests, o.Requests) {
		errs = append(errs, field.Forbidden(p.Child("requests"), "resource requests cannot be removed"))
	}
	if resourcesRemoved(n.Limits, o.Limits) {
		errs = append(errs, field.Forbidden(p.Child("limits"), "resource limits cannot be removed"))
	}
	return errs
}

// resourcesRemoved reports whether a name of old is missing from list.
func resourcesRemoved(list, old corev1.ResourceList) bool {
	if len(old) > len(list) {
		return true
	}
	for name := range old {
		if _, ok := list[name]; !ok {
			return true
		}
	}
	return false
}

// PodEphemeralContainersUpdate is upstream's ValidatePodEphemeralContainersUpdate
// (pods/ephemeralcontainers): n and o differ only in spec.ephemeralContainers once the
// strategy prepared n; existing ephemeral containers may be neither removed nor changed.
// The diff in a change's message is apimachinery's, of the v1 types (upstream diffs its
// internal types, whose JSON has Go field names).
func PodEphemeralContainersUpdate(n, o *corev1.Pod) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, podMetadataAndSpec(n, o)...)
	errs = append(errs, podSpecificAnnotationUpdates(n, o, metaPath.Child("annotations"))...)
	if _, ok := o.Annotations[mirrorPodAnnotation]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods do not support ephemeral containers")}
	}
	byName := map[string]*corev1.EphemeralContainer{}
	for i := range n.Spec.EphemeralContainers {
		byName[n.Spec.EphemeralContainers[i].Name] = &n.Spec.EphemeralContainers[i]
	}
	p := field.NewPath("spec").Child("ephemeralContainers")
	for _, old := range o.Spec.EphemeralContainers {
		if cur, ok := byName[old.Name]; !ok {
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("existing ephemeral containers %q may not be removed\n", old.Name)))
		} else if !semantic.DeepEqual(old, *cur) {
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("existing ephemeral containers %q may not be changed\n%v", old.Name, diff.Diff(convert.InternalJSON(old), convert.InternalJSON(*cur)))))
		}
	}
	return errs
}

// podSpecificAnnotationUpdates is upstream's ValidatePodSpecificAnnotationUpdates: the
// mirror-pod and AppArmor annotations are neither added, changed nor removed; then the
// new annotations' own rules.
func podSpecificAnnotationUpdates(n, o *corev1.Pod, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for k, ov := range o.Annotations {
		if nv, ok := n.Annotations[k]; ok && nv == ov {
			continue
		}
		if strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) {
			errs = append(errs, field.Forbidden(p.Key(k), "may not remove or update AppArmor annotations"))
		}
		if k == mirrorPodAnnotation {
			errs = append(errs, field.Forbidden(p.Key(k), "may not remove or update mirror pod annotation"))
		}
	}
	for k := range n.Annotations {
		if _, ok := o.Annotations[k]; ok {
			continue
		}
		if strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) {
			errs = append(errs, field.Forbidden(p.Key(k), "may not add AppArmor annotations"))
		}
		if k == mirrorPodAnnotation {
			errs = append(errs, field.Forbidden(p.Key(k), "may not add mirror pod annotation"))
		}
	}
	return append(errs, podSpecificAnnotations(n.Annotations, &n.Spec, p, invalidDeletionCost(o.Annotations))...)
}
