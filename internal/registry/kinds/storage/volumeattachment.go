package storage

import (
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// VolumeAttachment is the strategy of volumeattachments.
type VolumeAttachment struct{}

// Validate returns upstream's errors for a new object.
func (VolumeAttachment) Validate(obj runtime.Object) field.ErrorList {
	return validation.VolumeAttachment(obj.(*storagev1.VolumeAttachment))
}

// ValidateUpdate returns upstream's errors for an update.
func (VolumeAttachment) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.VolumeAttachmentUpdate(obj.(*storagev1.VolumeAttachment), old.(*storagev1.VolumeAttachment))
}

// ConvertToTable prints upstream's columns.
func (VolumeAttachment) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.VolumeAttachmentPrinter().Convert(objs, now, include, false)
}
