package defaults

import (
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// applyResource sets upstream's resource.k8s.io/v1 defaults on claims and claim
// templates; false for other kinds. obj is not nil.
func applyResource(obj runtime.Object) bool {
	switch o := obj.(type) {
	case *resourcev1.ResourceClaim:
		DeviceClaim(&o.Spec.Devices)
	case *resourcev1.ResourceClaimTemplate:
		DeviceClaim(&o.Spec.Spec.Devices)
	case *resourcev1.DeviceClass, *resourcev1.ResourceSlice:
	default:
		return false
	}
	return true
}

// DeviceClaim sets upstream's request defaults: allocationMode ExactCount, count 1
// in ExactCount mode, and toleration operator Equal, for exact requests and for
// every firstAvailable sub-request.
func DeviceClaim(d *resourcev1.DeviceClaim) {
	mode := func(m *resourcev1.DeviceAllocationMode, count *int64) {
		if *m == "" {
			*m = resourcev1.DeviceAllocationModeExactCount
		}
		if *m == resourcev1.DeviceAllocationModeExactCount && *count == 0 {
			*count = 1
		}
	}
	tolerations := func(ts []resourcev1.DeviceToleration) {
		for i := range ts {
			if ts[i].Operator == "" {
				ts[i].Operator = resourcev1.DeviceTolerationOpEqual
			}
		}
	}
	for i := range d.Requests {
		r := &d.Requests[i]
		if r.Exactly != nil {
			mode(&r.Exactly.AllocationMode, &r.Exactly.Count)
			tolerations(r.Exactly.Tolerations)
		}
		for j := range r.FirstAvailable {
			s := &r.FirstAvailable[j]
			mode(&s.AllocationMode, &s.Count)
			tolerations(s.Tolerations)
		}
	}
}
