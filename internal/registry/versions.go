package registry

import (
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/registry/convert"
	"github.com/quotad/quotad/internal/registry/kinds/autoscaling"
	"github.com/quotad/quotad/internal/registry/kinds/events"
)

// storedAs makes a resource another version of stored, converting with to and from.
func storedAs[T, S runtime.Object](stored *Resource, to func(T) S, from func(S) T) func(*Resource) {
	return func(r *Resource) {
		r.Storage = &StorageVersion{
			Resource: stored,
			ToStorage: func(obj runtime.Object) (runtime.Object, error) {
				t, ok := obj.(T)
				if !ok {
					return nil, fmt.Errorf("converting %T to the storage version of %s", obj, r.GVR)
				}
				return to(t), nil
			},
			FromStorage: func(obj runtime.Object) (runtime.Object, error) {
				s, ok := obj.(S)
				if !ok {
					return nil, fmt.Errorf("converting stored %T to %s", obj, r.GVR)
				}
				return from(s), nil
			},
		}
	}
}

// convertedVersions returns the versions upstream serves from another version's storage:
// events.k8s.io/v1 events (core/v1 events) and autoscaling/v1 horizontalpodautoscalers
// (autoscaling/v2 ones). stored holds the stored resources.
func convertedVersions(stored []*Resource) []*Resource {
	find := func(gv fmt.Stringer, plural string) *Resource {
		for _, r := range stored {
			if r.GVR.GroupVersion().String() == gv.String() && r.GVR.Resource == plural {
				return r
			}
		}
		panic("registry: no stored resource " + gv.String() + "/" + plural)
	}
	coreEvents := find(corev1.SchemeGroupVersion, "events")
	hpa := find(autoscalingv2.SchemeGroupVersion, "horizontalpodautoscalers")
	return []*Resource{
		builtin(eventsv1.SchemeGroupVersion, "events", "Event", true, eventsv1.Event{}, eventsv1.EventList{}, []string{"ev"}, events.Event{},
			storedAs(coreEvents, convert.EventToCore, convert.EventFromCore)),
		builtin(autoscalingv1.SchemeGroupVersion, "horizontalpodautoscalers", "HorizontalPodAutoscaler", true, autoscalingv1.HorizontalPodAutoscaler{}, autoscalingv1.HorizontalPodAutoscalerList{}, []string{"hpa"}, autoscaling.HorizontalPodAutoscalerV1{},
			withStatus, withAll, storedAs(hpa, convert.HPAToV2, convert.HPAToV1)),
	}
}
