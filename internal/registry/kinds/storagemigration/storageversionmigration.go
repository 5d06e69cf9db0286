package storagemigration

import (
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// StorageVersionMigration is the strategy of storageversionmigrations.
type StorageVersionMigration struct{}

// Validate returns upstream's errors for a new object.
func (StorageVersionMigration) Validate(obj runtime.Object) field.ErrorList {
	return validation.StorageVersionMigration(obj.(*svmv1.StorageVersionMigration))
}

// ValidateUpdate returns upstream's errors for an update.
func (StorageVersionMigration) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.StorageVersionMigrationUpdate(obj.(*svmv1.StorageVersionMigration), old.(*svmv1.StorageVersionMigration))
}

// ConvertToTable prints upstream's columns.
func (StorageVersionMigration) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.StorageVersionMigrationPrinter().Convert(objs, now, include, false)
}

// ValidateSubresourceUpdate validates a write through /status with the status rules.
func (StorageVersionMigration) ValidateSubresourceUpdate(subresource string, obj, old runtime.Object) (field.ErrorList, bool) {
	if subresource != "status" {
		return nil, false
	}
	return validation.StorageVersionMigrationStatusUpdate(obj.(*svmv1.StorageVersionMigration), old.(*svmv1.StorageVersionMigration)), true
}
