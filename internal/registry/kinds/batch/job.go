package batch

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// Job is the strategy of jobs.
type Job struct{}

// Default sets upstream's defaults.
func (Job) Default(obj runtime.Object) { defaults.Job(obj.(*batchv1.Job)) }

// DefaultDeletePropagation: a Job deleted without a propagation policy orphans its pods
// (upstream's DefaultGarbageCollectionPolicy for batch/v1 Jobs).
func (Job) DefaultDeletePropagation() metav1.DeletionPropagation {
	return metav1.DeletePropagationOrphan
}

// Validate returns upstream's errors for a new object.
func (Job) Validate(obj runtime.Object) field.ErrorList { return validation.Job(obj.(*batchv1.Job)) }

// ValidateUpdate returns upstream's errors for an update.
func (Job) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.JobUpdate(obj.(*batchv1.Job), old.(*batchv1.Job))
}

// ConvertToTable prints upstream's columns.
func (Job) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.JobPrinter().Convert(objs, now, include, false)
}

// PrepareForCreate resets the status and generates the selector (upstream's
// generateSelector, unless manualSelector).
func (Job) PrepareForCreate(obj runtime.Object, _ auth.User, _ metav1.Time) {
	o := obj.(*batchv1.Job)
	o.Status = batchv1.JobStatus{}
	defaults.JobSelector(o)
}

// Fields adds upstream's job field labels.
func (Job) Fields(obj runtime.Object, set fields.Set) {
	set["status.successful"] = fmt.Sprint(obj.(*batchv1.Job).Status.Succeeded)
}

// FieldPath: status.successful is read from status.succeeded.
func (Job) FieldPath(label string) string {
	if label == "status.successful" {
		return "status.succeeded"
	}
	return ""
}

// ConvertFieldLabel is upstream's field label conversion of batch/v1 Jobs.
func (Job) ConvertFieldLabel(label, value string) (string, string, error) {
	switch label {
	case "metadata.name", "metadata.namespace", "status.successful":
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label %q not supported for Job", label)
}

// Warnings are upstream's warnings on create (validation.JobWarnings).
func (Job) Warnings(obj runtime.Object) []string {
	return validation.JobWarnings(obj.(*batchv1.Job), nil)
}

// UpdateWarnings are upstream's on update; none through /status.
func (Job) UpdateWarnings(subresource string, obj, old runtime.Object) []string {
	if subresource == "status" {
		return nil
	}
	return validation.JobWarnings(obj.(*batchv1.Job), old.(*batchv1.Job))
}

// StatusKeepsMetadata: a Job's /status write applies its metadata (labels,
// annotations, finalizers, owner references), as upstream's status strategy of the kind,
// which resets only the spec.
func (Job) StatusKeepsMetadata() bool { return true }
