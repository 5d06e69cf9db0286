package table

import (
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/randfill"
)

// TestNetworkingNodeAutoscalingRandomObjectsNeverPanic prints random objects of the networking, node, coordination, autoscaling and pod template kinds.
func TestNetworkingNodeAutoscalingRandomObjectsNeverPanic(t *testing.T) {
	for _, k := range []runtime.Object{
		&corev1.PodTemplate{}, &corev1.ComponentStatus{}, &coordinationv1.Lease{}, &networkingv1.NetworkPolicy{}, &networkingv1.Ingress{},
		&networkingv1.IngressClass{}, &nodev1.RuntimeClass{}, &autoscalingv2.HorizontalPodAutoscaler{}, &autoscalingv1.HorizontalPodAutoscaler{}, &eventsv1.Event{},
	} {
		for seed := int64(0); seed < 40; seed++ {
			obj := k.DeepCopyObject()
			randfill.NewWithSeed(seed).NilChance(0.3).NumElements(0, 3).MaxDepth(10).Fill(obj)
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("%T seed %d panicked: %v", obj, seed, r)
					}
				}()
				if _, err := Convert([]runtime.Object{obj}, time.Now(), metav1.IncludeObject, false); err != nil {
					t.Errorf("%T seed %d: %v", obj, seed, err)
				}
			}()
		}
	}
}
