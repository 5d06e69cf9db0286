package networking

import (
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// Ingress is the strategy of ingresses.
type Ingress struct{}

// Validate returns upstream's errors for a new object.
func (Ingress) Validate(obj runtime.Object) field.ErrorList {
	return validation.Ingress(obj.(*networkingv1.Ingress))
}

// ValidateUpdate returns upstream's errors for an update.
func (Ingress) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.IngressUpdate(obj.(*networkingv1.Ingress), old.(*networkingv1.Ingress))
}

// ConvertToTable prints upstream's columns.
func (Ingress) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.IngressPrinter().Convert(objs, now, include, false)
}

// Warnings are upstream's ingress warnings.
func (Ingress) Warnings(obj runtime.Object) []string {
	return validation.IngressWarnings(obj.(*networkingv1.Ingress))
}

// StatusKeepsMetadata: a Ingress's /status write applies its metadata (labels,
// annotations, finalizers, owner references), as upstream's status strategy of the kind,
// which resets only the spec.
func (Ingress) StatusKeepsMetadata() bool { return true }
