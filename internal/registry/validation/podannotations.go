package validation

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// tolerationsAnnotation is upstream ValidateTolerationsInPodAnnotations: the
// scheduler.alpha.kubernetes.io/tolerations annotation, when not empty, is a JSON list
// of valid tolerations.
func tolerationsAnnotation(a map[string]string, p *field.Path) field.ErrorList {
	v := a[corev1.TolerationsAnnotationKey]
	if v == "" {
		return nil
	}
	var raw []Toleration
	if err := json.Unmarshal([]byte(v), &raw); err != nil {
		return field.ErrorList{field.Invalid(p, corev1.TolerationsAnnotationKey, tolerationDecodeError(err))}
	}
	if len(raw) == 0 {
		return nil
	}
	ts := make([]corev1.Toleration, len(raw))
	for i, t := range raw {
		ts[i] = corev1.Toleration(t)
	}
	return tolerations(ts, p.Child(corev1.TolerationsAnnotationKey))
}

// Toleration is upstream's internal core.Toleration, which the tolerations annotation
// decodes into: without JSON tags (keys match its field names regardless of case), so a
// decoding error names Go fields ("Toleration.Key").
type Toleration struct {
	Key               string
	Operator          corev1.TolerationOperator
	Value             string
	Effect            corev1.TaintEffect
	TolerationSeconds *int64
}

// tolerationDecodeError is err's text as upstream's decoding into []core.Toleration
// words it: the internal package is core, not this package or v1.
func tolerationDecodeError(err error) string {
	return strings.NewReplacer("validation.Toleration", "core.Toleration", "type v1.", "type core.").Replace(err.Error())
}

// seccompAnnotations is upstream ValidateSeccompPodAnnotations: the pod's and each
// container's seccomp annotation names a valid profile. Upstream walks the container
// keys in map order; they are sorted here.
func seccompAnnotations(a map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if v, ok := a[corev1.SeccompPodAnnotationKey]; ok {
		errs = append(errs, seccompProfileName(v, p.Child(corev1.SeccompPodAnnotationKey))...)
	}
	for _, k := range sortedKeys(a) {
		if strings.HasPrefix(k, corev1.SeccompContainerAnnotationKeyPrefix) {
			errs = append(errs, seccompProfileName(a[k], p.Child(k))...)
		}
	}
	return errs
}

// seccompProfileName is upstream ValidateSeccompProfile.
func seccompProfileName(v string, p *field.Path) field.ErrorList {
	switch {
	case v == corev1.SeccompProfileRuntimeDefault, v == corev1.DeprecatedSeccompProfileDockerDefault, v == corev1.SeccompProfileNameUnconfined:
		return nil
	case strings.HasPrefix(v, corev1.SeccompLocalhostProfileNamePrefix):
		return localDescendingPath(strings.TrimPrefix(v, corev1.SeccompLocalhostProfileNamePrefix), p)
	}
	return field.ErrorList{field.Invalid(p, v, "must be a valid seccomp profile")}
}

// appArmorAnnotations is upstream ValidateAppArmorPodAnnotations: each container
// AppArmor annotation names a container of the pod and a valid profile (keys sorted, as
// in seccompAnnotations).
func appArmorAnnotations(a map[string]string, spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(a) {
		if !strings.HasPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix) {
			continue
		}
		name := strings.TrimPrefix(k, corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix)
		if !podHasContainer(spec, name) {
			errs = append(errs, field.Invalid(p.Key(k), name, "container not found"))
		}
		v := a[k]
		if v != "" && v != corev1.DeprecatedAppArmorBetaProfileRuntimeDefault && v != corev1.DeprecatedAppArmorBetaProfileNameUnconfined &&
			!strings.HasPrefix(v, corev1.DeprecatedAppArmorBetaProfileNamePrefix) {
			errs = append(errs, field.Invalid(p.Key(k), v, fmt.Sprintf("invalid AppArmor profile name: %q", v)))
		}
	}
	return errs
}

// podHasContainer reports a regular, init or ephemeral container of that name.
func podHasContainer(spec *corev1.PodSpec, name string) bool {
	found := false
	visitContainers(spec, field.NewPath("spec"), func(c *corev1.Container, _ containerAt) bool {
		found = c.Name == name
		return !found
	})
	return found
}

// visitContainers is upstream's VisitContainersWithPath: init, regular, then ephemeral
// containers, until visit returns false. Each container's path is built only when visit
// asks for it (containerAt.path): most visits find nothing to report.
func visitContainers(spec *corev1.PodSpec, p *field.Path, visit func(*corev1.Container, containerAt) bool) {
	for i := range spec.InitContainers {
		if !visit(&spec.InitContainers[i], containerAt{p, "initContainers", i}) {
			return
		}
	}
	for i := range spec.Containers {
		if !visit(&spec.Containers[i], containerAt{p, "containers", i}) {
			return
		}
	}
	for i := range spec.EphemeralContainers {
		if !visit((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon), containerAt{p, "ephemeralContainers", i}) {
			return
		}
	}
}

// containerAt is where visitContainers found a container: item i of list under spec.
type containerAt struct {
	spec *field.Path
	list string
	i    int
}

// path is the container's field path.
func (c containerAt) path() *field.Path { return c.spec.Child(c.list).Index(c.i) }

// seccompAnnotationsMatchFields is upstream validateSeccompAnnotationsAndFields (create
// only): where a seccompProfile field and the matching annotation are both set, they agree.
func seccompAnnotationsMatchFields(pod *corev1.Pod, sp *field.Path) field.ErrorList {
	var errs field.ErrorList
	if sc := pod.Spec.SecurityContext; sc != nil && sc.SeccompProfile != nil {
		if v, ok := pod.Annotations[corev1.SeccompPodAnnotationKey]; ok {
			if err := seccompMatch(v, sc.SeccompProfile, sp.Child("securityContext", "seccompProfile")); err != nil {
				errs = append(errs, err)
			}
		}
	}
	visitContainers(&pod.Spec, sp, func(c *corev1.Container, cp containerAt) bool {
		if c.SecurityContext == nil || c.SecurityContext.SeccompProfile == nil {
			return true
		}
		if v, ok := pod.Annotations[corev1.SeccompContainerAnnotationKeyPrefix+c.Name]; ok {
			if err := seccompMatch(v, c.SecurityContext.SeccompProfile, cp.path().Child("securityContext", "seccompProfile")); err != nil {
				errs = append(errs, err)
			}
		}
		return true
	})
	return errs
}

func seccompMatch(v string, f *corev1.SeccompProfile, p *field.Path) *field.Error {
	const typeMsg = "seccomp type in annotation and field must match"
	switch f.Type {
	case corev1.SeccompProfileTypeUnconfined:
		if v != corev1.SeccompProfileNameUnconfined {
			return field.Forbidden(p.Child("type"), typeMsg)
		}
	case corev1.SeccompProfileTypeRuntimeDefault:
		if v != corev1.SeccompProfileRuntimeDefault && v != corev1.DeprecatedSeccompProfileDockerDefault {
			return field.Forbidden(p.Child("type"), typeMsg)
		}
	case corev1.SeccompProfileTypeLocalhost:
		if !strings.HasPrefix(v, corev1.SeccompLocalhostProfileNamePrefix) {
			return field.Forbidden(p.Child("type"), typeMsg)
		}
		if f.LocalhostProfile == nil || strings.TrimPrefix(v, corev1.SeccompLocalhostProfileNamePrefix) != *f.LocalhostProfile {
			return field.Forbidden(p.Child("localhostProfile"), "seccomp profile in annotation and field must match")
		}
	}
	return nil
}

// appArmorAnnotationsMatchFields is upstream validateAppArmorAnnotationsAndFieldsMatchOnCreate:
// outside Windows pods, a container's AppArmor annotation agrees with its effective
// appArmorProfile (its own, else the pod's).
func appArmorAnnotationsMatchFields(pod *corev1.Pod, sp *field.Path) field.ErrorList {
	if pod.Spec.OS != nil && pod.Spec.OS.Name == corev1.Windows {
		return nil
	}
	var errs field.ErrorList
	var podProfile *corev1.AppArmorProfile
	if pod.Spec.SecurityContext != nil {
		podProfile = pod.Spec.SecurityContext.AppArmorProfile
	}
	visitContainers(&pod.Spec, sp, func(c *corev1.Container, cp containerAt) bool {
		prof := podProfile
		if c.SecurityContext != nil && c.SecurityContext.AppArmorProfile != nil {
			prof = c.SecurityContext.AppArmorProfile
		}
		if prof == nil {
			return true
		}
		v, ok := pod.Annotations[corev1.DeprecatedAppArmorBetaContainerAnnotationKeyPrefix+c.Name]
		if !ok {
			return true
		}
		ap := cp.path().Child("securityContext", "appArmorProfile")
		const typeMsg = "apparmor type in annotation and field must match"
		switch prof.Type {
		case corev1.AppArmorProfileTypeUnconfined:
			if v != corev1.DeprecatedAppArmorBetaProfileNameUnconfined {
				errs = append(errs, field.Forbidden(ap.Child("type"), typeMsg))
			}
		case corev1.AppArmorProfileTypeRuntimeDefault:
			if v != corev1.DeprecatedAppArmorBetaProfileRuntimeDefault {
				errs = append(errs, field.Forbidden(ap.Child("type"), typeMsg))
			}
		case corev1.AppArmorProfileTypeLocalhost:
			if !strings.HasPrefix(v, corev1.DeprecatedAppArmorBetaProfileNamePrefix) {
				errs = append(errs, field.Forbidden(ap.Child("type"), typeMsg))
			} else if prof.LocalhostProfile == nil || strings.TrimPrefix(v, corev1.DeprecatedAppArmorBetaProfileNamePrefix) != *prof.LocalhostProfile {
				errs = append(errs, field.Forbidden(ap.Child("localhostProfile"), "apparmor profile in annotation and field must match"))
			}
		}
		return true
	})
	return errs
}
