package evaluator

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/quota"
)

// resourceClaimsGR is the group-resource of DRA resource claims.
var resourceClaimsGR = schema.GroupResource{Group: resourcev1.GroupName, Resource: "resourceclaims"}

// countResourceClaims is the object-count name of resource claims.
const countResourceClaims = corev1.ResourceName("count/resourceclaims.resource.k8s.io")

// ResourceClaims is upstream's evaluator for resource.k8s.io resource claims: the
// object count and, per device class, the number of devices the claim may get, also
// charged as the DRA extended resources the class backs (requests.<extended resource
// name> and requests.deviceclass.resource.kubernetes.io/<class>). Claims match no scope.
type ResourceClaims struct {
	// Classes are the device classes read for their extended resource names; nil means
	// none exist.
	Classes DeviceClasses
}

// Handles accepts writes of the claim itself (its spec is immutable, so its status
// never changes its usage).
func (ResourceClaims) Handles(subresource string) bool { return subresource == "" }

// MatchingResources returns count/resourceclaims.resource.k8s.io, the
// <class>.deviceclass.resource.k8s.io/devices names, every
// requests.deviceclass.resource.kubernetes.io/<class> name, and the requests.<name>
// names of extended resources some device class backs, among input. (Upstream matches
// an implicit name only while its class exists, but charges it whether or not it does;
// matching it always keeps what admission charges and what a recount finds equal.)
func (e ResourceClaims) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	var out []corev1.ResourceName
	var classes *classMapping
	for _, name := range input {
		switch {
		case name == countResourceClaims, strings.HasSuffix(string(name), corev1.ResourceClaimsPerClass),
			strings.HasPrefix(string(name), corev1.ResourceImplicitExtendedClaimsPerClass):
			out = append(out, name)
		case !quota.IsNativeResource(name) && strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix):
			if classes == nil {
				m, err := readClasses(e.Classes)
				if err != nil {
					// Classes that cannot be read back nothing: such names are left to pods.
					m = newClassMapping(nil)
				}
				classes = &m
			}
			if classes.backed[name[len(corev1.DefaultResourceRequestsPrefix):]] {
				out = append(out, name)
			}
		}
	}
	return quota.Intersection(out, out)
}

// Usage charges count/resourceclaims.resource.k8s.io = 1 and, for every request,
// <class>.deviceclass.resource.k8s.io/devices: an exact request adds its count
// (ExactCount) or 32, the most a claim can be allocated (All); a request with
// firstAvailable adds, per class, the most any of its sub-requests asks for (a class
// none asks a device of is not charged). Requests in an unknown allocation mode add
// nothing. Every class charged a positive number of devices is also charged, that
// number, as requests.deviceclass.resource.kubernetes.io/<class> and, when the class
// names one, as requests.<spec.extendedResourceName> (see extendedResourceUsage).
func (e ResourceClaims) Usage(obj runtime.Object) (corev1.ResourceList, error) {
	claim, ok := obj.(*resourcev1.ResourceClaim)
	if !ok {
		return nil, fmt.Errorf("expect *v1.ResourceClaim, got %T", obj)
	}
	result := corev1.ResourceList{countResourceClaims: *resource.NewQuantity(1, resource.DecimalSI)}
	add := func(class string, n int64) {
		name := corev1.ResourceName(class + corev1.ResourceClaimsPerClass)
		q := result[name]
		q.Add(*resource.NewQuantity(n, resource.DecimalSI))
		result[name] = q
	}
	for _, r := range claim.Spec.Devices.Requests {
		switch {
		case len(r.FirstAvailable) > 0:
			most := map[string]int64{}
			var order []string
			for _, s := range r.FirstAvailable {
				// As upstream, a class is charged only for a positive number of devices.
				if n := devices(s.AllocationMode, s.Count); n > most[s.DeviceClassName] {
					if _, seen := most[s.DeviceClassName]; !seen {
						order = append(order, s.DeviceClassName)
					}
					most[s.DeviceClassName] = n
				}
			}
			for _, class := range order {
				add(class, most[class])
			}
		case r.Exactly != nil:
			add(r.Exactly.DeviceClassName, devices(r.Exactly.AllocationMode, r.Exactly.Count))
		}
	}
	if err := e.extendedResourceUsage(claim, result); err != nil {
		return nil, err
	}
	return result, nil
}

// devices is the number of devices a request in mode may be allocated.
func devices(mode resourcev1.DeviceAllocationMode, count int64) int64 {
	switch mode {
	case resourcev1.DeviceAllocationModeExactCount:
		return count
	case resourcev1.DeviceAllocationModeAll:
		return resourcev1.AllocationResultsMaxSize
	}
	return 0
}

// extendedResourceUsage adds to result, for every class it charges a positive number of
// devices, the DRA extended resource names of that class (upstream's
// addExtendedResourceQuota). The claim kube-scheduler creates for a pod's extended
// resource requests (isPodOwnedExtendedResourceClaim) adds none: its pod is charged them
// already. (Upstream subtracts the owning pod's usage name by name, reading the pod;
// usage here is a function of the claim and the classes only, so such a claim is taken
// to request what its pod requests.)
func (e ResourceClaims) extendedResourceUsage(claim *resourcev1.ResourceClaim, result corev1.ResourceList) error {
	if isPodOwnedExtendedResourceClaim(claim) {
		return nil
	}
	var perClass []corev1.ResourceName
	for name, q := range result {
		if class, ok := strings.CutSuffix(string(name), corev1.ResourceClaimsPerClass); ok && class != "" && q.Sign() > 0 {
			perClass = append(perClass, name)
		}
	}
	if len(perClass) == 0 {
		return nil
	}
	classes, err := readClasses(e.Classes)
	if err != nil {
		return err
	}
	sort.Slice(perClass, func(i, j int) bool { return perClass[i] < perClass[j] })
	for _, name := range perClass {
		class := strings.TrimSuffix(string(name), corev1.ResourceClaimsPerClass)
		q := result[name]
		result[corev1.ResourceName(corev1.ResourceImplicitExtendedClaimsPerClass+class)] = q.DeepCopy()
		if ext := classes.byClass[class]; ext != "" {
			result[corev1.ResourceName(corev1.DefaultResourceRequestsPrefix+ext)] = q.DeepCopy()
		}
	}
	return nil
}
