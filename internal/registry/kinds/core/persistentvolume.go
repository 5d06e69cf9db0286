package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// PersistentVolume is the strategy of persistentvolumes.
type PersistentVolume struct{}

// Default sets upstream's defaults.
func (PersistentVolume) Default(obj runtime.Object) {
	defaults.PersistentVolume(obj.(*corev1.PersistentVolume))
}

// Validate returns upstream's errors for a new object.
func (PersistentVolume) Validate(obj runtime.Object) field.ErrorList {
	return validation.PersistentVolume(obj.(*corev1.PersistentVolume))
}

// ValidateUpdate returns upstream's errors for an update.
func (PersistentVolume) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.PersistentVolumeUpdate(obj.(*corev1.PersistentVolume), old.(*corev1.PersistentVolume))
}

// ConvertToTable prints upstream's columns.
func (PersistentVolume) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.PVPrinter().Convert(objs, now, include, false)
}

// PrepareForCreate makes a new volume Pending since now.
func (PersistentVolume) PrepareForCreate(obj runtime.Object, _ auth.User, now metav1.Time) {
	obj.(*corev1.PersistentVolume).Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumePending, LastPhaseTransitionTime: &now}
}

// PrepareForUpdate is upstream's status strategy: a phase change written through /status
// records its time in status.lastPhaseTransitionTime, unless the writer set a new one.
func (PersistentVolume) PrepareForUpdate(obj, old runtime.Object, subresource string, now metav1.Time) {
	if subresource != "status" {
		return
	}
	pv, o := obj.(*corev1.PersistentVolume), old.(*corev1.PersistentVolume)
	if pv.Status.Phase == o.Status.Phase {
		return
	}
	if t := pv.Status.LastPhaseTransitionTime; t != nil && !t.Equal(o.Status.LastPhaseTransitionTime) {
		return
	}
	pv.Status.LastPhaseTransitionTime = &now
}

// StatusKeepsMetadata: a PersistentVolume's /status write applies its metadata (labels,
// annotations, finalizers, owner references), as upstream's status strategy of the kind,
// which resets only the spec.
func (PersistentVolume) StatusKeepsMetadata() bool { return true }
