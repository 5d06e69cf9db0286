package events

import (
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// Event is the strategy of events (events.k8s.io/v1, stored as core/v1 events).
type Event struct{}

// Validate returns upstream's errors for a new object.
func (Event) Validate(obj runtime.Object) field.ErrorList {
	return validation.EventV1(obj.(*eventsv1.Event))
}

// ValidateUpdate returns upstream's errors for an update.
func (Event) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.EventV1Update(obj.(*eventsv1.Event), old.(*eventsv1.Event))
}

// ConvertToTable prints upstream's columns.
func (Event) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.EventsV1Printer().Convert(objs, now, include, false)
}

// Fields adds upstream's field labels of events.k8s.io events.
func (Event) Fields(obj runtime.Object, set fields.Set) {
	o := obj.(*eventsv1.Event)
	r := o.Regarding
	for k, v := range map[string]string{"kind": r.Kind, "namespace": r.Namespace, "name": r.Name, "uid": string(r.UID),
		"apiVersion": r.APIVersion, "resourceVersion": r.ResourceVersion, "fieldPath": r.FieldPath} {
		set["regarding."+k] = v
	}
	set["reason"] = o.Reason
	set["reportingController"] = o.ReportingController
	set["type"] = o.Type
}
