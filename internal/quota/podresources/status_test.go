package podresources

import (
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/quotad/quotad/internal/quota"
)

// TestChargedAgreesWithComponentHelpers: ChargedRequests and ChargedLimits equal
// component-helpers' PodRequests and PodLimits with the status resources (what upstream's
// 1.37 quota evaluator calls; container level only here) on random pods with sidecars,
// init containers, partial statuses and Infeasible resizes.
func TestChargedAgreesWithComponentHelpers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 37))
	q := func() resource.Quantity { return resource.MustParse(fmt.Sprintf("%dm", 50*(1+rng.IntN(40)))) }
	maybe := func() corev1.ResourceList {
		l := corev1.ResourceList{}
		if rng.IntN(3) > 0 {
			l[corev1.ResourceCPU] = q()
		}
		if rng.IntN(3) == 0 {
			l[corev1.ResourceMemory] = q()
		}
		if rng.IntN(5) == 0 {
			return nil
		}
		return l
	}
	opts := resourcehelper.PodResourcesOptions{UseStatusResources: true, SkipPodLevelResources: true, ExcludeOverhead: true}
	for i := 0; i < 2000; i++ {
		pod := &corev1.Pod{}
		status := func(name string) {
			if rng.IntN(3) == 0 {
				return
			}
			cs := corev1.ContainerStatus{Name: name, AllocatedResources: maybe()}
			if rng.IntN(3) > 0 {
				cs.Resources = &corev1.ResourceRequirements{Requests: maybe(), Limits: maybe()}
			}
			if rng.IntN(2) == 0 {
				pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, cs)
			} else {
				pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, cs)
			}
		}
		for j, n := 0, 1+rng.IntN(3); j < n; j++ {
			name := fmt.Sprint("c", j)
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: maybe(), Limits: maybe()}})
			status(name)
		}
		for j, n := 0, rng.IntN(3); j < n; j++ {
			name := fmt.Sprint("i", j)
			c := corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: maybe(), Limits: maybe()}}
			if rng.IntN(2) == 0 {
				always := corev1.ContainerRestartPolicyAlways
				c.RestartPolicy = &always
			}
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
			status(name)
		}
		if rng.IntN(4) == 0 {
			reason := []string{corev1.PodReasonInfeasible, corev1.PodReasonDeferred}[rng.IntN(2)]
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: reason}}
		}
		if got, want := ChargedRequests(pod), resourcehelper.PodRequests(pod, opts); !quota.Equals(got, want) {
			t.Fatalf("pod %d requests %v, component-helpers %v\n%+v", i, got, want, pod)
		}
		if got, want := ChargedLimits(pod), resourcehelper.PodLimits(pod, opts); !quota.Equals(got, want) {
			t.Fatalf("pod %d limits %v, component-helpers %v\n%+v", i, got, want, pod)
		}
	}
}
