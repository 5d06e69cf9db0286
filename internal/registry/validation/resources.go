package validation

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/quota/quantity"
)

// semantic is apimachinery's equality.Semantic with quantities compared without
// scaling (a value stored before quantities were bounded may be compared).
var semantic = quantity.Semantic()

// Resource-name classes of upstream pkg/apis/core/helper.
var (
	standardContainerResources = sets.New[corev1.ResourceName](corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage)
	standardResources          = sets.New[corev1.ResourceName](
		corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
		corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
		corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
		corev1.ResourceSecrets, corev1.ResourcePersistentVolumeClaims, corev1.ResourceConfigMaps,
		corev1.ResourceStorage, corev1.ResourceRequestsStorage,
		corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
	)
	integerResources = sets.New[corev1.ResourceName](
		corev1.ResourcePods, corev1.ResourceQuotas, corev1.ResourceServices, corev1.ResourceReplicationControllers,
		corev1.ResourceSecrets, corev1.ResourceConfigMaps, corev1.ResourcePersistentVolumeClaims,
		corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
	)
)

const (
	isNegativeErrorMsg    = apimachineryValidationIsNegative
	isNotIntegerErrorMsg  = `must be an integer`
	isNotPositiveErrorMsg = `must be greater than zero`
	immutableErrorMsg     = `field is immutable`
)

// apimachineryValidationIsNegative is apimachinery's IsNegativeErrorMsg.
const apimachineryValidationIsNegative = `must be greater than or equal to 0`

func isHugePages(n corev1.ResourceName) bool {
	return strings.HasPrefix(string(n), corev1.ResourceHugePagesPrefix)
}

func isNativeResource(n corev1.ResourceName) bool {
	return !strings.Contains(string(n), "/") || strings.Contains(string(n), corev1.ResourceDefaultNamespacePrefix)
}

func isExtendedResource(n corev1.ResourceName) bool {
	if isNativeResource(n) || strings.HasPrefix(string(n), corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return isQualifiedName(corev1.DefaultResourceRequestsPrefix + string(n))
}

func isOvercommitAllowed(n corev1.ResourceName) bool {
	return isNativeResource(n) && !isHugePages(n)
}

func isIntegerResource(n corev1.ResourceName) bool {
	return integerResources.Has(n) || isExtendedResource(n)
}

func isStandardResource(n corev1.ResourceName) bool {
	return standardResources.Has(n) || isHugePages(n) || strings.HasPrefix(string(n), corev1.DefaultResourceRequestsPrefix+corev1.ResourceHugePagesPrefix)
}

// hugePagesDivisible reports whether q is a whole number of pages of the size
// in the resource name hugepages-<size>. A q beyond quantity.Bound counts as
// divisible: its own error says what is wrong with it. The size is a text from
// the request (a resource name) and is checked as a decoder checks quantities
// before it is parsed.
func hugePagesDivisible(n corev1.ResourceName, q resource.Quantity) bool {
	if !quantity.InBound(q) {
		return true
	}
	text := strings.TrimPrefix(string(n), corev1.ResourceHugePagesPrefix)
	if quantity.CheckText(text, field.NewPath("size")) != nil {
		return false
	}
	size, err := resource.ParseQuantity(text)
	if err != nil || size.Sign() <= 0 || !quantity.InBound(size) || !quantity.IsInteger(size) {
		return false
	}
	return q.Value()%size.Value() == 0
}

// nonnegativeQuantity is upstream ValidateNonnegativeQuantity.
func nonnegativeQuantity(q resource.Quantity, p *field.Path) field.ErrorList {
	if q.Sign() < 0 {
		return field.ErrorList{field.Invalid(p, quantity.BadValue(q), isNegativeErrorMsg)}
	}
	return nil
}

// positiveQuantity is upstream ValidatePositiveQuantityValue.
func positiveQuantity(q resource.Quantity, p *field.Path) field.ErrorList {
	if q.Sign() <= 0 {
		return field.ErrorList{field.Invalid(p, quantity.BadValue(q), isNotPositiveErrorMsg)}
	}
	return nil
}

// boundedQuantities checks every value of l against quantity.Bound, in name
// order, skipping values equal to old's (a value stored before the bound may
// stay; it cannot be raised).
func boundedQuantities(l, old corev1.ResourceList, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	var names namesBuf
	for _, n := range sortedNames(l, &names) {
		if o, ok := old[n]; ok && quantity.Cmp(o, l[n]) == 0 {
			continue
		}
		if err := quantity.Check(l[n], p.Key(string(n))); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// nonnegative is upstream ValidateNonnegativeField.
func nonnegative(v int64, p *field.Path) field.ErrorList {
	if v < 0 {
		return field.ErrorList{field.Invalid(p, v, isNegativeErrorMsg)}
	}
	return nil
}

// resourceQuantityValue is upstream ValidateResourceQuantityValue, with
// quotad's bound (quantity.Bound) checked after the sign and before anything
// that would scale q; the integer check is exact (upstream's
// MilliValue()%1000 overflows above 9223372036854775807m).
func resourceQuantityValue(n corev1.ResourceName, q resource.Quantity, p *field.Path) field.ErrorList {
	errs := nonnegativeQuantity(q, p)
	if err := quantity.Check(q, p); err != nil {
		if q.Sign() > 0 { // below -Bound, the negative error says enough
			errs = append(errs, err)
		}
		return errs
	}
	if isIntegerResource(n) && !quantity.IsInteger(q) {
		errs = append(errs, field.Invalid(p, q, isNotIntegerErrorMsg))
	}
	return errs
}

// resourceName is upstream validateResourceName.
func resourceName(n corev1.ResourceName, p *field.Path) field.ErrorList {
	if standardResources.Has(n) {
		return nil // fixed standard names are qualified names
	}
	if !isQualifiedName(string(n)) {
		var errs field.ErrorList
		for _, msg := range validation.IsQualifiedName(string(n)) {
			errs = append(errs, field.Invalid(p, n, msg))
		}
		return errs
	}
	if !strings.Contains(string(n), "/") && !isStandardResource(n) {
		return field.ErrorList{field.Invalid(p, n, "must be a standard resource type or fully qualified")}
	}
	return nil
}

// containerResourceName is upstream validateContainerResourceName.
func containerResourceName(n corev1.ResourceName, p *field.Path) field.ErrorList {
	errs := resourceName(n, p)
	if !strings.Contains(string(n), "/") {
		if !standardContainerResources.Has(n) && !isHugePages(n) {
			return append(errs, field.Invalid(p, n, "must be a standard resource for containers"))
		}
	} else if !isNativeResource(n) && !isExtendedResource(n) {
		return append(errs, field.Invalid(p, n, "doesn't follow extended resource name standard"))
	}
	return errs
}

// podLevelSupported lists the resources settable in spec.resources, in the
// order upstream prints them.
var podLevelSupported = []string{"cpu", "hugepages-", "memory"}

// podResourceName is upstream validatePodResourceName.
func podResourceName(n corev1.ResourceName, p *field.Path) field.ErrorList {
	errs := resourceName(n, p)
	if len(errs) != 0 {
		return errs
	}
	if n != corev1.ResourceCPU && n != corev1.ResourceMemory && !isHugePages(n) {
		errs = append(errs, field.NotSupported(p, n, podLevelSupported))
	}
	return errs
}

// resourceRequirements is upstream validateResourceRequirements, for
// containers (nameFn containerResourceName) or the pod level
// (podResourceName). Map iteration follows sorted keys so that the order of
// the errors is stable.
func resourceRequirements(r *corev1.ResourceRequirements, nameFn func(corev1.ResourceName, *field.Path) field.ErrorList, claimNames sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	// Paths are built only for the errors that name them.
	limPath := func() *field.Path { return p.Child("limits") }
	reqPath := func() *field.Path { return p.Child("requests") }
	named := func(n corev1.ResourceName, q resource.Quantity, at func() *field.Path) field.ErrorList {
		return withPath(at, func(fp *field.Path) field.ErrorList {
			return append(nameFn(n, fp), resourceQuantityValue(n, q, fp)...)
		})
	}
	limCPUMem, reqCPUMem, limHuge, reqHuge := false, false, false, false
	var names namesBuf
	for _, n := range sortedNames(r.Limits, &names) {
		q := r.Limits[n]
		fp := func() *field.Path { return limPath().Key(string(n)) }
		errs = append(errs, named(n, q, fp)...)
		if isHugePages(n) {
			limHuge = true
			if !hugePagesDivisible(n, q) {
				errs = append(errs, field.Invalid(fp(), q.String(), fmt.Sprintf("%s is not positive integer multiple of %s", q.String(), n)))
			}
		}
		if n == corev1.ResourceCPU || n == corev1.ResourceMemory {
			limCPUMem = true
		}
	}
	for _, n := range sortedNames(r.Requests, &names) {
		q := r.Requests[n]
		fp := func() *field.Path { return reqPath().Key(string(n)) }
		errs = append(errs, named(n, q, fp)...)
		if lim, ok := r.Limits[n]; ok {
			if quantity.Cmp(q, lim) != 0 && !isOvercommitAllowed(n) {
				errs = append(errs, field.Invalid(reqPath(), q.String(), fmt.Sprintf("must be equal to %s limit of %s", n, lim.String())))
			} else if quantity.Cmp(q, lim) > 0 {
				errs = append(errs, field.Invalid(reqPath(), q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", n, lim.String())))
			}
		} else if !isOvercommitAllowed(n) {
			errs = append(errs, field.Required(limPath(), "Limit must be set for non overcommitable resources"))
		}
		if isHugePages(n) {
			reqHuge = true
			if !hugePagesDivisible(n, q) {
				errs = append(errs, field.Invalid(fp(), q.String(), fmt.Sprintf("%s is not positive integer multiple of %s", q.String(), n)))
			}
		}
		if n == corev1.ResourceCPU || n == corev1.ResourceMemory {
			reqCPUMem = true
		}
	}
	if !limCPUMem && !reqCPUMem && (reqHuge || limHuge) {
		errs = append(errs, field.Forbidden(p, "HugePages require cpu or memory"))
	}
	if len(r.Claims) > 0 {
		errs = append(errs, resourceClaimNames(r.Claims, claimNames, p.Child("claims"))...)
	}
	return errs
}

// resourceClaimNames is upstream validateResourceClaimNames.
func resourceClaimNames(claims []corev1.ResourceClaim, podClaims sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.Set[string]{}
	for i, c := range claims {
		if c.Name == "" {
			errs = append(errs, field.Required(p.Index(i), ""))
			continue
		}
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(p.Index(i), c.Name))
		} else {
			key := c.Name
			if c.Request != "" {
				errs = append(errs, dns1123Label(c.Request, p.Index(i).Child("request"))...)
				key += "/" + c.Request
			}
			if names.Has(key) {
				errs = append(errs, field.Duplicate(p.Index(i), key))
			} else if c.Request == "" {
				for _, k := range sets.List(names) {
					if before, _, ok := strings.Cut(k, "/"); ok && before == c.Name {
						errs = append(errs, field.Duplicate(p.Index(i), c.Name))
					}
				}
			}
			names.Insert(key)
		}
		if !podClaims.Has(c.Name) {
			e := field.NotFound(p.Index(i), c.Name)
			e.Detail = "must be one of the names in pod.spec.resourceClaims"
			if len(podClaims) == 0 {
				e.Detail += " which is empty"
			} else {
				e.Detail += ": " + strings.Join(sets.List(podClaims), ", ")
			}
			errs = append(errs, e)
		}
	}
	return errs
}

// namesBuf holds the names of a list of a few resources (most lists), for sortedNames.
type namesBuf [8]corev1.ResourceName

// sortedNames returns the keys of l in order, in buf when they fit.
func sortedNames(l corev1.ResourceList, buf *namesBuf) []corev1.ResourceName {
	if len(l) == 0 {
		return nil
	}
	keys := buf[:0]
	if len(l) > len(buf) {
		keys = make([]corev1.ResourceName, 0, len(l))
	}
	for k := range l {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func dns1123Label(v string, p *field.Path) field.ErrorList {
	if isDNS1123Label(v) {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

func dns1123Subdomain(v string, p *field.Path) field.ErrorList {
	if isDNS1123Subdomain(v) {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

func qualifiedName(v string, p *field.Path) field.ErrorList {
	if isQualifiedName(v) {
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

func nameErrs(fn NameFunc, v string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range fn(v, false) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}
