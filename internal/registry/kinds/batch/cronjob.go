package batch

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// CronJob is the strategy of cronjobs.
type CronJob struct{}

// Default sets upstream's defaults.
func (CronJob) Default(obj runtime.Object) { defaults.CronJob(obj.(*batchv1.CronJob)) }

// Validate returns upstream's errors for a new object.
func (CronJob) Validate(obj runtime.Object) field.ErrorList {
	return validation.CronJob(obj.(*batchv1.CronJob))
}

// ValidateUpdate returns upstream's errors for an update.
func (CronJob) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.CronJobUpdate(obj.(*batchv1.CronJob), old.(*batchv1.CronJob))
}

// ConvertToTable prints upstream's columns.
func (CronJob) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.CronJobPrinter().Convert(objs, now, include, false)
}

// Warnings are upstream's warnings on create (validation.CronJobWarnings).
func (CronJob) Warnings(obj runtime.Object) []string {
	return validation.CronJobWarnings(obj.(*batchv1.CronJob), nil)
}

// UpdateWarnings are upstream's on update; none through /status.
func (CronJob) UpdateWarnings(subresource string, obj, old runtime.Object) []string {
	if subresource == "status" {
		return nil
	}
	return validation.CronJobWarnings(obj.(*batchv1.CronJob), old.(*batchv1.CronJob))
}

// StatusKeepsMetadata: a CronJob's /status write applies its metadata (labels,
// annotations, finalizers, owner references), as upstream's status strategy of the kind,
// which resets only the spec.
func (CronJob) StatusKeepsMetadata() bool { return true }
