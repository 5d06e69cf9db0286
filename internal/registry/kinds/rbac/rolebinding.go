package rbac

import (
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// RoleBinding is the strategy of rolebindings.
type RoleBinding struct{}

// Default sets upstream's defaults.
func (RoleBinding) Default(obj runtime.Object) { defaults.RoleBinding(obj.(*rbacv1.RoleBinding)) }

// Validate returns upstream's errors for a new object.
func (RoleBinding) Validate(obj runtime.Object) field.ErrorList {
	return validation.RoleBinding(obj.(*rbacv1.RoleBinding))
}

// ValidateUpdate returns upstream's errors for an update.
func (RoleBinding) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.RoleBindingUpdate(obj.(*rbacv1.RoleBinding), old.(*rbacv1.RoleBinding))
}

// ConvertToTable prints upstream's columns.
func (RoleBinding) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.RoleBindingPrinter().Convert(objs, now, include, false)
}
