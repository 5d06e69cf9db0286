package apiregistration

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// APIService is the strategy of apiservices.
type APIService struct{}

// Default sets upstream's defaults.
func (APIService) Default(obj runtime.Object) {
	defaults.APIService(obj.(*apiregistrationv1.APIService))
}

// Validate returns upstream's errors for a new object.
func (APIService) Validate(obj runtime.Object) field.ErrorList {
	return validation.APIService(obj.(*apiregistrationv1.APIService))
}

// ValidateUpdate returns upstream's errors for an update.
func (APIService) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.APIServiceUpdate(obj.(*apiregistrationv1.APIService), old.(*apiregistrationv1.APIService))
}

// ConvertToTable prints upstream's columns.
func (APIService) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.APIServicePrinter().Convert(objs, now, include, false)
}

// PrepareForCreate resets the status and marks a local APIService available, as
// kube-aggregator's strategy does.
func (APIService) PrepareForCreate(obj runtime.Object, _ auth.User, now metav1.Time) {
	a := obj.(*apiregistrationv1.APIService)
	a.Status = apiregistrationv1.APIServiceStatus{}
	if a.Spec.Service != nil {
		return
	}
	a.Status.Conditions = []apiregistrationv1.APIServiceCondition{{Type: apiregistrationv1.Available, Status: apiregistrationv1.ConditionTrue,
		LastTransitionTime: now, Reason: "Local", Message: "Local APIServices are always available"}}
}
