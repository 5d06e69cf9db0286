package validation

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// rbacName is upstream's ValidateRBACName: a name usable as a path segment.
func rbacName(name string, prefix bool) []string { return path.IsValidPathSegmentName(name) }

// roleRefValue is how upstream's error shows a roleRef: its internal type, which has no
// JSON tags, marshalled to JSON.
type roleRefValue struct {
	APIGroup string
	Kind     string
	Name     string
}

// Role validates a Role (upstream ValidateRole).
func Role(r *rbacv1.Role) field.ErrorList {
	errs := objectMeta(&r.ObjectMeta, true, rbacName, metaPath)
	for i := range r.Rules {
		errs = append(errs, PolicyRule(&r.Rules[i], true, field.NewPath("rules").Index(i))...)
	}
	return append(errs, rulesDeclared(r.Rules)...)
}

// RoleUpdate validates an update of a Role.
func RoleUpdate(n, o *rbacv1.Role) field.ErrorList {
	errs := Role(n)
	return append(errs, objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
}

// ClusterRole validates a ClusterRole (upstream ValidateClusterRole); allowInvalidLabels
// keeps selectors with label values valid under older rules (set on update when the stored
// object already has them).
func ClusterRole(r *rbacv1.ClusterRole, allowInvalidLabels bool) field.ErrorList {
	errs := objectMeta(&r.ObjectMeta, false, rbacName, metaPath)
	for i := range r.Rules {
		errs = append(errs, PolicyRule(&r.Rules[i], false, field.NewPath("rules").Index(i))...)
	}
	if r.AggregationRule != nil {
		sp := field.NewPath("aggregationRule", "clusterRoleSelectors")
		if len(r.AggregationRule.ClusterRoleSelectors) == 0 {
			errs = append(errs, field.Required(sp, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
		}
		opts := metav1validation.LabelSelectorValidationOptions{AllowInvalidLabelValueInSelector: allowInvalidLabels}
		for i := range r.AggregationRule.ClusterRoleSelectors {
			s := &r.AggregationRule.ClusterRoleSelectors[i]
			errs = append(errs, metav1validation.ValidateLabelSelector(s, opts, sp.Index(i))...)
			if sel, err := metav1.LabelSelectorAsSelector(s); err != nil {
				errs = append(errs, field.Invalid(sp.Index(i), sel, "invalid label selector."))
			}
		}
	}
	return append(errs, rulesDeclared(r.Rules)...)
}

// ClusterRoleUpdate validates an update of a ClusterRole.
func ClusterRoleUpdate(n, o *rbacv1.ClusterRole) field.ErrorList {
	allow := false
	if o.AggregationRule != nil {
		for i := range o.AggregationRule.ClusterRoleSelectors {
			if len(metav1validation.ValidateLabelSelector(&o.AggregationRule.ClusterRoleSelectors[i], metav1validation.LabelSelectorValidationOptions{}, nil)) > 0 {
				allow = true
			}
		}
	}
	errs := ClusterRole(n, allow)
	return append(errs, objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
}

// PolicyRule validates one rule (upstream ValidatePolicyRule): a rule is either about
// non-resource URLs (cluster-wide only) or about API groups and resources. That it has
// verbs is checked after every rule (rulesDeclared).
func PolicyRule(rule *rbacv1.PolicyRule, namespaced bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(rule.NonResourceURLs) > 0 {
		if namespaced {
			errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), rule.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
		}
		if len(rule.APIGroups) > 0 || len(rule.Resources) > 0 || len(rule.ResourceNames) > 0 {
			errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), rule.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
		}
		return errs
	}
	if len(rule.APIGroups) == 0 {
		errs = append(errs, field.Required(p.Child("apiGroups"), "resource rules must supply at least one api group"))
	}
	if len(rule.Resources) == 0 {
		errs = append(errs, field.Required(p.Child("resources"), "resource rules must supply at least one resource"))
	}
	return errs
}

// RoleBinding validates a RoleBinding (upstream ValidateRoleBinding).
func RoleBinding(rb *rbacv1.RoleBinding) field.ErrorList {
	errs := objectMeta(&rb.ObjectMeta, true, rbacName, metaPath)
	errs = append(errs, roleRef(&rb.RoleRef, []string{"Role", "ClusterRole"})...)
	for i := range rb.Subjects {
		errs = append(errs, Subject(&rb.Subjects[i], true, field.NewPath("subjects").Index(i))...)
	}
	return append(errs, bindingDeclared(rb.Subjects, &rb.RoleRef)...)
}

// RoleBindingUpdate validates an update of a RoleBinding: roleRef is immutable.
func RoleBindingUpdate(n, o *rbacv1.RoleBinding) field.ErrorList {
	errs := RoleBinding(n)
	errs = append(errs, objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
	return append(errs, roleRefUnchanged(&n.RoleRef, &o.RoleRef)...)
}

// ClusterRoleBinding validates a ClusterRoleBinding (upstream ValidateClusterRoleBinding).
func ClusterRoleBinding(rb *rbacv1.ClusterRoleBinding) field.ErrorList {
	errs := objectMeta(&rb.ObjectMeta, false, rbacName, metaPath)
	errs = append(errs, roleRef(&rb.RoleRef, []string{"ClusterRole"})...)
	for i := range rb.Subjects {
		errs = append(errs, Subject(&rb.Subjects[i], false, field.NewPath("subjects").Index(i))...)
	}
	return append(errs, bindingDeclared(rb.Subjects, &rb.RoleRef)...)
}

// ClusterRoleBindingUpdate validates an update of a ClusterRoleBinding: roleRef is immutable.
func ClusterRoleBindingUpdate(n, o *rbacv1.ClusterRoleBinding) field.ErrorList {
	errs := ClusterRoleBinding(n)
	errs = append(errs, objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
	return append(errs, roleRefUnchanged(&n.RoleRef, &o.RoleRef)...)
}

func roleRef(r *rbacv1.RoleRef, kinds []string) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("roleRef")
	if r.APIGroup != rbacv1.GroupName {
		errs = append(errs, field.NotSupported(p.Child("apiGroup"), r.APIGroup, []string{rbacv1.GroupName}))
	}
	known := false
	for _, k := range kinds {
		known = known || r.Kind == k
	}
	if !known {
		errs = append(errs, field.NotSupported(p.Child("kind"), r.Kind, kinds))
	}
	for _, msg := range rbacName(r.Name, false) {
		if r.Name != "" { // an empty name is bindingDeclared's
			errs = append(errs, field.Invalid(p.Child("name"), r.Name, msg))
		}
	}
	return errs
}

func roleRefUnchanged(n, o *rbacv1.RoleRef) field.ErrorList {
	if *n == *o {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("roleRef"), roleRefValue{APIGroup: n.APIGroup, Kind: n.Kind, Name: n.Name}, "cannot change roleRef")}
}

// Subject validates one subject of a binding (upstream ValidateRoleBindingSubject);
// ServiceAccounts of a ClusterRoleBinding need a namespace.
func Subject(s *rbacv1.Subject, namespaced bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		if s.Name != "" {
			for _, msg := range nameIsDNSSubdomain(s.Name, false) {
				errs = append(errs, field.Invalid(p.Child("name"), s.Name, msg))
			}
		}
		if s.APIGroup != "" {
			errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{""}))
		}
		if !namespaced && s.Namespace == "" {
			errs = append(errs, field.Required(p.Child("namespace"), ""))
		}
	case rbacv1.UserKind, rbacv1.GroupKind:
		if s.APIGroup != rbacv1.GroupName {
			errs = append(errs, field.NotSupported(p.Child("apiGroup"), s.APIGroup, []string{rbacv1.GroupName}))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("kind"), s.Kind, []string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
	}
	return errs
}

// The checks upstream's declarative validation makes for RBAC (1.37): its errors come
// after every handwritten one, in the order of the object's fields, and say no more than
// "Required value".

// rulesDeclared: each rule has verbs.
func rulesDeclared(rules []rbacv1.PolicyRule) field.ErrorList {
	var errs field.ErrorList
	for i := range rules {
		if len(rules[i].Verbs) == 0 {
			errs = append(errs, field.Required(field.NewPath("rules").Index(i).Child("verbs"), ""))
		}
	}
	return errs
}

// bindingDeclared: each subject, then the role, is named.
func bindingDeclared(subjects []rbacv1.Subject, ref *rbacv1.RoleRef) field.ErrorList {
	var errs field.ErrorList
	for i := range subjects {
		if subjects[i].Name == "" {
			errs = append(errs, field.Required(field.NewPath("subjects").Index(i).Child("name"), ""))
		}
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(field.NewPath("roleRef", "name"), ""))
	}
	return errs
}
