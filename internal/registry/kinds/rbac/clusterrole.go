package rbac

import (
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// ClusterRole is the strategy of clusterroles.
type ClusterRole struct{}

// ConvertToTable prints upstream's columns.
func (ClusterRole) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.ClusterRolePrinter().Convert(objs, now, include, false)
}

// Validate returns upstream's errors for a new cluster role.
func (ClusterRole) Validate(obj runtime.Object) field.ErrorList {
	return validation.ClusterRole(obj.(*rbacv1.ClusterRole), false)
}

// ValidateUpdate returns upstream's errors for an update.
func (ClusterRole) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.ClusterRoleUpdate(obj.(*rbacv1.ClusterRole), old.(*rbacv1.ClusterRole))
}
