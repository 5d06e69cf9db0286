package policy

import (
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// PodDisruptionBudget is the strategy of poddisruptionbudgets.
type PodDisruptionBudget struct{}

// Validate returns upstream's errors for a new object.
func (PodDisruptionBudget) Validate(obj runtime.Object) field.ErrorList {
	return validation.PodDisruptionBudget(obj.(*policyv1.PodDisruptionBudget))
}

// ValidateUpdate returns upstream's errors for an update.
func (PodDisruptionBudget) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.PodDisruptionBudgetUpdate(obj.(*policyv1.PodDisruptionBudget), old.(*policyv1.PodDisruptionBudget))
}

// ConvertToTable prints upstream's columns.
func (PodDisruptionBudget) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.PodDisruptionBudgetPrinter().Convert(objs, now, include, false)
}

// StatusKeepsMetadata: a PodDisruptionBudget's /status write applies its metadata (labels,
// annotations, finalizers, owner references), as upstream's status strategy of the kind,
// which resets only the spec.
func (PodDisruptionBudget) StatusKeepsMetadata() bool { return true }
