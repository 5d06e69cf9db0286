package table

import (
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/registry/convert"
)

// converted wraps the printer of a stored version so that it also prints objects of type
// T (a version served from that storage), converting each first, as upstream prints every
// version from the one internal form.
func converted[T runtime.Object](base Printer, conv func(T) runtime.Object) Printer {
	cells := base.cells
	base.cells = func(obj runtime.Object, now time.Time) ([]interface{}, []metav1.TableRowCondition, error) {
		if t, ok := obj.(T); ok {
			return cells(conv(t), now)
		}
		return cells(obj, now)
	}
	return base
}

// EventsV1Printer prints events.k8s.io/v1 Events with the core Event columns.
func EventsV1Printer() Printer {
	p := converted(EventPrinter(), func(e *eventsv1.Event) runtime.Object { return convert.EventToCore(e) })
	p.gvk = eventsv1.SchemeGroupVersion.WithKind("Event")
	p.newObj = func() runtime.Object { return &eventsv1.Event{} }
	return p
}

// HPAAnyVersionPrinter prints autoscaling/v2 and autoscaling/v1 HorizontalPodAutoscalers.
func HPAAnyVersionPrinter() Printer {
	return converted(hpaPrinter(), func(h *autoscalingv1.HorizontalPodAutoscaler) runtime.Object { return convert.HPAToV2(h) })
}
