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

// Role is the strategy of roles.
type Role struct{}

// Validate returns upstream's errors for a new object.
func (Role) Validate(obj runtime.Object) field.ErrorList { return validation.Role(obj.(*rbacv1.Role)) }

// ValidateUpdate returns upstream's errors for an update.
func (Role) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.RoleUpdate(obj.(*rbacv1.Role), old.(*rbacv1.Role))
}

// ConvertToTable prints upstream's columns.
func (Role) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.RolePrinter().Convert(objs, now, include, false)
}
