package quota

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/quota/quantity"
	"github.com/quotad/quotad/internal/registry/convert"
)

// ResourceQuota validation, with upstream's field paths and messages
// (pkg/apis/core/validation). Upstream iterates maps in random order; quotad reports the
// errors of spec.hard, status.hard and status.used sorted by resource name. Bad values
// are the public v1 values, rendered by field.Error as upstream renders its own.

const (
	isInvalidQuotaResource = `must be a standard resource for quota`
	isNotIntegerErrorMsg   = `must be an integer`
	notStandardOrQualified = `must be a standard resource type or fully qualified`
	notStandardFinalizer   = `name is neither a standard finalizer name nor is it fully qualified`
	mustBeExists           = `must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity`
	valuesRequired         = "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"
	valuesForbidden        = "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"
)

// ValidateResourceQuotaName checks a quota name: a DNS subdomain, with upstream's messages
// (prefix is true when checking a generateName).
func ValidateResourceQuotaName(name string, prefix bool) []string {
	return apimachineryvalidation.NameIsDNSSubdomain(name, prefix)
}

// ValidateResourceQuota validates a quota on create: metadata (namespace required, name a
// DNS subdomain), spec and status.
func ValidateResourceQuota(rq *corev1.ResourceQuota) field.ErrorList {
	allErrs := validateObjectMeta(&rq.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, ValidateQuotaAnnotations(rq.Annotations, field.NewPath("metadata", "annotations"))...)
	allErrs = append(allErrs, ValidateResourceQuotaSpec(&rq.Spec, field.NewPath("spec"))...)
	allErrs = append(allErrs, validateResourceList(rq.Status.Hard, field.NewPath("status", "hard"))...)
	allErrs = append(allErrs, validateResourceList(rq.Status.Used, field.NewPath("status", "used"))...)
	return allErrs
}

// ValidateResourceQuotaUpdate validates an update of the main resource: metadata update
// rules, the new spec, and spec.scopes unchanged as a set ("field is immutable").
// spec.hard and spec.scopeSelector are mutable.
func ValidateResourceQuotaUpdate(newRQ, oldRQ *corev1.ResourceQuota) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newRQ.ObjectMeta, &oldRQ.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, ValidateQuotaAnnotationsUpdate(newRQ.Annotations, oldRQ.Annotations, field.NewPath("metadata", "annotations"))...)
	allErrs = append(allErrs, ValidateResourceQuotaSpec(&newRQ.Spec, field.NewPath("spec"))...)
	newScopes := sets.New(newRQ.Spec.Scopes...)
	oldScopes := sets.New(oldRQ.Spec.Scopes...)
	if !newScopes.Equal(oldScopes) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "scopes"), newRQ.Spec.Scopes, apimachineryvalidation.FieldImmutableErrorMsg))
	}
	return allErrs
}

// ValidateQuotaAnnotationsUpdate validates quotad's annotations of an updated quota's metadata
// (ValidateQuotaAnnotations) when their value changed: a value stored before validation
// knew it (read as Enforce and no threshold) does not block the quota's other updates.
func ValidateQuotaAnnotationsUpdate(newAnnotations, oldAnnotations map[string]string, fldPath *field.Path) field.ErrorList {
	changed := map[string]string{}
	for _, key := range []string{EnforcementAnnotation, WarnAtAnnotation} {
		v, ok := newAnnotations[key]
		if old, had := oldAnnotations[key]; ok && (!had || old != v) {
			changed[key] = v
		}
	}
	if len(changed) == 0 {
		return nil
	}
	return ValidateQuotaAnnotations(changed, fldPath)
}

// ValidateResourceQuotaStatusUpdate validates an update of the status subresource:
// metadata update rules, a resourceVersion, and the names and values of status.hard and
// status.used.
func ValidateResourceQuotaStatusUpdate(newRQ, oldRQ *corev1.ResourceQuota) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&newRQ.ObjectMeta, &oldRQ.ObjectMeta, field.NewPath("metadata"))
	if newRQ.ResourceVersion == "" {
		allErrs = append(allErrs, field.Required(field.NewPath("resourceVersion"), ""))
	}
	allErrs = append(allErrs, validateResourceList(newRQ.Status.Hard, field.NewPath("status", "hard"))...)
	allErrs = append(allErrs, validateResourceList(newRQ.Status.Used, field.NewPath("status", "used"))...)
	return allErrs
}

// ValidateResourceQuotaSpec validates spec.hard (names and quantities), spec.scopes and
// spec.scopeSelector.
func ValidateResourceQuotaSpec(spec *corev1.ResourceQuotaSpec, fldPath *field.Path) field.ErrorList {
	allErrs := validateResourceList(spec.Hard, fldPath.Child("hard"))
	allErrs = append(allErrs, validateScopes(spec, fldPath)...)
	if spec.ScopeSelector != nil {
		allErrs = append(allErrs, validateScopeSelector(spec, fldPath.Child("scopeSelector"))...)
	}
	return allErrs
}

// ValidateResourceQuotaResourceName validates one name of hard or used.
func ValidateResourceQuotaResourceName(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	allErrs := validateResourceName(name, fldPath)
	if !strings.Contains(string(name), "/") && !IsStandardQuotaResourceName(name) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, isInvalidQuotaResource))
	}
	return allErrs
}

// ValidateResourceQuantityValue validates one quantity of hard or used: not negative, not
// above quantity.Bound (quotad's bound, checked first, without scaling: see package
// quantity), and whole for integer resources.
func ValidateResourceQuantityValue(name corev1.ResourceName, value resource.Quantity, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if value.Sign() < 0 {
		allErrs = append(allErrs, field.Invalid(fldPath, quantity.BadValue(value), apimachineryvalidation.IsNegativeErrorMsg))
	}
	if err := quantity.Check(value, fldPath); err != nil {
		if value.Sign() > 0 { // below -Bound, the negative error says enough
			allErrs = append(allErrs, err)
		}
		return allErrs
	}
	if IsIntegerResourceName(name) && !quantity.IsInteger(value) {
		allErrs = append(allErrs, field.Invalid(fldPath, value, isNotIntegerErrorMsg))
	}
	return allErrs
}

// ResourceQuotaWarnings returns upstream's create warnings: for cpu, memory, storage and
// ephemeral-storage, a request above its limit ("ResourceQuota requests.cpu (2) should be
// less than limits.cpu (1)"). The request name is requests.<r>, or the bare cpu/memory.
func ResourceQuotaWarnings(rq *corev1.ResourceQuota) []string {
	var warnings []string
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceStorage, corev1.ResourceEphemeralStorage} {
		requestName := corev1.ResourceName("requests." + string(r))
		request, requestOK := rq.Spec.Hard[requestName]
		if !requestOK && (r == corev1.ResourceCPU || r == corev1.ResourceMemory) {
			if request, requestOK = rq.Spec.Hard[r]; requestOK {
				requestName = r
			}
		}
		limitName := corev1.ResourceName("limits." + string(r))
		limit, limitOK := rq.Spec.Hard[limitName]
		if requestOK && limitOK && quantity.Cmp(request, limit) > 0 {
			warnings = append(warnings, fmt.Sprintf("ResourceQuota %s (%s) should be less than %s (%s)",
				requestName, request.String(), limitName, limit.String()))
		}
	}
	return warnings
}

// validateObjectMeta is upstream's core ValidateObjectMeta for a namespaced object named
// by a DNS subdomain, including the check of unqualified finalizer names.
func validateObjectMeta(m *metav1.ObjectMeta, fldPath *field.Path) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(m, true, ValidateResourceQuotaName, fldPath)
	for i, f := range m.Finalizers {
		if strings.Contains(f, "/") {
			continue
		}
		switch f {
		case string(corev1.FinalizerKubernetes), metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents:
			continue
		}
		allErrs = append(allErrs, field.Invalid(fldPath.Child("finalizers").Index(i), f, notStandardFinalizer))
	}
	return allErrs
}

// validateResourceList validates the names and quantities of a hard or used list, in
// name order.
func validateResourceList(list corev1.ResourceList, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, name := range ResourceNames(list) {
		p := fldPath.Key(string(name))
		allErrs = append(allErrs, ValidateResourceQuotaResourceName(name, p)...)
		allErrs = append(allErrs, ValidateResourceQuantityValue(name, list[name], p)...)
	}
	return allErrs
}

// validateResourceName requires a qualified name, and a standard one when unqualified.
func validateResourceName(name corev1.ResourceName, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for _, msg := range validation.IsQualifiedName(string(name)) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, msg))
	}
	if len(allErrs) != 0 {
		return allErrs
	}
	if !strings.Contains(string(name), "/") && !IsStandardResourceName(name) {
		allErrs = append(allErrs, field.Invalid(fldPath, name, notStandardOrQualified))
	}
	return allErrs
}

// conflictingScopes reports whether scopes hold both of BestEffort/NotBestEffort or both
// of Terminating/NotTerminating, once per conflicting pair.
func conflictingScopes(scopes sets.Set[corev1.ResourceQuotaScope]) int {
	n := 0
	if scopes.HasAll(corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort) {
		n++
	}
	if scopes.HasAll(corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating) {
		n++
	}
	return n
}

// standardHardNames returns the sorted names of hard that are standard quota names (only
// those are checked against scopes).
func standardHardNames(hard corev1.ResourceList) []corev1.ResourceName {
	var names []corev1.ResourceName
	for _, n := range ResourceNames(hard) {
		if IsStandardQuotaResourceName(n) {
			names = append(names, n)
		}
	}
	return names
}

// validateScopes validates spec.scopes; every error's bad value is the whole list.
func validateScopes(spec *corev1.ResourceQuotaSpec, fld *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(spec.Scopes) == 0 {
		return allErrs
	}
	fldPath := fld.Child("scopes")
	hard := standardHardNames(spec.Hard)
	seen := sets.New[corev1.ResourceQuotaScope]()
	for _, scope := range spec.Scopes {
		if !IsStandardScope(scope) {
			allErrs = append(allErrs, field.Invalid(fldPath, spec.Scopes, "unsupported scope"))
		}
		for _, name := range hard {
			if !IsScopeValidForResource(scope, name) {
				allErrs = append(allErrs, field.Invalid(fldPath, spec.Scopes, "unsupported scope applied to resource"))
			}
		}
		seen.Insert(scope)
	}
	for range conflictingScopes(seen) {
		allErrs = append(allErrs, field.Invalid(fldPath, spec.Scopes, "conflicting scopes"))
	}
	return allErrs
}

// validateScopeSelector validates spec.scopeSelector.matchExpressions.
func validateScopeSelector(spec *corev1.ResourceQuotaSpec, fld *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	fldPath := fld.Child("matchExpressions")
	hard := standardHardNames(spec.Hard)
	seen := sets.New[corev1.ResourceQuotaScope]()
	for _, req := range spec.ScopeSelector.MatchExpressions {
		if !IsStandardScope(req.ScopeName) {
			allErrs = append(allErrs, field.Invalid(fldPath.Child("scopeName"), req.ScopeName, "unsupported scope"))
		}
		for _, name := range hard {
			if !IsScopeValidForResource(req.ScopeName, name) {
				allErrs = append(allErrs, field.Invalid(fldPath, convert.InternalJSON(spec.ScopeSelector), "unsupported scope applied to resource"))
			}
		}
		switch req.ScopeName {
		case corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort,
			corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating,
			corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
			if req.Operator != corev1.ScopeSelectorOpExists {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("operator"), req.Operator, mustBeExists))
			}
		}
		switch req.Operator {
		case corev1.ScopeSelectorOpIn, corev1.ScopeSelectorOpNotIn:
			if len(req.Values) == 0 {
				allErrs = append(allErrs, field.Required(fldPath.Child("values"), valuesRequired))
			}
		case corev1.ScopeSelectorOpExists, corev1.ScopeSelectorOpDoesNotExist:
			if len(req.Values) != 0 {
				allErrs = append(allErrs, field.Invalid(fldPath.Child("values"), req.Values, valuesForbidden))
			}
		default:
			allErrs = append(allErrs, field.Invalid(fldPath.Child("operator"), req.Operator, "not a valid selector operator"))
		}
		seen.Insert(req.ScopeName)
	}
	// Upstream reports spec.scopes (sic) as the bad value here.
	for range conflictingScopes(seen) {
		allErrs = append(allErrs, field.Invalid(fldPath, spec.Scopes, "conflicting scopes"))
	}
	return allErrs
}
