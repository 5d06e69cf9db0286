package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
)

// ResourceQuota is the strategy of resourcequotas.
type ResourceQuota struct{}

// Default sets upstream's defaults.
func (ResourceQuota) Default(obj runtime.Object) { defaults.ResourceQuota(obj.(*corev1.ResourceQuota)) }

// ConvertToTable prints upstream's columns.
func (ResourceQuota) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.ResourceQuotaPrinter().Convert(objs, now, include, false)
}

// PrepareForCreate resets the status: the store computes it in the create's transaction.
func (ResourceQuota) PrepareForCreate(obj runtime.Object, _ auth.User, _ metav1.Time) {
	obj.(*corev1.ResourceQuota).Status = corev1.ResourceQuotaStatus{}
}

// Validate returns upstream's errors for a new quota.
func (ResourceQuota) Validate(obj runtime.Object) field.ErrorList {
	return quota.ValidateResourceQuota(obj.(*corev1.ResourceQuota))
}

// ValidateUpdate returns upstream's errors for an update.
func (ResourceQuota) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return quota.ValidateResourceQuotaUpdate(obj.(*corev1.ResourceQuota), old.(*corev1.ResourceQuota))
}

// ValidateSubresourceUpdate validates a /status write as upstream does (the names and values
// of status.hard and status.used) before the store computes the status it keeps: a write of
// a negative or unknown usage is refused, not silently replaced.
func (ResourceQuota) ValidateSubresourceUpdate(subresource string, obj, old runtime.Object) (field.ErrorList, bool) {
	if subresource != "status" {
		return nil, false
	}
	return quota.ValidateResourceQuotaStatusUpdate(obj.(*corev1.ResourceQuota), old.(*corev1.ResourceQuota)), true
}

// Warnings are upstream's quota warnings and the crossed warn-at thresholds' texts.
func (ResourceQuota) Warnings(obj runtime.Object) []string {
	rq := obj.(*corev1.ResourceQuota)
	return append(quota.ResourceQuotaWarnings(rq), quota.WarnAtWarnings(rq.Annotations, rq.Spec.Hard)...)
}

// StatusKeepsMetadata: a ResourceQuota's /status write applies its metadata (labels,
// annotations, finalizers, owner references), as upstream's status strategy of the kind,
// which resets only the spec.
func (ResourceQuota) StatusKeepsMetadata() bool { return true }
