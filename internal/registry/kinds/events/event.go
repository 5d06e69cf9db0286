package events

import (
	"fmt"
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

// Fields adds the field labels of the core/v1 event an events.k8s.io event is stored as
// (upstream's ToSelectableFields of events): ConvertFieldLabel maps the selectors'
// events.k8s.io labels to those.
func (Event) Fields(obj runtime.Object, set fields.Set) {
	o := obj.(*eventsv1.Event)
	r := o.Regarding
	set["involvedObject.kind"] = r.Kind
	set["involvedObject.namespace"] = r.Namespace
	set["involvedObject.name"] = r.Name
	set["involvedObject.uid"] = string(r.UID)
	set["involvedObject.apiVersion"] = r.APIVersion
	set["involvedObject.resourceVersion"] = r.ResourceVersion
	set["involvedObject.fieldPath"] = r.FieldPath
	set["reason"] = o.Reason
	set["reportingComponent"] = o.ReportingController
	set["source"] = o.DeprecatedSource.Component
	set["type"] = o.Type
}

// eventLabels is upstream's mapping of events.k8s.io/v1 field labels to the core/v1
// event's.
var eventLabels = map[string]string{
	"reason":                    "reason",
	"regarding.kind":            "involvedObject.kind",
	"regarding.namespace":       "involvedObject.namespace",
	"regarding.name":            "involvedObject.name",
	"regarding.uid":             "involvedObject.uid",
	"regarding.apiVersion":      "involvedObject.apiVersion",
	"regarding.resourceVersion": "involvedObject.resourceVersion",
	"regarding.fieldPath":       "involvedObject.fieldPath",
	"reportingController":       "reportingComponent",
	"type":                      "type",
	"metadata.namespace":        "metadata.namespace",
	"metadata.name":             "metadata.name",
}

// ConvertFieldLabel is upstream's field label conversion of events.k8s.io/v1 Events: each
// label becomes the stored core/v1 event's.
func (Event) ConvertFieldLabel(label, value string) (string, string, error) {
	if l, ok := eventLabels[label]; ok {
		return l, value, nil
	}
	return "", "", fmt.Errorf("field label not supported: %s", label)
}
