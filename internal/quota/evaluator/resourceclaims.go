package evaluator

import (
	"fmt"
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
// object count and, per device class, the number of devices the claim may get. Claims
// match no scope.
type ResourceClaims struct{}

// Handles accepts writes of the claim itself (its spec is immutable, so its status
// never changes its usage).
func (ResourceClaims) Handles(subresource string) bool { return subresource == "" }

// MatchingResources returns count/resourceclaims.resource.k8s.io and the
// <class>.deviceclass.resource.k8s.io/devices names among input.
func (ResourceClaims) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, name := range input {
		if name == countResourceClaims || strings.HasSuffix(string(name), corev1.ResourceClaimsPerClass) {
			out = append(out, name)
		}
	}
	return quota.Intersection(out, out)
}

// Usage charges count/resourceclaims.resource.k8s.io = 1 and, for every request,
// <class>.deviceclass.resource.k8s.io/devices: an exact request adds its count
// (ExactCount) or 32, the most a claim can be allocated (All); a request with
// firstAvailable adds, per class, the most any of its sub-requests asks for (a class
// none asks a device of is not charged). Requests in an unknown allocation mode add
// nothing.
func (ResourceClaims) Usage(obj runtime.Object) (corev1.ResourceList, error) {
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
