package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Scheduling constraints of a pod spec: upstream's validateAffinity and
// validateTopologySpreadConstraints, with the options of a new pod (label values in
// required node affinity and in selectors must be valid; matchLabelKeys are merged into the
// selector, 1.37's MatchLabelKeysInPodTopologySpreadSelectorMerge).

// podAffinity validates spec.affinity.
func podAffinity(a *corev1.Affinity, p *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		np := p.Child("nodeAffinity")
		if na.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			errs = append(errs, nodeSelector(na.RequiredDuringSchedulingIgnoredDuringExecution, false, np.Child("requiredDuringSchedulingIgnoredDuringExecution"))...)
		}
		pp := np.Child("preferredDuringSchedulingIgnoredDuringExecution")
		for i, t := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			if t.Weight <= 0 || t.Weight > 100 {
				errs = append(errs, field.Invalid(pp.Index(i).Child("weight"), t.Weight, "must be in the range 1-100"))
			}
			// Preferred terms may name label values no node has (upstream allows any).
			errs = append(errs, nodeSelectorTerm(t.Preference, true, pp.Index(i).Child("preference"))...)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		errs = append(errs, podAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, p.Child("podAffinity"))...)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		errs = append(errs, podAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, p.Child("podAntiAffinity"))...)
	}
	return errs
}

// nodeSelector is upstream's ValidateNodeSelector.
func nodeSelector(s *corev1.NodeSelector, anyValue bool, p *field.Path) field.ErrorList {
	tp := p.Child("nodeSelectorTerms")
	if len(s.NodeSelectorTerms) == 0 {
		return field.ErrorList{field.Required(tp, "must have at least one node selector term")}
	}
	var errs field.ErrorList
	for i, t := range s.NodeSelectorTerms {
		errs = append(errs, nodeSelectorTerm(t, anyValue, tp.Index(i))...)
	}
	return errs
}

// nodeSelectorTerm is upstream's ValidateNodeSelectorTerm: label requirements, and field
// requirements on metadata.name alone.
func nodeSelectorTerm(t corev1.NodeSelectorTerm, anyValue bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for j, r := range t.MatchExpressions {
		rp := p.Child("matchExpressions").Index(j)
		switch r.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(r.Values) == 0 {
				errs = append(errs, field.Required(rp.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
			}
		case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
			if len(r.Values) > 0 {
				errs = append(errs, field.Forbidden(rp.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
			}
		case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
			if len(r.Values) != 1 {
				errs = append(errs, field.Required(rp.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
			}
		default:
			errs = append(errs, field.Invalid(rp.Child("operator"), r.Operator, "not a valid selector operator"))
		}
		errs = append(errs, labelName(r.Key, rp.Child("key"))...)
		if !anyValue {
			for k, v := range r.Values {
				for _, msg := range validation.IsValidLabelValue(v) {
					errs = append(errs, field.Invalid(rp.Child("values").Index(k), v, msg))
				}
			}
		}
	}
	for j, r := range t.MatchFields {
		rp := p.Child("matchFields").Index(j)
		switch r.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(r.Values) != 1 {
				errs = append(errs, field.Required(rp.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
			}
		default:
			errs = append(errs, field.Invalid(rp.Child("operator"), r.Operator, "not a valid selector operator"))
		}
		if r.Key != metav1.ObjectNameField {
			errs = append(errs, field.Invalid(rp.Child("key"), r.Key, "not a valid field selector key"))
			continue
		}
		for k, v := range r.Values {
			errs = append(errs, nameErrs(nameIsDNSSubdomain, v, rp.Child("values").Index(k))...)
		}
	}
	return errs
}

// podAffinityTerms validates the required and the weighted terms of a pod affinity or
// anti-affinity.
func podAffinityTerms(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rp := p.Child("requiredDuringSchedulingIgnoredDuringExecution")
	for i, t := range required {
		errs = append(errs, podAffinityTerm(t, rp.Index(i))...)
	}
	pp := p.Child("preferredDuringSchedulingIgnoredDuringExecution")
	for i, t := range preferred {
		if t.Weight <= 0 || t.Weight > 100 {
			errs = append(errs, field.Invalid(pp.Index(i).Child("weight"), t.Weight, "must be in the range 1-100"))
		}
		errs = append(errs, podAffinityTerm(t.PodAffinityTerm, pp.Index(i).Child("podAffinityTerm"))...)
	}
	return errs
}

// podAffinityTerm is upstream's validatePodAffinityTerm.
func podAffinityTerm(t corev1.PodAffinityTerm, p *field.Path) field.ErrorList {
	opts := metav1validation.LabelSelectorValidationOptions{}
	errs := metav1validation.ValidateLabelSelector(t.LabelSelector, opts, p.Child("labelSelector"))
	errs = append(errs, metav1validation.ValidateLabelSelector(t.NamespaceSelector, opts, p.Child("namespaceSelector"))...)
	for _, ns := range t.Namespaces {
		errs = append(errs, nameErrs(nameIsDNSLabel, ns, p.Child("namespace"))...)
	}
	errs = append(errs, labelKeys(p, t.MatchLabelKeys, t.MismatchLabelKeys, t.LabelSelector)...)
	if t.TopologyKey == "" {
		errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
	}
	return append(errs, labelName(t.TopologyKey, p.Child("topologyKey"))...)
}

// labelKeys is upstream's ValidateMatchLabelKeysAndMismatchLabelKeys: label names, set only
// with a selector, not also in the selector (for matchLabelKeys, whose keys the selector
// already holds once merged), not in both lists.
func labelKeys(p *field.Path, match, mismatch []string, sel *metav1.LabelSelector) field.ErrorList {
	var errs field.ErrorList
	for _, l := range []struct {
		name string
		keys []string
	}{{"matchLabelKeys", match}, {"mismatchLabelKeys", mismatch}} {
		if len(l.keys) == 0 {
			continue
		}
		if sel == nil {
			errs = append(errs, field.Forbidden(p.Child(l.name), "must not be specified when labelSelector is not set"))
			continue
		}
		for i, k := range l.keys {
			errs = append(errs, labelName(k, p.Child(l.name).Index(i))...)
		}
	}
	if sel != nil {
		at := map[string]int{}
		for i, k := range match {
			at[k] = i
		}
		keys := sets.New[string]()
		for k := range sel.MatchLabels {
			keys.Insert(k)
		}
		for _, e := range sel.MatchExpressions {
			if i, ok := at[e.Key]; ok && keys.Has(e.Key) {
				errs = append(errs, field.Invalid(p.Index(i), e.Key, "exists in both matchLabelKeys and labelSelector"))
			}
			keys.Insert(e.Key)
		}
	}
	mismatched := sets.New(mismatch...)
	for i, k := range match {
		if mismatched.Has(k) {
			errs = append(errs, field.Invalid(p.Child("matchLabelKeys").Index(i), k, "exists in both matchLabelKeys and mismatchLabelKeys"))
		}
	}
	return errs
}

// scheduleActions are the values of whenUnsatisfiable.
var scheduleActions = []string{string(corev1.DoNotSchedule), string(corev1.ScheduleAnyway)}

// nodeInclusionPolicies are the values of nodeAffinityPolicy and nodeTaintsPolicy.
var nodeInclusionPolicies = []string{string(corev1.NodeInclusionPolicyHonor), string(corev1.NodeInclusionPolicyIgnore)}

// topologySpread is upstream's validateTopologySpreadConstraints.
func topologySpread(cs []corev1.TopologySpreadConstraint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range cs {
		cp := p.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(cp.Child("maxSkew"), int64(c.MaxSkew), isNotPositiveErrorMsg))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(cp.Child("topologyKey"), "can not be empty"))
		}
		if c.WhenUnsatisfiable != corev1.DoNotSchedule && c.WhenUnsatisfiable != corev1.ScheduleAnyway {
			errs = append(errs, field.NotSupported(cp.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, scheduleActions))
		}
		for _, o := range cs[i+1:] {
			if c.TopologyKey == o.TopologyKey && c.WhenUnsatisfiable == o.WhenUnsatisfiable {
				errs = append(errs, field.Duplicate(cp.Child("{topologyKey, whenUnsatisfiable}"), fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
		if c.MinDomains != nil {
			if *c.MinDomains <= 0 {
				errs = append(errs, field.Invalid(cp.Child("minDomains"), int64(*c.MinDomains), isNotPositiveErrorMsg))
			}
			if c.WhenUnsatisfiable != corev1.DoNotSchedule {
				errs = append(errs, field.Invalid(cp.Child("minDomains"), c.MinDomains, fmt.Sprintf("can only use minDomains if whenUnsatisfiable=%s, not %s", corev1.DoNotSchedule, c.WhenUnsatisfiable)))
			}
		}
		for _, pol := range []struct {
			name string
			v    *corev1.NodeInclusionPolicy
		}{{"nodeAffinityPolicy", c.NodeAffinityPolicy}, {"nodeTaintsPolicy", c.NodeTaintsPolicy}} {
			if pol.v != nil && *pol.v != corev1.NodeInclusionPolicyHonor && *pol.v != corev1.NodeInclusionPolicyIgnore {
				errs = append(errs, field.NotSupported(cp.Child(pol.name), pol.v, nodeInclusionPolicies))
			}
		}
		errs = append(errs, labelKeys(cp, c.MatchLabelKeys, nil, c.LabelSelector)...)
		errs = append(errs, metav1validation.ValidateLabelSelector(c.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, cp.Child("labelSelector"))...)
	}
	return errs
}
