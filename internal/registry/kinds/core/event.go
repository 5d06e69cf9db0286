package core

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// Event is the strategy of events.
type Event struct{}

// Validate returns upstream's errors for a new object.
func (Event) Validate(obj runtime.Object) field.ErrorList {
	return validation.Event(obj.(*corev1.Event))
}

// ValidateUpdate returns upstream's errors for an update.
func (Event) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.EventUpdate(obj.(*corev1.Event), old.(*corev1.Event))
}

// ConvertToTable prints upstream's columns.
func (Event) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.EventPrinter().Convert(objs, now, include, false)
}

// Fields adds upstream's event field labels.
func (Event) Fields(obj runtime.Object, set fields.Set) {
	o := obj.(*corev1.Event)
	set["involvedObject.kind"] = o.InvolvedObject.Kind
	set["involvedObject.namespace"] = o.InvolvedObject.Namespace
	set["involvedObject.name"] = o.InvolvedObject.Name
	set["involvedObject.uid"] = string(o.InvolvedObject.UID)
	set["involvedObject.apiVersion"] = o.InvolvedObject.APIVersion
	set["involvedObject.resourceVersion"] = o.InvolvedObject.ResourceVersion
	set["involvedObject.fieldPath"] = o.InvolvedObject.FieldPath
	set["reason"] = o.Reason
	set["reportingComponent"] = o.ReportingController
	set["source"] = o.Source.Component
	set["type"] = o.Type
}

// ConvertFieldLabel is upstream's field label conversion of v1 Events.
func (Event) ConvertFieldLabel(label, value string) (string, string, error) {
	switch label {
	case "involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type", "metadata.namespace", "metadata.name":
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label not supported: %s", label)
}
