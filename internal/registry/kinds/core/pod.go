package core

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// Pod is the strategy of pods.
type Pod struct{}

// Default sets upstream's defaults.
func (Pod) Default(obj runtime.Object) { defaults.Pod(obj.(*corev1.Pod)) }

// Validate returns upstream's errors for a new object.
func (Pod) Validate(obj runtime.Object) field.ErrorList { return validation.Pod(obj.(*corev1.Pod)) }

// ValidateUpdate returns upstream's errors for an update.
func (Pod) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.PodUpdate(obj.(*corev1.Pod), old.(*corev1.Pod))
}

// ConvertToTable prints upstream's columns.
func (Pod) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.PodPrinter().Convert(objs, now, include, false)
}

// Warnings is what upstream warns of as it creates a pod (validation.PodWarnings).
func (Pod) Warnings(obj runtime.Object) []string { return validation.PodWarnings(obj.(*corev1.Pod)) }

// UpdateWarnings is upstream's WarningsOnUpdate of the pod strategies: none for the pod
// itself and its resize and ephemeralcontainers subresources; for pods/status, the
// podIPs and hostIPs written in a non-standard form.
func (Pod) UpdateWarnings(subresource string, obj, _ runtime.Object) []string {
	if subresource != "status" {
		return nil
	}
	return validation.PodStatusWarnings(obj.(*corev1.Pod))
}

// PrepareForCreate resets the status: a new pod is Pending, with its containers' AppArmor
// annotations copied to their fields (appArmorVersionSkew), its pod-level resources
// defaulted (1.37, after admission added every container) and its QoS class.
func (Pod) PrepareForCreate(obj runtime.Object, _ auth.User, _ metav1.Time) {
	o := obj.(*corev1.Pod)
	mergeLabelKeys(o)
	o.Status = corev1.PodStatus{Phase: corev1.PodPending}
	appArmorVersionSkew(o)
	defaults.PodLevelResources(o)
	o.Status.QOSClass = quota.ComputePodQOS(o)
}

// mergeLabelKeys is upstream's merge of matchLabelKeys and mismatchLabelKeys into their
// selectors on create (MatchLabelKeysInPodAffinity, MatchLabelKeysInPodTopologySpread and
// its SelectorMerge, all on in 1.37): each key the pod has a label for adds "key In
// (value)" (NotIn for mismatchLabelKeys) to the term's or constraint's label selector, so
// the scheduler reads one selector. A nil selector (matching nothing) is left nil.
func mergeLabelKeys(p *corev1.Pod) {
	if !namesLabelKeys(&p.Spec) {
		return
	}
	// The pod's spec may share its affinity and constraints with the template it was made
	// from (a controller's cached owner): the merge writes copies.
	p.Spec.Affinity = p.Spec.Affinity.DeepCopy()
	if cs := p.Spec.TopologySpreadConstraints; cs != nil {
		p.Spec.TopologySpreadConstraints = make([]corev1.TopologySpreadConstraint, len(cs))
		for i := range cs {
			cs[i].DeepCopyInto(&p.Spec.TopologySpreadConstraints[i])
		}
	}
	add := func(sel *metav1.LabelSelector, keys []string, op metav1.LabelSelectorOperator) {
		for _, k := range keys {
			if v, ok := p.Labels[k]; ok {
				sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: op, Values: []string{v}})
			}
		}
	}
	term := func(t *corev1.PodAffinityTerm) {
		if t.LabelSelector != nil {
			add(t.LabelSelector, t.MatchLabelKeys, metav1.LabelSelectorOpIn)
			add(t.LabelSelector, t.MismatchLabelKeys, metav1.LabelSelectorOpNotIn)
		}
	}
	terms := func(req []corev1.PodAffinityTerm, pref []corev1.WeightedPodAffinityTerm) {
		for i := range pref {
			term(&pref[i].PodAffinityTerm)
		}
		for i := range req {
			term(&req[i])
		}
	}
	if a := p.Spec.Affinity; a != nil {
		if pa := a.PodAffinity; pa != nil {
			terms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
		}
		if pa := a.PodAntiAffinity; pa != nil {
			terms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
		}
	}
	for i := range p.Spec.TopologySpreadConstraints {
		if c := &p.Spec.TopologySpreadConstraints[i]; c.LabelSelector != nil {
			add(c.LabelSelector, c.MatchLabelKeys, metav1.LabelSelectorOpIn)
		}
	}
}

// namesLabelKeys reports whether a pod affinity term or a spread constraint of spec names
// matchLabelKeys or mismatchLabelKeys (a pod create's check: it allocates nothing).
func namesLabelKeys(spec *corev1.PodSpec) bool {
	for _, c := range spec.TopologySpreadConstraints {
		if len(c.MatchLabelKeys) > 0 {
			return true
		}
	}
	names := func(t *corev1.PodAffinityTerm) bool { return len(t.MatchLabelKeys) > 0 || len(t.MismatchLabelKeys) > 0 }
	terms := func(req []corev1.PodAffinityTerm, pref []corev1.WeightedPodAffinityTerm) bool {
		for i := range req {
			if names(&req[i]) {
				return true
			}
		}
		for i := range pref {
			if names(&pref[i].PodAffinityTerm) {
				return true
			}
		}
		return false
	}
	a := spec.Affinity
	if a == nil {
		return false
	}
	if pa := a.PodAffinity; pa != nil && terms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution) {
		return true
	}
	pa := a.PodAntiAffinity
	return pa != nil && terms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
}

// PrepareForUpdate is upstream's PrepareForUpdate of the pod's strategies (the store has
// kept the status of every write but /status):
//   - the pod itself keeps the pod-level resources an update from a client that does not
//     know them dropped (1.37's PodLevelResourcesFixDefaulting);
//   - pods/resize keeps everything of the stored pod but the containers' and init
//     containers' resources and resizePolicy and spec.resources (pod-level resize, beta
//     1.36), which it defaults as on create when set; a resize that adds, removes or
//     renames containers is left as sent, for validation to refuse;
//   - pods/ephemeralcontainers keeps everything but spec.ephemeralContainers, defaulted as
//     on create.
//
// Both subresources keep the stored metadata (upstream's ResetObjectMetaForStatus) and,
// like the pod itself (the store counts its spec changes: pods track their generation,
// created at 1), bump metadata.generation when the spec changes. pods/status and
// pods/binding never do; pods/status is prepared as upstream's status strategy does
// (prepareStatus).
func (Pod) PrepareForUpdate(obj, old runtime.Object, subresource string, _ metav1.Time) {
	o, prev := obj.(*corev1.Pod), old.(*corev1.Pod)
	switch subresource {
	case "":
		if o.Spec.Resources == nil && prev.Spec.Resources != nil {
			o.Spec.Resources = prev.Spec.Resources.DeepCopy()
		}
		return
	case "status":
		prepareStatus(o, prev)
		return
	case "resize":
		defaults.Pod(o) // as decoding defaults every body upstream (requests from limits)
		keepResizeOnly(o, prev)
		if o.Spec.Resources == nil && prev.Spec.Resources != nil {
			o.Spec.Resources = prev.Spec.Resources.DeepCopy()
		}
		if o.Spec.Resources != nil {
			defaults.PodLevelResources(o)
		}
	case "ephemeralcontainers":
		defaults.Pod(o) // as decoding defaults every body upstream (pull and termination policies)
		ecs := o.Spec.EphemeralContainers
		o.Spec = *prev.Spec.DeepCopy()
		o.Spec.EphemeralContainers = ecs
	default:
		return
	}
	o.Status = *prev.Status.DeepCopy()
	o.Labels, o.Annotations = prev.Labels, prev.Annotations
	o.Finalizers, o.OwnerReferences = prev.Finalizers, prev.OwnerReferences
	if !apiequality.Semantic.DeepEqual(o.Spec, prev.Spec) {
		o.Generation = prev.Generation + 1
	}
}

// prepareStatus is upstream's PrepareForUpdate of pods/status, after the status's
// defaults decoding gives it upstream (defaults.PodStatus: podIP and podIPs in step). The
// store has kept the stored spec and applies the write's labels, annotations and
// finalizers (upstream's status strategy does not reset them); then:
//   - the owner references stay as stored (old kubelets corrupted them);
//   - a status without a QoS class, resource claim statuses, an extended resource claim
//     status or node-allocatable claim statuses keeps the stored one (older clients drop
//     fields they do not know; a non-nil empty list still clears);
//   - observed generations left 0 keep the stored ones (keepObservedGeneration);
//   - the fields of features off in v1.37 are dropped unless the stored status uses them
//     (DropDisabledPodFields): volume health (CSIVolumeHealth), node-allocatable claim
//     statuses (DRANodeAllocatableResources) and image volume statuses of volume mounts
//     (ImageVolumeWithDigest).
func prepareStatus(o, prev *corev1.Pod) {
	defaults.PodStatus(&o.Status)
	o.OwnerReferences = prev.OwnerReferences
	st, ps := &o.Status, &prev.Status
	if st.QOSClass == "" {
		st.QOSClass = ps.QOSClass
	}
	if st.ResourceClaimStatuses == nil && ps.ResourceClaimStatuses != nil {
		st.ResourceClaimStatuses = ps.ResourceClaimStatuses
	}
	if st.ExtendedResourceClaimStatus == nil && ps.ExtendedResourceClaimStatus != nil {
		st.ExtendedResourceClaimStatus = ps.ExtendedResourceClaimStatus
	}
	if st.NodeAllocatableResourceClaimStatuses == nil && ps.NodeAllocatableResourceClaimStatuses != nil {
		st.NodeAllocatableResourceClaimStatuses = ps.NodeAllocatableResourceClaimStatuses
	}
	keepObservedGeneration(o, prev)
	if len(ps.VolumeHealth) == 0 {
		st.VolumeHealth = nil
	}
	if len(ps.NodeAllocatableResourceClaimStatuses) == 0 {
		st.NodeAllocatableResourceClaimStatuses = nil
	}
	if !volumeStatusInUse(ps) {
		for _, cs := range [][]corev1.ContainerStatus{st.ContainerStatuses, st.InitContainerStatuses, st.EphemeralContainerStatuses} {
			for i := range cs {
				for j := range cs[i].VolumeMounts {
					cs[i].VolumeMounts[j].VolumeStatus = nil
				}
			}
		}
	}
}

// volumeStatusInUse is upstream's imageVolumeWithDigestInUse: a volume mount of some
// container's status has a volume status.
func volumeStatusInUse(st *corev1.PodStatus) bool {
	for _, cs := range [][]corev1.ContainerStatus{st.ContainerStatuses, st.InitContainerStatuses, st.EphemeralContainerStatuses} {
		for _, c := range cs {
			for _, m := range c.VolumeMounts {
				if m.VolumeStatus != nil {
					return true
				}
			}
		}
	}
	return false
}

// keepObservedGeneration is upstream's preserveOldObservedGeneration: a status write that
// leaves status.observedGeneration 0 keeps the stored one, and a condition that leaves its
// observedGeneration 0 keeps that of the stored condition of its type in the same place
// among those of its type (validation allows several of a type).
func keepObservedGeneration(o, prev *corev1.Pod) {
	if o.Status.ObservedGeneration == 0 {
		o.Status.ObservedGeneration = prev.Status.ObservedGeneration
	}
	byType := map[corev1.PodConditionType][]int64{}
	for _, c := range prev.Status.Conditions {
		byType[c.Type] = append(byType[c.Type], c.ObservedGeneration)
	}
	for i := range o.Status.Conditions {
		c := &o.Status.Conditions[i]
		gen := int64(0)
		if gens := byType[c.Type]; len(gens) > 0 {
			gen, byType[c.Type] = gens[0], gens[1:]
		}
		if c.ObservedGeneration == 0 {
			c.ObservedGeneration = gen
		}
	}
}

// keepResizeOnly is upstream's dropNonResizeUpdates: o gets the stored spec, with o's
// container resources and resize policies and o's spec.resources; unless o adds, removes,
// reorders or renames containers, which it keeps as sent for validation to refuse.
func keepResizeOnly(o, prev *corev1.Pod) {
	if len(o.Spec.Containers) != len(prev.Spec.Containers) || len(o.Spec.InitContainers) != len(prev.Spec.InitContainers) {
		return
	}
	merge := func(cs, olds []corev1.Container) ([]corev1.Container, bool) {
		if len(cs) == 0 {
			return cs, true
		}
		out := make([]corev1.Container, len(olds))
		for i := range olds {
			if cs[i].Name != olds[i].Name {
				return cs, false
			}
			out[i] = *olds[i].DeepCopy()
			out[i].Resources = cs[i].Resources
			out[i].ResizePolicy = cs[i].ResizePolicy
		}
		return out, true
	}
	podLevel := o.Spec.Resources
	containers, _ := merge(o.Spec.Containers, prev.Spec.Containers)
	inits, _ := merge(o.Spec.InitContainers, prev.Spec.InitContainers)
	o.Spec = *prev.Spec.DeepCopy()
	o.Spec.Resources = podLevel
	o.Spec.Containers = containers
	o.Spec.InitContainers = inits
}

// ValidateSubresourceUpdate validates pods/status (upstream's ValidatePodStatusUpdate),
// pods/resize (ValidatePodResize) and pods/ephemeralcontainers
// (ValidatePodEphemeralContainersUpdate).
func (Pod) ValidateSubresourceUpdate(subresource string, obj, old runtime.Object) (field.ErrorList, bool) {
	o, prev := obj.(*corev1.Pod), old.(*corev1.Pod)
	switch subresource {
	case "status":
		return validation.PodStatusUpdate(o, prev), true
	case "resize":
		return validation.PodResize(o, prev, quota.PodQOS(prev) != quota.ComputePodQOS(o)), true
	case "ephemeralcontainers":
		return validation.PodEphemeralContainersUpdate(o, prev), true
	}
	return nil, false
}

// StatusKeepsMetadata: a pod's /status write applies its metadata (upstream's status
// strategy keeps only the spec and the owner references, which PrepareForUpdate restores).
func (Pod) StatusKeepsMetadata() bool { return true }

// GracePeriod is upstream's CheckGracefulDelete: the requested period, else
// spec.terminationGracePeriodSeconds (else 0); 0 for a pod not bound to a node or
// already terminal (Succeeded or Failed), which no node has to stop; a negative period is
// 1.
func (Pod) GracePeriod(obj runtime.Object, requested *int64) int64 {
	o := obj.(*corev1.Pod)
	period := int64(0)
	switch {
	case requested != nil:
		period = *requested
	case o.Spec.TerminationGracePeriodSeconds != nil:
		period = *o.Spec.TerminationGracePeriodSeconds
	}
	if o.Spec.NodeName == "" || o.Status.Phase == corev1.PodFailed || o.Status.Phase == corev1.PodSucceeded {
		period = 0
	}
	if period < 0 {
		period = 1
	}
	return period
}

// Fields adds upstream's pod field labels.
func (Pod) Fields(obj runtime.Object, set fields.Set) {
	o := obj.(*corev1.Pod)
	set["spec.nodeName"] = o.Spec.NodeName
	set["spec.restartPolicy"] = string(o.Spec.RestartPolicy)
	set["spec.schedulerName"] = o.Spec.SchedulerName
	set["spec.serviceAccountName"] = o.Spec.ServiceAccountName
	set["spec.hostNetwork"] = fmt.Sprint(o.Spec.HostNetwork)
	set["status.phase"] = string(o.Status.Phase)
	set["status.podIP"] = o.Status.PodIP
	set["status.nominatedNodeName"] = o.Status.NominatedNodeName
}

// ConvertFieldLabel is upstream's field label conversion of v1 Pods: spec.host is the old
// name of spec.nodeName; status.podIPs is accepted though no pod is labelled with it, so it
// matches an empty value.
func (Pod) ConvertFieldLabel(label, value string) (string, string, error) {
	switch label {
	case "metadata.name", "metadata.namespace", "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs", "status.nominatedNodeName":
		return label, value, nil
	case "spec.host":
		return "spec.nodeName", value, nil
	}
	return "", "", fmt.Errorf("field label not supported: %s", label)
}

// appArmorVersionSkew is upstream's applyAppArmorVersionSkew: outside Windows pods, a
// container with a deprecated AppArmor annotation and no appArmorProfile of its own gets
// the profile the annotation names, when that is valid and differs from the pod's.
func appArmorVersionSkew(o *corev1.Pod) {
	if o.Spec.OS != nil && o.Spec.OS.Name == corev1.Windows {
		return
	}
	var podProfile *corev1.AppArmorProfile
	if o.Spec.SecurityContext != nil {
		podProfile = o.Spec.SecurityContext.AppArmorProfile
	}
	visit := func(c *corev1.Container) {
		v, ok := o.Annotations[corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix+c.Name]
		if !ok || (c.SecurityContext != nil && c.SecurityContext.AppArmorProfile != nil) {
			return
		}
		prof := appArmorProfileForAnnotation(v)
		if prof == nil || apiequality.Semantic.DeepEqual(prof, podProfile) {
			return
		}
		if c.SecurityContext == nil {
			c.SecurityContext = &corev1.SecurityContext{}
		}
		c.SecurityContext.AppArmorProfile = prof
	}
	for i := range o.Spec.InitContainers {
		visit(&o.Spec.InitContainers[i])
	}
	for i := range o.Spec.Containers {
		visit(&o.Spec.Containers[i])
	}
	for i := range o.Spec.EphemeralContainers {
		visit((*corev1.Container)(&o.Spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
}

// appArmorProfileForAnnotation is upstream's ApparmorFieldForAnnotation, nil also where
// upstream's ValidateAppArmorProfileField would refuse the profile (a localhost profile
// padded with whitespace or longer than 4095 bytes).
func appArmorProfileForAnnotation(v string) *corev1.AppArmorProfile {
	switch {
	case v == corev1.DeprecatedAppArmorBetaProfileNameUnconfined:
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
	case v == corev1.DeprecatedAppArmorBetaProfileRuntimeDefault:
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}
	case strings.HasPrefix(v, corev1.DeprecatedAppArmorBetaProfileNamePrefix):
		name := strings.TrimPrefix(v, corev1.DeprecatedAppArmorBetaProfileNamePrefix)
		if name == "" || strings.TrimSpace(name) != name || len(name) > 4095 {
			return nil
		}
		return &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: &name}
	}
	return nil
}
