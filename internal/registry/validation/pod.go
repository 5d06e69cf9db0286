package validation

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/quotad/quotad/internal/quota/quantity"
	"github.com/quotad/quotad/internal/registry/convert"
)

// Pod validates a Pod on create (upstream ValidatePodCreate).
func Pod(pod *corev1.Pod) field.ErrorList {
	errs := podMetadataAndSpec(pod, nil)
	sp := field.NewPath("spec")
	if len(pod.Spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(sp.Child("ephemeralContainers"), "cannot be set on create"))
	}
	if pod.Spec.NodeName != "" && len(pod.Spec.SchedulingGates) != 0 {
		errs = append(errs, field.Forbidden(sp.Child("nodeName"), "cannot be set until all schedulingGates have been cleared"))
	}
	errs = append(errs, seccompAnnotationsMatchFields(pod, sp)...)
	return append(errs, appArmorAnnotationsMatchFields(pod, sp)...)
}

// podMetadataAndSpec is upstream validatePodMetadataAndSpec; old is the stored pod of an
// update (nil on create).
func podMetadataAndSpec(pod, old *corev1.Pod) field.ErrorList {
	sp := field.NewPath("spec")
	errs := objectMeta(&pod.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	errs = append(errs, podSpecificAnnotations(pod.Annotations, &pod.Spec, metaPath.Child("annotations"), old != nil && invalidDeletionCost(old.Annotations))...)
	errs = append(errs, podSpec(&pod.Spec, pod.Name, sp, true)...)
	if pod.Spec.ServiceAccountName == "" {
		for vi, v := range pod.Spec.Volumes {
			if v.Projected == nil {
				continue
			}
			for si, src := range v.Projected.Sources {
				if src.ServiceAccountToken != nil {
					errs = append(errs, field.Forbidden(sp.Child("volumes").Index(vi).Child("projected").Child("sources").Index(si).Child("serviceAccountToken"),
						"must not be specified when serviceAccountName is not set"))
				}
			}
		}
	}
	errs = append(errs, containersOnlyForPod(pod.Spec.Containers, sp.Child("containers"))...)
	errs = append(errs, containersOnlyForPod(pod.Spec.InitContainers, sp.Child("initContainers"))...)
	return errs
}

func containersOnlyForPod(cs []corev1.Container, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range cs {
		if len(cs[i].Image) != len(strings.TrimSpace(cs[i].Image)) {
			errs = append(errs, field.Invalid(p.Index(i).Child("image"), cs[i].Image, "must not have leading or trailing whitespace"))
		}
	}
	return errs
}

const mirrorPodAnnotation = "kubernetes.io/config.mirror"

// podSpecificAnnotations is upstream ValidatePodSpecificAnnotations (the mirror-pod,
// tolerations, deletion-cost, seccomp and AppArmor annotations); allowInvalidCost is set for an update of a pod whose stored
// deletion cost is already invalid (upstream's AllowInvalidPodDeletionCost).
func podSpecificAnnotations(a map[string]string, spec *corev1.PodSpec, p *field.Path, allowInvalidCost bool) field.ErrorList {
	var errs field.ErrorList
	if v, ok := a[mirrorPodAnnotation]; ok && spec.NodeName == "" {
		errs = append(errs, field.Invalid(p.Key(mirrorPodAnnotation), v, "must set spec.nodeName if mirror pod annotation is set"))
	}
	errs = append(errs, tolerationsAnnotation(a, p)...)
	if !allowInvalidCost && invalidDeletionCost(a) {
		errs = append(errs, field.Invalid(p.Key(corev1.PodDeletionCost), a[corev1.PodDeletionCost], "must be a 32bit integer"))
	}
	errs = append(errs, seccompAnnotations(a, p)...)
	return append(errs, appArmorAnnotations(a, spec, p)...)
}

// invalidDeletionCost reports a controller.kubernetes.io/pod-deletion-cost annotation
// that upstream's GetDeletionCostFromPodAnnotations refuses: not a decimal int32, or
// written with a plus sign or a leading zero ("-0" and "-08" pass, as upstream's).
func invalidDeletionCost(a map[string]string) bool {
	v, ok := a[corev1.PodDeletionCost]
	if !ok {
		return false
	}
	if v == "" || !(v[0] == '-' || v == "0" || (v[0] >= '1' && v[0] <= '9')) {
		return true
	}
	_, err := strconv.ParseInt(v, 10, 32)
	return err != nil
}

// podSpec is upstream ValidatePodSpec. podName is set only for Pod objects
// (it names ephemeral volume claims); isPod selects the pod-only host
// network rule.
func podSpec(spec *corev1.PodSpec, podName string, p *field.Path, isPod bool) field.ErrorList {
	var errs field.ErrorList
	if spec.TerminationGracePeriodSeconds == nil {
		errs = append(errs, field.Required(p.Child("terminationGracePeriodSeconds"), ""))
	}
	grace := spec.TerminationGracePeriodSeconds
	var vols map[string]corev1.VolumeSource
	if len(spec.Volumes) > 0 {
		var vErrs field.ErrorList
		vols, vErrs = volumes(spec.Volumes, podName, p.Child("volumes"))
		errs = append(errs, vErrs...)
	}
	claimNames := sets.Set[string]{}
	for i, c := range spec.ResourceClaims {
		cp := p.Child("resourceClaims").Index(i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(cp.Child("name"), ""))
		case claimNames.Has(c.Name):
			errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
		default:
			errs = append(errs, dns1123Label(c.Name, cp.Child("name"))...)
			claimNames.Insert(c.Name)
		}
	}
	errs = append(errs, containers(spec.Containers, vols, claimNames, grace, p.Child("containers"), spec.RestartPolicy)...)
	if len(spec.InitContainers) > 0 {
		errs = append(errs, initContainers(spec.InitContainers, spec.Containers, vols, claimNames, grace, p.Child("initContainers"), spec.RestartPolicy)...)
	}
	if len(spec.EphemeralContainers) > 0 {
		errs = append(errs, ephemeralContainers(spec.EphemeralContainers, spec.Containers, spec.InitContainers, vols, claimNames, p.Child("ephemeralContainers"), spec.RestartPolicy)...)
	}
	if spec.Resources != nil {
		errs = append(errs, podResources(spec, claimNames, p.Child("resources"))...)
	}
	if spec.HostNetwork {
		for i, c := range spec.Containers {
			for j, port := range c.Ports {
				if (isPod || port.HostPort != 0) && port.HostPort != port.ContainerPort {
					errs = append(errs, field.Invalid(p.Child("containers").Index(i).Child("ports").Index(j).Child("hostPort"), port.HostPort,
						"must match `containerPort` when `hostNetwork` is true"))
				}
			}
		}
	}
	// The checks that nearly always pass build their paths only for errors (under).
	errs = append(errs, under(p, "restartPolicy", func(fp *field.Path) field.ErrorList { return restartPolicy(spec.RestartPolicy, fp) })...)
	errs = append(errs, under(p, "dnsPolicy", func(fp *field.Path) field.ErrorList { return dnsPolicy(spec.DNSPolicy, fp) })...)
	if len(spec.NodeSelector) > 0 {
		errs = append(errs, metav1validation.ValidateLabels(spec.NodeSelector, p.Child("nodeSelector"))...)
	}
	if spec.SecurityContext != nil {
		errs = append(errs, podSecurityContext(spec, p.Child("securityContext"))...)
	}
	for i, s := range spec.ImagePullSecrets {
		if !reflect.DeepEqual(corev1.LocalObjectReference{Name: s.Name}, s) {
			errs = append(errs, field.Invalid(p.Child("imagePullSecrets").Index(i), convert.InternalJSON(s), "only name may be set"))
		}
	}
	if spec.Affinity != nil {
		errs = append(errs, under(p, "affinity", func(fp *field.Path) field.ErrorList { return podAffinity(spec.Affinity, fp) })...)
	}
	errs = append(errs, under(p, "dnsConfig", func(fp *field.Path) field.ErrorList { return podDNSConfig(spec.DNSConfig, spec.DNSPolicy, fp) })...)
	for i, g := range spec.ReadinessGates {
		errs = append(errs, qualifiedName(string(g.ConditionType), p.Child("readinessGates").Index(i).Child("conditionType"))...)
	}
	seenGates := sets.Set[string]{}
	for i, g := range spec.SchedulingGates {
		errs = append(errs, qualifiedName(g.Name, p.Child("schedulingGates").Index(i))...)
		if seenGates.Has(g.Name) {
			errs = append(errs, field.Duplicate(p.Child("schedulingGates").Index(i), g.Name))
		}
		seenGates.Insert(g.Name)
	}
	if len(spec.TopologySpreadConstraints) > 0 {
		errs = append(errs, under(p, "topologySpreadConstraints", func(fp *field.Path) field.ErrorList { return topologySpread(spec.TopologySpreadConstraints, fp) })...)
	}
	if spec.ServiceAccountName != "" {
		errs = append(errs, under(p, "serviceAccountName", func(fp *field.Path) field.ErrorList {
			return nameErrs(nameIsDNSSubdomain, spec.ServiceAccountName, fp)
		})...)
	}
	if dsa := spec.DeprecatedServiceAccount; dsa != spec.ServiceAccountName { //nolint:staticcheck // SA1019: kept in step with serviceAccountName
		errs = append(errs, field.Invalid(p.Child("deprecatedServiceAccount"), dsa, fmt.Sprintf("must be the same as serviceAccountName: %q", spec.ServiceAccountName)))
	}
	if spec.NodeName != "" {
		errs = append(errs, nameErrs(nameIsDNSSubdomain, spec.NodeName, p.Child("nodeName"))...)
	}
	if spec.ActiveDeadlineSeconds != nil {
		if v := *spec.ActiveDeadlineSeconds; v < 1 || v > math.MaxInt32 {
			errs = append(errs, field.Invalid(p.Child("activeDeadlineSeconds"), v, validation.InclusiveRangeError(1, math.MaxInt32)))
		}
	}
	if spec.Hostname != "" {
		errs = append(errs, dns1123Label(spec.Hostname, p.Child("hostname"))...)
	}
	if spec.Subdomain != "" {
		errs = append(errs, dns1123Label(spec.Subdomain, p.Child("subdomain"))...)
	}
	if len(spec.Tolerations) > 0 {
		errs = append(errs, tolerations(spec.Tolerations, p.Child("tolerations"))...)
	}
	for i, a := range spec.HostAliases {
		errs = append(errs, validation.IsValidIP(p.Child("hostAliases").Index(i).Child("ip"), a.IP)...)
		for j, h := range a.Hostnames {
			errs = append(errs, dns1123Subdomain(h, p.Child("hostAliases").Index(i).Child("hostnames").Index(j))...)
		}
	}
	if spec.PriorityClassName != "" {
		errs = append(errs, nameErrs(nameIsDNSSubdomain, spec.PriorityClassName, p.Child("priorityClassName"))...)
	}
	if spec.RuntimeClassName != nil {
		errs = append(errs, nameErrs(nameIsDNSSubdomain, *spec.RuntimeClassName, p.Child("runtimeClassName"))...)
	}
	if spec.PreemptionPolicy != nil {
		errs = append(errs, preemptionPolicy(spec.PreemptionPolicy, p.Child("preemptionPolicy"))...)
	}
	if spec.Overhead != nil {
		errs = append(errs, resourceRequirements(&corev1.ResourceRequirements{Limits: spec.Overhead}, containerResourceName, nil, p.Child("overhead"))...)
	}
	if spec.OS != nil && spec.OS.Name != corev1.Linux && spec.OS.Name != corev1.Windows {
		errs = append(errs, field.NotSupported(p.Child("os").Child("name"), spec.OS.Name, []corev1.OSName{corev1.Linux, corev1.Windows}))
	}
	return errs
}

// podResources is upstream validatePodResources (pod-level resources).
func podResources(spec *corev1.PodSpec, claimNames sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.Resources.Claims != nil {
		errs = append(errs, field.Forbidden(p.Child("claims"), "claims cannot be set for Resources at pod-level"))
	}
	errs = append(errs, resourceRequirements(spec.Resources, podResourceName, claimNames, p)...)
	// Pod-level requests must cover the aggregate container requests of the names they
	// set, pod-level hugepages limits the aggregate container hugepages limits, and no
	// container limit may exceed the pod-level limit of its name (upstream's
	// validatePodResourceConsistency).
	cp := &corev1.Pod{Spec: *spec}
	agg := resourcehelper.AggregateContainerRequests(cp, resourcehelper.PodResourcesOptions{})
	var names namesBuf
	for _, n := range sortedNames(agg, &names) {
		podReq, ok := spec.Resources.Requests[n]
		if !ok {
			continue
		}
		if ctr := agg[n]; quantity.Cmp(ctr, podReq) > 0 {
			errs = append(errs, field.Invalid(p.Child("requests").Key(string(n)), podReq.String(),
				fmt.Sprintf("must be greater than or equal to aggregate container requests of %s", ctr.String())))
		}
	}
	aggLims := resourcehelper.AggregateContainerLimits(cp, resourcehelper.PodResourcesOptions{})
	for _, n := range sortedNames(aggLims, &names) {
		podLim, ok := spec.Resources.Limits[n]
		if !ok || !strings.HasPrefix(string(n), corev1.ResourceHugePagesPrefix) {
			continue
		}
		if ctr := aggLims[n]; quantity.Cmp(ctr, podLim) > 0 {
			errs = append(errs, field.Invalid(p.Child("limits").Key(string(n)), podLim.String(),
				fmt.Sprintf("must be greater than or equal to aggregate container limits of %s", ctr.String())))
		}
	}
	for i, c := range spec.Containers {
		for _, n := range sortedNames(c.Resources.Limits, &names) {
			lim := c.Resources.Limits[n]
			podLim, ok := spec.Resources.Limits[n]
			if ok && quantity.Cmp(lim, podLim) > 0 {
				errs = append(errs, field.Invalid(p.Child("containers").Index(i).Key(string(n)).Child("limits"), lim.String(),
					fmt.Sprintf("must be less than or equal to pod limits of %s", podLim.String())))
			}
		}
	}
	return errs
}

// requiredEnum is upstream's check of a required field with a fixed set of values: Required
// when empty, NotSupported (listing them) when not one of them.
func requiredEnum[T ~string](v T, p *field.Path, allowed ...T) field.ErrorList {
	switch {
	case v == "":
		return field.ErrorList{field.Required(p, "")}
	case slices.Contains(allowed, v):
		return nil
	}
	return field.ErrorList{field.NotSupported(p, v, allowed)}
}

func restartPolicy(rp corev1.RestartPolicy, p *field.Path) field.ErrorList {
	return requiredEnum(rp, p, corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever)
}

func dnsPolicy(dp corev1.DNSPolicy, p *field.Path) field.ErrorList {
	return requiredEnum(dp, p, corev1.DNSClusterFirstWithHostNet, corev1.DNSClusterFirst, corev1.DNSDefault, corev1.DNSNone)
}

func preemptionPolicy(pp *corev1.PreemptionPolicy, p *field.Path) field.ErrorList {
	return requiredEnum(*pp, p, corev1.PreemptLowerPriority, corev1.PreemptNever)
}

func podDNSConfig(c *corev1.PodDNSConfig, dp corev1.DNSPolicy, p *field.Path) field.ErrorList {
	if dp == corev1.DNSNone {
		if c == nil {
			return field.ErrorList{field.Required(p, fmt.Sprintf("must provide `dnsConfig` when `dnsPolicy` is %s", corev1.DNSNone))}
		}
		if len(c.Nameservers) == 0 {
			return field.ErrorList{field.Required(p.Child("nameservers"), fmt.Sprintf("must provide at least one DNS nameserver when `dnsPolicy` is %s", corev1.DNSNone))}
		}
	}
	if c == nil {
		return nil
	}
	var errs field.ErrorList
	if len(c.Nameservers) > 3 {
		errs = append(errs, field.Invalid(p.Child("nameservers"), c.Nameservers, "must not have more than 3 nameservers"))
	}
	for i, ns := range c.Nameservers {
		errs = append(errs, validation.IsValidIP(p.Child("nameservers").Index(i), ns)...)
	}
	if len(c.Searches) > 32 {
		errs = append(errs, field.Invalid(p.Child("searches"), c.Searches, "must not have more than 32 search paths"))
	}
	if len(strings.Join(c.Searches, " ")) > 2048 {
		errs = append(errs, field.Invalid(p.Child("searches"), c.Searches, "must not have more than 2048 characters (including spaces) in the search list"))
	}
	for i, s := range c.Searches {
		if s == "." {
			continue
		}
		s = strings.TrimSuffix(s, ".")
		for _, msg := range validation.IsDNS1123SubdomainWithUnderscore(s) {
			errs = append(errs, field.Invalid(p.Child("searches").Index(i), s, msg))
		}
	}
	for i, o := range c.Options {
		if o.Name == "" {
			errs = append(errs, field.Required(p.Child("options").Index(i), "must not be empty"))
		}
	}
	return errs
}

// optionalID checks a user or group ID, when set, with check.
func optionalID(id *int64, check func(int64) []string, p *field.Path) field.ErrorList {
	if id == nil {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range check(*id) {
		errs = append(errs, field.Invalid(p, *id, msg))
	}
	return errs
}

func podSecurityContext(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	sc := spec.SecurityContext
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, under(p, "fsGroup", func(fp *field.Path) field.ErrorList { return optionalID(sc.FSGroup, validation.IsValidGroupID, fp) })...)
	errs = append(errs, under(p, "runAsUser", func(fp *field.Path) field.ErrorList { return optionalID(sc.RunAsUser, validation.IsValidUserID, fp) })...)
	errs = append(errs, under(p, "runAsGroup", func(fp *field.Path) field.ErrorList { return optionalID(sc.RunAsGroup, validation.IsValidGroupID, fp) })...)
	for g, gid := range sc.SupplementalGroups {
		for _, msg := range validation.IsValidGroupID(gid) {
			errs = append(errs, field.Invalid(p.Child("supplementalGroups").Index(g), gid, msg))
		}
	}
	if sc.FSGroupChangePolicy != nil && *sc.FSGroupChangePolicy != corev1.FSGroupChangeOnRootMismatch && *sc.FSGroupChangePolicy != corev1.FSGroupChangeAlways {
		errs = append(errs, field.NotSupported(p.Child("fsGroupChangePolicy"), sc.FSGroupChangePolicy, []corev1.PodFSGroupChangePolicy{corev1.FSGroupChangeAlways, corev1.FSGroupChangeOnRootMismatch}))
	}
	errs = append(errs, under(p, "seccompProfile", func(fp *field.Path) field.ErrorList { return seccompProfileField(sc.SeccompProfile, fp) })...)
	errs = append(errs, under(p, "appArmorProfile", func(fp *field.Path) field.ErrorList { return appArmorProfileField(sc.AppArmorProfile, fp) })...)
	return errs
}

// seccompProfileField is upstream's validateSeccompProfileField.
func seccompProfileField(sp *corev1.SeccompProfile, p *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	var errs field.ErrorList
	switch sp.Type {
	case corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined:
	case "":
		errs = append(errs, field.Required(p.Child("type"), "type is required when seccompProfile is set"))
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), sp.Type, []corev1.SeccompProfileType{corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined}))
	}
	if sp.Type == corev1.SeccompProfileTypeLocalhost {
		if sp.LocalhostProfile == nil {
			errs = append(errs, field.Required(p.Child("localhostProfile"), "must be set when seccomp type is Localhost"))
		} else {
			errs = append(errs, localDescendingPath(*sp.LocalhostProfile, p.Child("localhostProfile"))...)
		}
	} else if sp.LocalhostProfile != nil {
		errs = append(errs, field.Invalid(p.Child("localhostProfile"), convert.InternalJSON(sp), "can only be set when seccomp type is Localhost"))
	}
	return errs
}

// appArmorProfileField is upstream's ValidateAppArmorProfileField.
func appArmorProfileField(ap *corev1.AppArmorProfile, p *field.Path) field.ErrorList {
	if ap == nil {
		return nil
	}
	var errs field.ErrorList
	switch ap.Type {
	case corev1.AppArmorProfileTypeLocalhost:
		if ap.LocalhostProfile == nil {
			errs = append(errs, field.Required(p.Child("localhostProfile"), "must be set when AppArmor type is Localhost"))
			break
		}
		trimmed := strings.TrimSpace(*ap.LocalhostProfile)
		if trimmed != *ap.LocalhostProfile {
			errs = append(errs, field.Invalid(p.Child("localhostProfile"), *ap.LocalhostProfile, "must not be padded with whitespace"))
		} else if trimmed == "" {
			errs = append(errs, field.Required(p.Child("localhostProfile"), "must be set when AppArmor type is Localhost"))
		}
		const maxLocalhostProfileLength = 4095 // PATH_MAX - 1
		if len(*ap.LocalhostProfile) > maxLocalhostProfileLength {
			errs = append(errs, field.TooLong(p.Child("localhostProfile"), "", maxLocalhostProfileLength))
		}
	case corev1.AppArmorProfileTypeRuntimeDefault, corev1.AppArmorProfileTypeUnconfined:
		if ap.LocalhostProfile != nil {
			errs = append(errs, field.Invalid(p.Child("localhostProfile"), ap.LocalhostProfile, "can only be set when AppArmor type is Localhost"))
		}
	case "":
		errs = append(errs, field.Required(p.Child("type"), "type is required when appArmorProfile is set"))
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), ap.Type, []corev1.AppArmorProfileType{corev1.AppArmorProfileTypeLocalhost, corev1.AppArmorProfileTypeRuntimeDefault, corev1.AppArmorProfileTypeUnconfined}))
	}
	return errs
}

// tolerations is upstream ValidateTolerations.
func tolerations(ts []corev1.Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range ts {
		// Each toleration's paths are built only for its errors.
		errs = append(errs, withPath(func() *field.Path { return p.Index(i) }, func(ip *field.Path) field.ErrorList { return toleration(t, ip) })...)
	}
	return errs
}

// toleration is one toleration of upstream ValidateTolerations, at ip.
func toleration(t corev1.Toleration, ip *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Key != "" {
		errs = append(errs, under(ip, "key", func(kp *field.Path) field.ErrorList { return labelName(t.Key, kp) })...)
	}
	if t.Key == "" && t.Operator != corev1.TolerationOpExists {
		errs = append(errs, field.Invalid(ip.Child("operator"), t.Operator,
			"operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
	}
	if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
		errs = append(errs, field.Invalid(ip.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
	}
	switch t.Operator {
	case corev1.TolerationOpEqual, "":
		if msgs := validation.IsValidLabelValue(t.Value); len(msgs) != 0 {
			errs = append(errs, field.Invalid(ip.Child("operator"), t.Value, strings.Join(msgs, ";")))
		}
	case corev1.TolerationOpExists:
		if t.Value != "" {
			errs = append(errs, field.Invalid(ip.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
		}
	default:
		errs = append(errs, field.NotSupported(ip.Child("operator"), t.Operator, []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
	}
	if t.Effect != "" {
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			errs = append(errs, field.NotSupported(ip.Child("effect"), t.Effect, []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}))
		}
	}
	return errs
}

// PodUpdate validates an update of a Pod (upstream ValidatePodUpdate): the
// new pod must be valid and only container images, activeDeadlineSeconds
// (set or lowered), tolerations (additions), scheduling gates (removals)
// and a negative terminationGracePeriodSeconds (to 1) may change in spec.
func PodUpdate(n, o *corev1.Pod) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, podMetadataAndSpec(n, o)...)
	errs = append(errs, podSpecificAnnotationUpdates(n, o, metaPath.Child("annotations"))...)
	sp := field.NewPath("spec")
	cErrs, stop := containerUpdates(n.Spec.Containers, o.Spec.Containers, sp.Child("containers"))
	errs = append(errs, cErrs...)
	if stop {
		return errs
	}
	cErrs, stop = containerUpdates(n.Spec.InitContainers, o.Spec.InitContainers, sp.Child("initContainers"))
	errs = append(errs, cErrs...)
	if stop {
		return errs
	}
	if n.Spec.ActiveDeadlineSeconds != nil {
		v := *n.Spec.ActiveDeadlineSeconds
		if v < 0 || v > math.MaxInt32 {
			return append(errs, field.Invalid(sp.Child("activeDeadlineSeconds"), v, validation.InclusiveRangeError(0, math.MaxInt32)))
		}
		if o.Spec.ActiveDeadlineSeconds != nil && *o.Spec.ActiveDeadlineSeconds < v {
			return append(errs, field.Invalid(sp.Child("activeDeadlineSeconds"), v, "must be less than or equal to previous value"))
		}
	} else if o.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Invalid(sp.Child("activeDeadlineSeconds"), n.Spec.ActiveDeadlineSeconds, "must not update from a positive integer to nil value"))
	}
	errs = append(errs, onlyAddedTolerations(n.Spec.Tolerations, o.Spec.Tolerations, sp.Child("tolerations"))...)
	errs = append(errs, onlyDeletedSchedulingGates(n.Spec.SchedulingGates, o.Spec.SchedulingGates, sp.Child("schedulingGates"))...)
	if semantic.DeepEqual(n.Spec, o.Spec) {
		return errs
	}
	munged := *n.Spec.DeepCopy()
	for i := range munged.Containers {
		munged.Containers[i].Image = o.Spec.Containers[i].Image
	}
	for i := range munged.InitContainers {
		munged.InitContainers[i].Image = o.Spec.InitContainers[i].Image
	}
	munged.ActiveDeadlineSeconds = nil
	if o.Spec.ActiveDeadlineSeconds != nil {
		v := *o.Spec.ActiveDeadlineSeconds
		munged.ActiveDeadlineSeconds = &v
	}
	munged.SchedulingGates = o.Spec.SchedulingGates
	munged.Tolerations = o.Spec.Tolerations
	if o.Spec.TerminationGracePeriodSeconds != nil && *o.Spec.TerminationGracePeriodSeconds < 0 &&
		munged.TerminationGracePeriodSeconds != nil && *munged.TerminationGracePeriodSeconds == 1 {
		munged.TerminationGracePeriodSeconds = o.Spec.TerminationGracePeriodSeconds
	}
	if len(o.Spec.SchedulingGates) > 0 {
		// Gated pods may add node selector entries and tighten node affinity.
		if !semantic.DeepEqual(munged.NodeSelector, o.Spec.NodeSelector) {
			errs = append(errs, nodeSelectorMutation(sp.Child("nodeSelector"), munged.NodeSelector, o.Spec.NodeSelector)...)
			munged.NodeSelector = o.Spec.NodeSelector
		}
	}
	if !semantic.DeepEqual(munged, o.Spec) {
		specDiff := diff.Diff(convert.InternalJSON(o.Spec), convert.InternalJSON(munged))
		errs = append(errs, field.Forbidden(sp, fmt.Sprintf("pod updates may not change fields other than %s\n%v", strings.Join(updatablePodSpecFields, ","), specDiff)))
	}
	return errs
}

var updatablePodSpecFields = []string{
	"`spec.containers[*].image`",
	"`spec.initContainers[*].image`",
	"`spec.activeDeadlineSeconds`",
	"`spec.tolerations` (only additions to existing tolerations)",
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
}

func containerUpdates(n, o []corev1.Container, p *field.Path) (field.ErrorList, bool) {
	if len(n) != len(o) {
		return field.ErrorList{field.Forbidden(p, "pod updates may not add or remove containers")}, true
	}
	var errs field.ErrorList
	for i, c := range n {
		if c.Image == "" {
			errs = append(errs, field.Required(p.Index(i).Child("image"), ""))
		}
	}
	return errs, false
}

func onlyAddedTolerations(n, o []corev1.Toleration, p *field.Path) field.ErrorList {
	for _, ot := range o {
		found := false
		for _, nt := range n {
			c := ot
			c.TolerationSeconds = nt.TolerationSeconds
			if reflect.DeepEqual(c, nt) {
				found = true
				break
			}
		}
		if !found {
			return field.ErrorList{field.Forbidden(p, "existing toleration can not be modified except its tolerationSeconds")}
		}
	}
	return tolerations(n, p)
}

func onlyDeletedSchedulingGates(n, o []corev1.PodSchedulingGate, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(n) == 0 {
		return nil
	}
	old := sets.Set[string]{}
	for _, g := range o {
		old.Insert(g.Name)
	}
	for i, g := range n {
		if !old.Has(g.Name) {
			errs = append(errs, field.Forbidden(p.Index(i).Child("name"), fmt.Sprintf("only deletion is allowed, but found new scheduling gate '%s'", g.Name)))
		}
	}
	return errs
}

func nodeSelectorMutation(p *field.Path, n, o map[string]string) field.ErrorList {
	var errs field.ErrorList
	for k, ov := range o {
		if nv, ok := n[k]; !ok || nv != ov {
			errs = append(errs, field.Invalid(p.Key(k), n[k], "only additions to spec.nodeSelector are allowed (no mutations or deletions)"))
		}
	}
	return errs
}

// PodTemplate validates a PodTemplate object on create.
func PodTemplate(t *corev1.PodTemplate) field.ErrorList {
	errs := objectMeta(&t.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	return append(errs, podTemplateSpec(&t.Template, field.NewPath("template"))...)
}

// PodTemplateUpdate validates an update of a PodTemplate object.
func PodTemplateUpdate(n, o *corev1.PodTemplate) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	return append(errs, podTemplateSpec(&n.Template, field.NewPath("template"))...)
}

// podTemplateSpec is upstream ValidatePodTemplateSpec.
func podTemplateSpec(t *corev1.PodTemplateSpec, p *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabels(t.Labels, p.Child("labels"))
	errs = append(errs, annotations(t.Annotations, p.Child("annotations"))...)
	errs = append(errs, podSpecificAnnotations(t.Annotations, &t.Spec, p.Child("annotations"), false)...)
	errs = append(errs, podSpec(&t.Spec, "", p.Child("spec"), false)...)
	if len(t.Spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(p.Child("spec", "ephemeralContainers"), "ephemeral containers not allowed in pod template"))
	}
	return errs
}

// containers is upstream validateContainers.
func containers(cs []corev1.Container, vols map[string]corev1.VolumeSource, claims sets.Set[string], grace *int64, p *field.Path, rp corev1.RestartPolicy) field.ErrorList {
	if len(cs) == 0 {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	names := sets.Set[string]{}
	for i := range cs {
		c := &cs[i]
		cp := p.Index(i)
		errs = append(errs, containerCommon(c, vols, claims, cp, rp)...)
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
		} else {
			names.Insert(c.Name)
		}
		if c.Lifecycle != nil {
			errs = append(errs, lifecycle(c.Lifecycle, grace, cp.Child("lifecycle"))...)
		}
		if c.LivenessProbe != nil {
			errs = append(errs, livenessProbe(c.LivenessProbe, grace, cp.Child("livenessProbe"))...)
		}
		if c.ReadinessProbe != nil {
			errs = append(errs, readinessProbe(c.ReadinessProbe, grace, cp.Child("readinessProbe"))...)
		}
		if c.StartupProbe != nil {
			errs = append(errs, startupProbe(c.StartupProbe, grace, cp.Child("startupProbe"))...)
		}
		errs = append(errs, containerRestartPolicy(c.RestartPolicy, c.RestartPolicyRules, cp)...)
	}
	return append(errs, hostPortConflicts(cs, p)...)
}

// containerRestartPolicy is upstream validateContainerRestartPolicy with the
// ContainerRestartRules and RestartAllContainersOnContainerExits gates on (their
// v1.37 defaults), where validateInitContainerRestartPolicy reduces to it too:
// a container's restartPolicy is Always, Never or OnFailure, and each of at most
// 20 rules has a supported action and exitCodes with a supported operator and at
// most 255 values.
func containerRestartPolicy(rp *corev1.ContainerRestartPolicy, rules []corev1.ContainerRestartRule, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if rp == nil {
		if len(rules) == 0 {
			return nil
		}
		errs = append(errs, field.Required(p.Child("restartPolicy"), "must specify restartPolicy when restart rules are used"))
	} else if !slices.Contains(containerRestartPolicies, *rp) {
		errs = append(errs, field.NotSupported(p.Child("restartPolicy"), *rp, containerRestartPolicies))
	}
	if len(rules) > 20 {
		errs = append(errs, field.TooMany(p.Child("restartPolicyRules"), len(rules), 20))
	}
	for i, r := range rules {
		rip := p.Child("restartPolicyRules").Index(i)
		if !slices.Contains(containerRestartRuleActions, r.Action) {
			errs = append(errs, field.NotSupported(rip.Child("action"), r.Action, containerRestartRuleActions))
		}
		if r.ExitCodes == nil {
			errs = append(errs, field.Required(rip.Child("exitCodes"), "must be specified"))
			continue
		}
		if !slices.Contains(containerRestartRuleOperators, r.ExitCodes.Operator) {
			errs = append(errs, field.NotSupported(rip.Child("exitCodes", "operator"), r.ExitCodes.Operator, containerRestartRuleOperators))
		}
		if len(r.ExitCodes.Values) > 255 {
			errs = append(errs, field.TooMany(rip.Child("exitCodes", "values"), len(r.ExitCodes.Values), 255))
		}
	}
	return errs
}

// The supported container restart policies, rule actions and exit-code operators,
// sorted as upstream lists them in its NotSupported errors.
var (
	containerRestartPolicies = []corev1.ContainerRestartPolicy{
		corev1.ContainerRestartPolicyAlways, corev1.ContainerRestartPolicyNever, corev1.ContainerRestartPolicyOnFailure,
	}
	containerRestartRuleActions = []corev1.ContainerRestartRuleAction{
		corev1.ContainerRestartRuleActionRestart, corev1.ContainerRestartRuleActionRestartAllContainers,
	}
	containerRestartRuleOperators = []corev1.ContainerRestartRuleOnExitCodesOperator{
		corev1.ContainerRestartRuleOnExitCodesOpIn, corev1.ContainerRestartRuleOnExitCodesOpNotIn,
	}
)

// initContainers is upstream validateInitContainers.
func initContainers(cs, regular []corev1.Container, vols map[string]corev1.VolumeSource, claims sets.Set[string], grace *int64, p *field.Path, rp corev1.RestartPolicy) field.ErrorList {
	var errs field.ErrorList
	names := sets.Set[string]{}
	for _, c := range regular {
		names.Insert(c.Name)
	}
	for i := range cs {
		c := &cs[i]
		cp := p.Index(i)
		errs = append(errs, containerCommon(c, vols, claims, cp, rp)...)
		errs = append(errs, containerRestartPolicy(c.RestartPolicy, c.RestartPolicyRules, cp)...)
		always := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(cp.Child("name"), c.Name))
		} else if c.Name != "" {
			names.Insert(c.Name)
		}
		errs = append(errs, hostPortConflicts([]corev1.Container{*c}, p)...)
		if always {
			if c.Lifecycle != nil {
				errs = append(errs, lifecycle(c.Lifecycle, grace, cp.Child("lifecycle"))...)
			}
			errs = append(errs, livenessProbe(c.LivenessProbe, grace, cp.Child("livenessProbe"))...)
			errs = append(errs, readinessProbe(c.ReadinessProbe, grace, cp.Child("readinessProbe"))...)
			errs = append(errs, startupProbe(c.StartupProbe, grace, cp.Child("startupProbe"))...)
		} else {
			const msg = "may not be set for init containers without restartPolicy=Always"
			if c.Lifecycle != nil {
				errs = append(errs, field.Forbidden(cp.Child("lifecycle"), msg))
			}
			if c.LivenessProbe != nil {
				errs = append(errs, field.Forbidden(cp.Child("livenessProbe"), msg))
			}
			if c.ReadinessProbe != nil {
				errs = append(errs, field.Forbidden(cp.Child("readinessProbe"), msg))
			}
			if c.StartupProbe != nil {
				errs = append(errs, field.Forbidden(cp.Child("startupProbe"), msg))
			}
		}
	}
	return errs
}

// allowedEphemeralContainerFields lists the EphemeralContainerCommon fields
// an ephemeral container may set.
var allowedEphemeralContainerFields = map[string]bool{
	"Name": true, "Image": true, "Command": true, "Args": true, "WorkingDir": true, "EnvFrom": true, "Env": true,
	"VolumeMounts": true, "VolumeDevices": true, "TerminationMessagePath": true, "TerminationMessagePolicy": true,
	"ImagePullPolicy": true, "SecurityContext": true, "Stdin": true, "StdinOnce": true, "TTY": true,
}

func ephemeralContainers(ecs []corev1.EphemeralContainer, cs, ics []corev1.Container, vols map[string]corev1.VolumeSource, claims sets.Set[string], p *field.Path, rp corev1.RestartPolicy) field.ErrorList {
	var errs field.ErrorList
	if len(ecs) == 0 {
		return nil
	}
	other, all := sets.Set[string]{}, sets.Set[string]{}
	for _, c := range cs {
		other.Insert(c.Name)
		all.Insert(c.Name)
	}
	for _, c := range ics {
		other.Insert(c.Name)
		all.Insert(c.Name)
	}
	for i := range ecs {
		ec := &ecs[i]
		ip := p.Index(i)
		c := (*corev1.Container)(&ec.EphemeralContainerCommon)
		errs = append(errs, containerCommon(c, vols, claims, ip, rp)...)
		errs = append(errs, containersOnlyForPod([]corev1.Container{*c}, p)...)
		if all.Has(ec.Name) {
			errs = append(errs, field.Duplicate(ip.Child("name"), ec.Name))
		} else {
			all.Insert(ec.Name)
		}
		if ec.TargetContainerName != "" && !other.Has(ec.TargetContainerName) {
			errs = append(errs, field.NotFound(ip.Child("targetContainerName"), ec.TargetContainerName))
		}
		rt, rv := reflect.TypeOf(ec.EphemeralContainerCommon), reflect.ValueOf(ec.EphemeralContainerCommon)
		for f := 0; f < rt.NumField(); f++ {
			name := rt.Field(f).Name
			if allowedEphemeralContainerFields[name] || rv.Field(f).IsZero() {
				continue
			}
			r, size := utf8.DecodeRuneInString(name)
			errs = append(errs, field.Forbidden(ip.Child(string(unicode.ToLower(r))+name[size:]), "cannot be set for an Ephemeral Container"))
		}
		for j, vm := range ec.VolumeMounts {
			if vm.SubPath != "" {
				errs = append(errs, field.Forbidden(ip.Child("volumeMounts").Index(j).Child("subPath"), "cannot be set for an Ephemeral Container"))
			}
			if vm.SubPathExpr != "" {
				errs = append(errs, field.Forbidden(ip.Child("volumeMounts").Index(j).Child("subPathExpr"), "cannot be set for an Ephemeral Container"))
			}
		}
	}
	return errs
}

// containerCommon is upstream validateContainerCommon.
func containerCommon(c *corev1.Container, vols map[string]corev1.VolumeSource, claims sets.Set[string], p *field.Path, rp corev1.RestartPolicy) field.ErrorList {
	var errs field.ErrorList
	if c.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		errs = append(errs, under(p, "name", func(fp *field.Path) field.ErrorList { return dns1123Label(c.Name, fp) })...)
	}
	if c.Image == "" {
		errs = append(errs, field.Required(p.Child("image"), ""))
	}
	switch c.TerminationMessagePolicy {
	case corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError:
	case "":
		errs = append(errs, field.Required(p.Child("terminationMessagePolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(p.Child("terminationMessagePolicy"), c.TerminationMessagePolicy,
			[]corev1.TerminationMessagePolicy{corev1.TerminationMessageReadFile, corev1.TerminationMessageFallbackToLogsOnError}))
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	devices := map[string]string{}
	for _, d := range c.VolumeDevices {
		devices[d.Name] = d.DevicePath
	}
	// Empty lists and unset fields are skipped before their paths are built: validating
	// nothing finds nothing, and the paths are most of validation's allocations.
	if len(c.Ports) > 0 {
		errs = append(errs, containerPorts(c.Ports, p.Child("ports"))...)
	}
	if len(c.Env) > 0 {
		errs = append(errs, env(c.Env, p.Child("env"))...)
	}
	if len(c.EnvFrom) > 0 {
		errs = append(errs, envFrom(c.EnvFrom, p.Child("envFrom"))...)
	}
	if len(c.VolumeMounts) > 0 {
		errs = append(errs, volumeMounts(c.VolumeMounts, devices, vols, p.Child("volumeMounts"))...)
	}
	if len(c.VolumeDevices) > 0 {
		errs = append(errs, volumeDevices(c.VolumeDevices, mounts, vols, p.Child("volumeDevices"))...)
	}
	errs = append(errs, under(p, "imagePullPolicy", func(fp *field.Path) field.ErrorList { return pullPolicy(c.ImagePullPolicy, fp) })...)
	errs = append(errs, under(p, "resources", func(fp *field.Path) field.ErrorList {
		return resourceRequirements(&c.Resources, containerResourceName, claims, fp)
	})...)
	if len(c.ResizePolicy) > 0 {
		errs = append(errs, resizePolicy(c.ResizePolicy, p.Child("resizePolicy"), rp)...)
	}
	if c.SecurityContext != nil {
		errs = append(errs, securityContext(c.SecurityContext, p.Child("securityContext"))...)
	}
	return errs
}

func pullPolicy(pp corev1.PullPolicy, p *field.Path) field.ErrorList {
	return requiredEnum(pp, p, corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever)
}

func resizePolicy(ps []corev1.ContainerResizePolicy, p *field.Path, rp corev1.RestartPolicy) field.ErrorList {
	var errs field.ErrorList
	seen := map[corev1.ResourceName]bool{}
	for i, rpol := range ps {
		if seen[rpol.ResourceName] {
			errs = append(errs, field.Duplicate(p.Index(i), rpol.ResourceName))
		}
		seen[rpol.ResourceName] = true
		switch rpol.ResourceName {
		case corev1.ResourceCPU, corev1.ResourceMemory:
		case "":
			errs = append(errs, field.Required(p, ""))
		default:
			errs = append(errs, field.NotSupported(p, rpol.ResourceName, []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}))
		}
		switch rpol.RestartPolicy {
		case corev1.NotRequired, corev1.RestartContainer:
		case "":
			errs = append(errs, field.Required(p, ""))
		default:
			errs = append(errs, field.NotSupported(p, rpol.RestartPolicy, []corev1.ResourceResizeRestartPolicy{corev1.NotRequired, corev1.RestartContainer}))
		}
		if rp == corev1.RestartPolicyNever && rpol.RestartPolicy != corev1.NotRequired {
			errs = append(errs, field.Invalid(p, rpol.RestartPolicy, "must be 'NotRequired' when pod `restartPolicy` is 'Never'"))
		}
	}
	return errs
}

func securityContext(sc *corev1.SecurityContext, p *field.Path) field.ErrorList {
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, optionalID(sc.RunAsUser, validation.IsValidUserID, p.Child("runAsUser"))...)
	errs = append(errs, optionalID(sc.RunAsGroup, validation.IsValidGroupID, p.Child("runAsGroup"))...)
	errs = append(errs, seccompProfileField(sc.SeccompProfile, p.Child("seccompProfile"))...)
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		if sc.Privileged != nil && *sc.Privileged {
			errs = append(errs, field.Invalid(p, convert.InternalJSON(sc), "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
		}
		if sc.Capabilities != nil {
			for _, c := range sc.Capabilities.Add {
				if string(c) == "CAP_SYS_ADMIN" {
					errs = append(errs, field.Invalid(p, convert.InternalJSON(sc), "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"))
				}
			}
		}
	}
	errs = append(errs, appArmorProfileField(sc.AppArmorProfile, p.Child("appArmorProfile"))...)
	return errs
}

var supportedPortProtocols = []corev1.Protocol{corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP}

func supportedProtocol(pr corev1.Protocol) bool {
	return pr == corev1.ProtocolTCP || pr == corev1.ProtocolUDP || pr == corev1.ProtocolSCTP
}

// containerPorts is upstream validateContainerPorts.
func containerPorts(ports []corev1.ContainerPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.Set[string]{}
	for i, port := range ports {
		ip := p.Index(i)
		if port.Name != "" {
			if msgs := validation.IsValidPortName(port.Name); len(msgs) != 0 {
				for _, m := range msgs {
					errs = append(errs, field.Invalid(ip.Child("name"), port.Name, m))
				}
			} else if names.Has(port.Name) {
				errs = append(errs, field.Duplicate(ip.Child("name"), port.Name))
			} else {
				names.Insert(port.Name)
			}
		}
		if port.ContainerPort == 0 {
			errs = append(errs, field.Required(ip.Child("containerPort"), ""))
		} else {
			for _, m := range validation.IsValidPortNum(int(port.ContainerPort)) {
				errs = append(errs, field.Invalid(ip.Child("containerPort"), port.ContainerPort, m))
			}
		}
		if port.HostPort != 0 {
			for _, m := range validation.IsValidPortNum(int(port.HostPort)) {
				errs = append(errs, field.Invalid(ip.Child("hostPort"), port.HostPort, m))
			}
		}
		if port.Protocol == "" {
			errs = append(errs, field.Required(ip.Child("protocol"), ""))
		} else if !supportedProtocol(port.Protocol) {
			errs = append(errs, field.NotSupported(ip.Child("protocol"), port.Protocol, supportedPortProtocols))
		}
	}
	return errs
}

// hostPortConflicts is upstream checkHostPortConflicts.
func hostPortConflicts(cs []corev1.Container, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.Set[string]{}
	for ci, c := range cs {
		for pi, port := range c.Ports {
			if port.HostPort == 0 {
				continue
			}
			s := fmt.Sprintf("%s/%s/%d", port.Protocol, port.HostIP, port.HostPort)
			if seen.Has(s) {
				errs = append(errs, field.Duplicate(p.Index(ci).Child("ports").Index(pi).Child("hostPort"), s))
			} else {
				seen.Insert(s)
			}
		}
	}
	return errs
}

var validEnvDownwardAPIFieldPaths = sets.New("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
	"spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")

// env is upstream ValidateEnv (with relaxed variable names, the default).
func env(vars []corev1.EnvVar, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ev := range vars {
		ip := p.Index(i)
		if ev.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else {
			for _, m := range validation.IsRelaxedEnvVarName(ev.Name) {
				errs = append(errs, field.Invalid(ip.Child("name"), ev.Name, m))
			}
		}
		errs = append(errs, envVarValueFrom(ev, ip.Child("valueFrom"))...)
	}
	return errs
}

func envVarValueFrom(ev corev1.EnvVar, p *field.Path) field.ErrorList {
	if ev.ValueFrom == nil {
		return nil
	}
	var errs field.ErrorList
	n := 0
	vf := ev.ValueFrom
	if vf.FieldRef != nil {
		n++
		errs = append(errs, objectFieldSelector(vf.FieldRef, validEnvDownwardAPIFieldPaths, p.Child("fieldRef"))...)
	}
	if vf.ResourceFieldRef != nil {
		n++
		errs = append(errs, resourceFieldSelector(vf.ResourceFieldRef, p.Child("resourceFieldRef"), false)...)
	}
	if vf.ConfigMapKeyRef != nil {
		n++
		errs = append(errs, keySelector(vf.ConfigMapKeyRef.Name, vf.ConfigMapKeyRef.Key, p.Child("configMapKeyRef"))...)
	}
	if vf.SecretKeyRef != nil {
		n++
		errs = append(errs, keySelector(vf.SecretKeyRef.Name, vf.SecretKeyRef.Key, p.Child("secretKeyRef"))...)
	}
	if vf.FileKeyRef != nil {
		n++
	}
	switch {
	case n == 0:
		errs = append(errs, field.Invalid(p, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"))
	case ev.Value != "":
		errs = append(errs, field.Invalid(p, "", "may not be specified when `value` is not empty"))
	case n > 1:
		errs = append(errs, field.Invalid(p, "", "may not have more than one field specified at a time"))
	}
	return errs
}

func keySelector(name, key string, p *field.Path) field.ErrorList {
	errs := nameErrs(nameIsDNSSubdomain, name, p.Child("name"))
	if key == "" {
		errs = append(errs, field.Required(p.Child("key"), ""))
	} else {
		for _, m := range validation.IsConfigMapKey(key) {
			errs = append(errs, field.Invalid(p.Child("key"), key, m))
		}
	}
	return errs
}

// objectFieldSelector validates a downward API field reference (v1 only).
func objectFieldSelector(fs *corev1.ObjectFieldSelector, allowed sets.Set[string], p *field.Path) field.ErrorList {
	if fs.APIVersion == "" {
		return field.ErrorList{field.Required(p.Child("apiVersion"), "")}
	}
	if fs.FieldPath == "" {
		return field.ErrorList{field.Required(p.Child("fieldPath"), "")}
	}
	if fs.APIVersion != "v1" {
		return field.ErrorList{field.Invalid(p.Child("fieldPath"), fs.FieldPath,
			fmt.Sprintf("error converting fieldPath: unsupported pod version: %s", fs.APIVersion))}
	}
	fp := fs.FieldPath
	if i := strings.Index(fp, "['"); i > 0 && strings.HasSuffix(fp, "']") {
		path, sub := fp[:i], fp[i+2:len(fp)-2]
		switch path {
		case "metadata.annotations":
			return qualifiedName(strings.ToLower(sub), p)
		case "metadata.labels":
			return qualifiedName(sub, p)
		}
		return field.ErrorList{field.Invalid(p, path, "does not support subscript")}
	}
	if !allowed.Has(fp) {
		return field.ErrorList{field.NotSupported(p.Child("fieldPath"), fp, sets.List(allowed))}
	}
	return nil
}

var validContainerResourceFieldPaths = sets.New("limits.cpu", "limits.memory", "limits.ephemeral-storage",
	"requests.cpu", "requests.memory", "requests.ephemeral-storage")

func resourceFieldSelector(fs *corev1.ResourceFieldSelector, p *field.Path, volume bool) field.ErrorList {
	var errs field.ErrorList
	switch {
	case volume && fs.ContainerName == "":
		errs = append(errs, field.Required(p.Child("containerName"), ""))
	case fs.Resource == "":
		errs = append(errs, field.Required(p.Child("resource"), ""))
	case !validContainerResourceFieldPaths.Has(fs.Resource) &&
		!strings.HasPrefix(fs.Resource, "requests.hugepages-") && !strings.HasPrefix(fs.Resource, "limits.hugepages-"):
		errs = append(errs, field.NotSupported(p.Child("resource"), fs.Resource, sets.List(validContainerResourceFieldPaths)))
	}
	if fs.Divisor.Sign() != 0 {
		d := fs.Divisor.String()
		memLike := map[string]bool{"1": true, "1k": true, "1M": true, "1G": true, "1T": true, "1P": true, "1E": true,
			"1Ki": true, "1Mi": true, "1Gi": true, "1Ti": true, "1Pi": true, "1Ei": true}
		const memList = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei"
		switch fs.Resource {
		case "limits.cpu", "requests.cpu":
			if d != "1m" && d != "1" {
				errs = append(errs, field.Invalid(p.Child("divisor"), fs.Resource, "only divisor's values 1m and 1 are supported with the cpu resource"))
			}
		case "limits.memory", "requests.memory":
			if !memLike[d] {
				errs = append(errs, field.Invalid(p.Child("divisor"), fs.Resource, "only divisor's values "+memList+" are supported with the memory resource"))
			}
		case "limits.ephemeral-storage", "requests.ephemeral-storage":
			if !memLike[d] {
				errs = append(errs, field.Invalid(p.Child("divisor"), fs.Resource, "only divisor's values "+memList+" are supported with the local ephemeral storage resource"))
			}
		}
		if (strings.HasPrefix(fs.Resource, "requests.hugepages-") || strings.HasPrefix(fs.Resource, "limits.hugepages-")) && !memLike[d] {
			errs = append(errs, field.Invalid(p.Child("divisor"), fs.Resource, "only divisor's values "+memList+" are supported with the hugepages resource"))
		}
	}
	return errs
}

func envFrom(srcs []corev1.EnvFromSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ev := range srcs {
		ip := p.Index(i)
		if ev.Prefix != "" {
			for _, m := range validation.IsRelaxedEnvVarName(ev.Prefix) {
				errs = append(errs, field.Invalid(ip.Child("prefix"), ev.Prefix, m))
			}
		}
		n := 0
		if ev.ConfigMapRef != nil {
			n++
			errs = append(errs, envSourceName(ev.ConfigMapRef.Name, ip.Child("configMapRef"))...)
		}
		if ev.SecretRef != nil {
			n++
			errs = append(errs, envSourceName(ev.SecretRef.Name, ip.Child("secretRef"))...)
		}
		if n == 0 {
			errs = append(errs, field.Invalid(p, "", "must specify one of: `configMapRef` or `secretRef`"))
		} else if n > 1 {
			errs = append(errs, field.Invalid(p, "", "may not have more than one field specified at a time"))
		}
	}
	return errs
}

func envSourceName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p.Child("name"), "")}
	}
	var errs field.ErrorList
	for _, m := range nameIsDNSSubdomain(name, true) {
		errs = append(errs, field.Invalid(p.Child("name"), name, m))
	}
	return errs
}

// volumeMounts is upstream ValidateVolumeMounts.
func volumeMounts(ms []corev1.VolumeMount, devices map[string]string, vols map[string]corev1.VolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	points := sets.Set[string]{}
	for i, m := range ms {
		ip := p.Index(i)
		if m.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		}
		if _, ok := vols[m.Name]; !ok {
			errs = append(errs, field.NotFound(ip.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(ip.Child("mountPath"), ""))
		}
		if points.Has(m.MountPath) {
			errs = append(errs, field.Invalid(ip.Child("mountPath"), m.MountPath, "must be unique"))
		}
		points.Insert(m.MountPath)
		if _, ok := devices[m.Name]; ok {
			errs = append(errs, field.Invalid(ip.Child("name"), m.Name, "must not already exist in volumeDevices"))
		}
		for _, dp := range devices {
			if dp == m.MountPath {
				errs = append(errs, field.Invalid(ip.Child("mountPath"), m.MountPath, "must not already exist as a path in volumeDevices"))
				break
			}
		}
		if v, ok := vols[m.Name]; ok && v.Image != nil {
			if m.SubPath != "" {
				errs = append(errs, field.Invalid(ip.Child("subPath"), m.SubPath, "not allowed in image volume sources"))
			}
			if m.SubPathExpr != "" {
				errs = append(errs, field.Invalid(ip.Child("subPathExpr"), m.SubPathExpr, "not allowed in image volume sources"))
			}
		}
		if m.SubPath != "" {
			errs = append(errs, localDescendingPath(m.SubPath, p.Child("subPath"))...)
		}
		if m.SubPathExpr != "" {
			if m.SubPath != "" {
				errs = append(errs, field.Invalid(ip.Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
			}
			errs = append(errs, localDescendingPath(m.SubPathExpr, p.Child("subPathExpr"))...)
		}
		if m.MountPropagation != nil {
			switch *m.MountPropagation {
			case corev1.MountPropagationNone, corev1.MountPropagationHostToContainer, corev1.MountPropagationBidirectional:
			default:
				errs = append(errs, field.NotSupported(p.Child("mountPropagation"), *m.MountPropagation,
					[]corev1.MountPropagationMode{corev1.MountPropagationBidirectional, corev1.MountPropagationHostToContainer, corev1.MountPropagationNone}))
			}
		}
	}
	return errs
}

// volumeDevices is upstream ValidateVolumeDevices.
func volumeDevices(ds []corev1.VolumeDevice, mounts map[string]string, vols map[string]corev1.VolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	paths, names := sets.Set[string]{}, sets.Set[string]{}
	for i, d := range ds {
		ip := p.Index(i)
		src, matched := vols[d.Name]
		isPVC := matched && (src.PersistentVolumeClaim != nil || src.Ephemeral != nil)
		if d.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		}
		if names.Has(d.Name) {
			errs = append(errs, field.Invalid(ip.Child("name"), d.Name, "must be unique"))
		}
		if matched && !isPVC {
			errs = append(errs, field.Invalid(ip.Child("name"), d.Name, "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"))
		}
		if !matched {
			errs = append(errs, field.NotFound(ip.Child("name"), d.Name))
		}
		if d.DevicePath == "" {
			errs = append(errs, field.Required(ip.Child("devicePath"), ""))
		}
		if paths.Has(d.DevicePath) {
			errs = append(errs, field.Invalid(ip.Child("devicePath"), d.DevicePath, "must be unique"))
		}
		if d.DevicePath != "" && len(pathNoBacksteps(d.DevicePath, p.Child("devicePath"))) > 0 {
			errs = append(errs, field.Invalid(ip.Child("devicePath"), d.DevicePath, "can not contain backsteps ('..')"))
		} else {
			paths.Insert(d.DevicePath)
		}
		if _, ok := mounts[d.Name]; ok {
			errs = append(errs, field.Invalid(ip.Child("name"), d.Name, "must not already exist in volumeMounts"))
		}
		for _, mp := range mounts {
			if mp == d.DevicePath {
				errs = append(errs, field.Invalid(ip.Child("devicePath"), d.DevicePath, "must not already exist as a path in volumeMounts"))
				break
			}
		}
		if d.Name != "" {
			names.Insert(d.Name)
		}
	}
	return errs
}

func livenessProbe(pr *corev1.Probe, grace *int64, p *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	errs := probe(pr, grace, p)
	if pr.SuccessThreshold != 1 {
		errs = append(errs, field.Invalid(p.Child("successThreshold"), pr.SuccessThreshold, "must be 1"))
	}
	return errs
}

func readinessProbe(pr *corev1.Probe, grace *int64, p *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	errs := probe(pr, grace, p)
	if pr.TerminationGracePeriodSeconds != nil {
		errs = append(errs, field.Invalid(p.Child("terminationGracePeriodSeconds"), pr.TerminationGracePeriodSeconds, "must not be set for readinessProbes"))
	}
	return errs
}

func startupProbe(pr *corev1.Probe, grace *int64, p *field.Path) field.ErrorList {
	return livenessProbe(pr, grace, p)
}

func probe(pr *corev1.Probe, grace *int64, p *field.Path) field.ErrorList {
	errs := handler(pr.Exec, pr.HTTPGet, pr.TCPSocket, pr.GRPC, nil, grace, p)
	errs = append(errs, nonnegative(int64(pr.InitialDelaySeconds), p.Child("initialDelaySeconds"))...)
	errs = append(errs, nonnegative(int64(pr.TimeoutSeconds), p.Child("timeoutSeconds"))...)
	errs = append(errs, nonnegative(int64(pr.PeriodSeconds), p.Child("periodSeconds"))...)
	errs = append(errs, nonnegative(int64(pr.SuccessThreshold), p.Child("successThreshold"))...)
	errs = append(errs, nonnegative(int64(pr.FailureThreshold), p.Child("failureThreshold"))...)
	if pr.TerminationGracePeriodSeconds != nil && *pr.TerminationGracePeriodSeconds <= 0 {
		errs = append(errs, field.Invalid(p.Child("terminationGracePeriodSeconds"), *pr.TerminationGracePeriodSeconds, "must be greater than 0"))
	}
	return errs
}

func lifecycle(l *corev1.Lifecycle, grace *int64, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if h := l.PostStart; h != nil {
		errs = append(errs, handler(h.Exec, h.HTTPGet, h.TCPSocket, nil, h.Sleep, grace, p.Child("postStart"))...)
	}
	if h := l.PreStop; h != nil {
		errs = append(errs, handler(h.Exec, h.HTTPGet, h.TCPSocket, nil, h.Sleep, grace, p.Child("preStop"))...)
	}
	return errs
}

// handler is upstream validateHandler: exactly one action.
func handler(ex *corev1.ExecAction, hg *corev1.HTTPGetAction, tcp *corev1.TCPSocketAction, grpc *corev1.GRPCAction, sleep *corev1.SleepAction, grace *int64, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	one := func(set bool, child string, check func() field.ErrorList) {
		if !set {
			return
		}
		if n > 0 {
			errs = append(errs, field.Forbidden(p.Child(child), "may not specify more than 1 handler type"))
			return
		}
		n++
		errs = append(errs, check()...)
	}
	one(ex != nil, "exec", func() field.ErrorList {
		if len(ex.Command) == 0 {
			return field.ErrorList{field.Required(p.Child("exec").Child("command"), "")}
		}
		return nil
	})
	one(hg != nil, "httpGet", func() field.ErrorList {
		hp := p.Child("httpGet")
		var e field.ErrorList
		if hg.Path == "" {
			e = append(e, field.Required(hp.Child("path"), ""))
		}
		e = append(e, portNumOrName(hg.Port, hp.Child("port"))...)
		if hg.Scheme != corev1.URISchemeHTTP && hg.Scheme != corev1.URISchemeHTTPS {
			e = append(e, field.NotSupported(hp.Child("scheme"), hg.Scheme, []corev1.URIScheme{corev1.URISchemeHTTP, corev1.URISchemeHTTPS}))
		}
		for _, h := range hg.HTTPHeaders {
			for _, m := range validation.IsHTTPHeaderName(h.Name) {
				e = append(e, field.Invalid(hp.Child("httpHeaders"), h.Name, m))
			}
		}
		return e
	})
	one(tcp != nil, "tcpSocket", func() field.ErrorList { return portNumOrName(tcp.Port, p.Child("tcpSocket").Child("port")) })
	one(grpc != nil, "grpc", func() field.ErrorList {
		return portNumOrName(intstr.FromInt32(grpc.Port), p.Child("grpc").Child("port"))
	})
	one(sleep != nil, "sleep", func() field.ErrorList {
		if grace != nil && (sleep.Seconds < 0 || sleep.Seconds > *grace) {
			return field.ErrorList{field.Invalid(p.Child("sleep"), sleep.Seconds,
				fmt.Sprintf("must be non-negative and less than terminationGracePeriodSeconds (%d)", *grace))}
		}
		return nil
	})
	if n == 0 {
		errs = append(errs, field.Required(p, "must specify a handler type"))
	}
	return errs
}

// portNumOrName is upstream ValidatePortNumOrName.
func portNumOrName(port intstr.IntOrString, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch port.Type {
	case intstr.Int:
		for _, m := range validation.IsValidPortNum(port.IntValue()) {
			errs = append(errs, field.Invalid(p, port.IntValue(), m))
		}
	case intstr.String:
		for _, m := range validation.IsValidPortName(port.StrVal) {
			errs = append(errs, field.Invalid(p, port.StrVal, m))
		}
	default:
		errs = append(errs, field.InternalError(p, fmt.Errorf("unknown type: %v", port.Type)))
	}
	return errs
}
