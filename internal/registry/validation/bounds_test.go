package validation

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/quota/quotatest"
)

// TestQuantityBounds: every quantity quota or admission compares is refused beyond 2^63-1
// before anything scales it (Quantity.Cmp against 1e1000000000 scales by a billion-digit
// power of ten), and checking one costs what a normal one does.
func TestQuantityBounds(t *testing.T) {
	const huge = "1e1000000000"
	const tooLarge = `Invalid value: "10e999999999": must be less than or equal to 9223372036854775807`
	tests := []struct {
		name string
		old  func() runtime.Object // nil: a create
		new  func() runtime.Object
		want []string
	}{
		{"container limit and request", nil, func() runtime.Object {
			p := validPod()
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"cpu": q(huge), "memory": q("1Gi")}
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"memory": q(huge)}
			return p
		}, []string{
			"spec.containers[0].resources.limits[cpu]: " + tooLarge,
			"spec.containers[0].resources.requests[cpu]: " + tooLarge,
			"spec.containers[0].resources.requests[memory]: " + tooLarge,
			`spec.containers[0].resources.requests: Invalid value: "10e999999999": must be less than or equal to memory limit of 1Gi`,
		}},
		{"init container, extended resource and overhead", nil, func() runtime.Object {
			p := validPod()
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{"example.com/gpu": q(huge)}, Requests: corev1.ResourceList{"example.com/gpu": q(huge)}}}}
			p.Spec.Overhead = corev1.ResourceList{"memory": q("9223372036854775808")}
			return p
		}, []string{
			"spec.initContainers[0].resources.limits[example.com/gpu]: " + tooLarge,
			"spec.initContainers[0].resources.requests[example.com/gpu]: " + tooLarge,
			`spec.overhead.limits[memory]: Invalid value: "9223372036854775808": must be less than or equal to 9223372036854775807`,
		}},
		{"pod-level resources", nil, func() runtime.Object {
			p := validPod()
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"cpu": q("1")}
			p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": q(huge)}}
			return p
		}, []string{"spec.resources.requests[cpu]: " + tooLarge}},
		{"hugepages of a size no decoder would parse", nil, func() runtime.Object {
			p := validPod()
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"hugepages-1e-1000000000": q("1"), "memory": q("1Gi")}
			return p
		}, []string{
			`spec.containers[0].resources.limits[hugepages-1e-1000000000]: Invalid value: "1": 1 is not positive integer multiple of hugepages-1e-1000000000`,
			`spec.containers[0].resources.requests[hugepages-1e-1000000000]: Invalid value: "1": 1 is not positive integer multiple of hugepages-1e-1000000000`,
		}},
		{"integer resource beyond MilliValue's range", nil, func() runtime.Object {
			p := validPod()
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"example.com/gpu": q("9223372036854775807")}
			return p
		}, nil},
		{"limit range", nil, func() runtime.Object {
			return &corev1.LimitRange{ObjectMeta: meta("lr"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
				Type: corev1.LimitTypeContainer,
				Max:  corev1.ResourceList{"cpu": q(huge)}, Min: corev1.ResourceList{"cpu": q("1")},
				MaxLimitRequestRatio: corev1.ResourceList{"cpu": q(huge)},
			}}}}
		}, []string{
			"spec.limits[0].max[cpu]: " + tooLarge,
			// Defaulted from max, as upstream defaults them.
			"spec.limits[0].default[cpu]: " + tooLarge,
			"spec.limits[0].defaultRequest[cpu]: " + tooLarge,
			"spec.limits[0].maxLimitRequestRatio[cpu]: " + tooLarge,
		}},
		{"claim request", nil, func() runtime.Object {
			c := validPVC()
			c.Spec.Resources.Requests["storage"] = q(huge)
			return c
		}, []string{"spec.resources[storage]: " + tooLarge}},
		{"claim status raised beyond the bound", func() runtime.Object { return validPVC() }, func() runtime.Object {
			c := validPVC()
			c.Status.AllocatedResources = corev1.ResourceList{"storage": q(huge)}
			c.Status.Capacity = corev1.ResourceList{"storage": q(huge)}
			return c
		}, []string{
			"status.capacity[storage]: " + tooLarge,
			"status.allocatedResources[storage]: " + tooLarge,
		}},
		{"claim status stored beyond the bound may stay", func() runtime.Object {
			c := validPVC()
			c.Status.Capacity = corev1.ResourceList{"storage": q(huge)}
			return c
		}, func() runtime.Object {
			c := validPVC()
			c.Status.Capacity = corev1.ResourceList{"storage": q(huge)}
			c.Labels = map[string]string{"a": "b"}
			return c
		}, nil},
		{"node capacity", nil, func() runtime.Object {
			return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Capacity: corev1.ResourceList{"pods": q(huge)}}}
		}, []string{
			"status.capacity.pods: " + tooLarge,
			"status.allocatable.pods: " + tooLarge, // defaulted from capacity
		}},
	}
	for _, tc := range tests {
		quotatest.Within(t, quotatest.StallBound, tc.name, func() error {
			obj := prepare(tc.new())
			var errs []string
			if tc.old == nil {
				errs = errStrings(Validate(obj))
			} else {
				o := prepare(tc.old())
				o.(interface{ SetResourceVersion(string) }).SetResourceVersion("1")
				obj.(interface{ SetResourceVersion(string) }).SetResourceVersion("1")
				errs = errStrings(ValidateUpdate(obj, o))
			}
			want := tc.want
			if want == nil {
				want = []string{}
			}
			if d := cmp.Diff(want, errs); d != "" {
				return fmt.Errorf("errors differ (-want +got):\n%s", d)
			}
			return nil
		})
	}
}
