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

// PersistentVolumeClaim is the strategy of persistentvolumeclaims.
type PersistentVolumeClaim struct{}

// Default sets upstream's defaults.
func (PersistentVolumeClaim) Default(obj runtime.Object) {
	defaults.PersistentVolumeClaim(obj.(*corev1.PersistentVolumeClaim))
}

// Validate returns upstream's errors for a new object.
func (PersistentVolumeClaim) Validate(obj runtime.Object) field.ErrorList {
	return validation.PersistentVolumeClaim(obj.(*corev1.PersistentVolumeClaim))
}

// ValidateUpdate returns upstream's errors for an update.
func (PersistentVolumeClaim) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.PersistentVolumeClaimUpdate(obj.(*corev1.PersistentVolumeClaim), old.(*corev1.PersistentVolumeClaim))
}

// ConvertToTable prints upstream's columns.
func (PersistentVolumeClaim) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.PVCPrinter().Convert(objs, now, include, false)
}

// PrepareForCreate makes a new claim Pending, with its data sources as upstream keeps them
// (defaults.PVCDataSources).
func (PersistentVolumeClaim) PrepareForCreate(obj runtime.Object, _ auth.User, _ metav1.Time) {
	c := obj.(*corev1.PersistentVolumeClaim)
	c.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}
	defaults.PVCDataSources(&c.Spec, nil)
}

// PrepareForUpdate keeps an update's data sources as upstream does (the store keeps the
// status of every write but /status).
func (PersistentVolumeClaim) PrepareForUpdate(obj, old runtime.Object, subresource string, _ metav1.Time) {
	if subresource == "" {
		defaults.PVCDataSources(&obj.(*corev1.PersistentVolumeClaim).Spec, &old.(*corev1.PersistentVolumeClaim).Spec)
	}
}

// StatusKeepsMetadata: a PersistentVolumeClaim's /status write applies its metadata (labels,
// annotations, finalizers, owner references), as upstream's status strategy of the kind,
// which resets only the spec.
func (PersistentVolumeClaim) StatusKeepsMetadata() bool { return true }
