package validation

import (
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/convert"
)

// EventV1 validates an events.k8s.io/v1 Event on create: upstream validates the stored
// (core) form with the legacy rules, then the strict rules of events.k8s.io/v1. Paths name
// the core fields, as upstream's do.
func EventV1(in *eventsv1.Event) field.ErrorList {
	e := convert.EventToCore(in)
	errs := legacyEventV1(e)
	errs = append(errs, objectMeta(&e.ObjectMeta, true, nameIsDNSSubdomain, metaPath)...)
	errs = append(errs, eventSeries(e)...)
	if e.EventTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("eventTime"), ""))
	}
	if e.Type != corev1.EventTypeNormal && e.Type != corev1.EventTypeWarning {
		errs = append(errs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", e.Type)))
	}
	if !e.FirstTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("deprecatedFirstTimestamp"), "", "needs to be unset"))
	}
	if !e.LastTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("deprecatedLastTimestamp"), "", "needs to be unset"))
	}
	if e.Count != 0 {
		errs = append(errs, field.Invalid(field.NewPath("deprecatedCount"), "", "needs to be unset"))
	}
	if e.Source.Component != "" || e.Source.Host != "" {
		errs = append(errs, field.Invalid(field.NewPath("deprecatedSource"), "", "needs to be unset"))
	}
	return errs
}

// EventV1Update validates an update of an events.k8s.io/v1 Event: what describes the
// occurrence is immutable.
func EventV1Update(in, old *eventsv1.Event) field.ErrorList {
	n, o := convert.EventToCore(in), convert.EventToCore(old)
	errs := legacyEventV1(n)
	errs = append(errs, objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
	if !reflect.DeepEqual(n.Series, o.Series) {
		errs = append(errs, eventSeries(n)...)
	}
	for _, f := range []struct {
		name     string
		new, old interface{}
	}{
		{"involvedObject", n.InvolvedObject, o.InvolvedObject}, {"reason", n.Reason, o.Reason}, {"message", n.Message, o.Message},
		{"source", n.Source, o.Source}, {"firstTimestamp", n.FirstTimestamp, o.FirstTimestamp}, {"lastTimestamp", n.LastTimestamp, o.LastTimestamp},
		{"count", n.Count, o.Count}, {"type", n.Type, o.Type}, {"eventTime", n.EventTime, o.EventTime}, {"action", n.Action, o.Action},
		{"related", n.Related, o.Related}, {"reportingController", n.ReportingController, o.ReportingController},
		{"reportingInstance", n.ReportingInstance, o.ReportingInstance},
	} {
		errs = append(errs, immutable(f.new, f.old, field.NewPath(f.name))...)
	}
	return errs
}

// legacyEventV1 is upstream's legacyValidateEvent for a request of events.k8s.io/v1, which
// names the reporting controller by its internal name.
func legacyEventV1(e *corev1.Event) field.ErrorList {
	errs := legacyEvent(e)
	for _, err := range errs {
		if err.Field == "reportingComponent" {
			err.Field = "reportingController"
		}
	}
	return errs
}

func eventSeries(e *corev1.Event) field.ErrorList {
	if e.Series == nil {
		return nil
	}
	var errs field.ErrorList
	if e.Series.Count < 2 {
		errs = append(errs, field.Invalid(field.NewPath("series.count"), "", "should be at least 2"))
	}
	if e.Series.LastObservedTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("series.lastObservedTime"), ""))
	}
	return errs
}
