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

// ClusterRoleBinding is the strategy of clusterrolebindings.
type ClusterRoleBinding struct{}

// Default sets upstream's defaults.
func (ClusterRoleBinding) Default(obj runtime.Object) {
	defaults.ClusterRoleBinding(obj.(*rbacv1.ClusterRoleBinding))
}

// Validate returns upstream's errors for a new object.
func (ClusterRoleBinding) Validate(obj runtime.Object) field.ErrorList {
	return validation.ClusterRoleBinding(obj.(*rbacv1.ClusterRoleBinding))
}

// ValidateUpdate returns upstream's errors for an update.
func (ClusterRoleBinding) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.ClusterRoleBindingUpdate(obj.(*rbacv1.ClusterRoleBinding), old.(*rbacv1.ClusterRoleBinding))
}

// ConvertToTable prints upstream's columns.
func (ClusterRoleBinding) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.ClusterRoleBindingPrinter().Convert(objs, now, include, false)
}
