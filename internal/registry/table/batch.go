package table

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	batchv1beta1 "k8s.io/api/batch/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// ---- Job ----

func JobPrinter() Printer {
	return typedPrinter(batchv1.SchemeGroupVersion.WithKind("Job"), func() *batchv1.Job { return &batchv1.Job{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Status", Type: "string", Description: "Status of the job."},
				{Name: "Completions", Type: "string", Description: batchv1.JobStatus{}.SwaggerDoc()["succeeded"]},
				{Name: "Duration", Type: "string", Description: "Time required to complete the job."},
				ageColumn(),
				containersColumn(),
				imagesColumn(),
				{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
			}
		},
		func(j *batchv1.Job, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			var completions string
			if j.Spec.Completions != nil {
				completions = fmt.Sprintf("%d/%d", j.Status.Succeeded, *j.Spec.Completions)
			} else {
				parallelism := int32(0)
				if j.Spec.Parallelism != nil {
					parallelism = *j.Spec.Parallelism
				}
				if parallelism > 1 {
					completions = fmt.Sprintf("%d/1 of %d", j.Status.Succeeded, parallelism)
				} else {
					completions = fmt.Sprintf("%d/1", j.Status.Succeeded)
				}
			}
			var jobDuration string
			switch {
			case j.Status.StartTime == nil:
			case j.Status.CompletionTime == nil:
				jobDuration = duration.HumanDuration(now.Sub(j.Status.StartTime.Time))
			default:
				jobDuration = duration.HumanDuration(j.Status.CompletionTime.Sub(j.Status.StartTime.Time))
			}
			names, images := containerCells(j.Spec.Template.Spec.Containers)
			return []interface{}{
				j.Name, jobStatus(j), completions, jobDuration, since(j.CreationTimestamp, now),
				names, images, metav1.FormatLabelSelector(j.Spec.Selector),
			}, nil
		})
}

// jobStatus: Complete, Failed, Terminating, Suspended, FailureTarget, SuccessCriteriaMet,
// else Running.
func jobStatus(j *batchv1.Job) string {
	switch {
	case jobCondition(j, batchv1.JobComplete):
		return "Complete"
	case jobCondition(j, batchv1.JobFailed):
		return "Failed"
	case j.DeletionTimestamp != nil:
		return "Terminating"
	case jobCondition(j, batchv1.JobSuspended):
		return "Suspended"
	case jobCondition(j, batchv1.JobFailureTarget):
		return "FailureTarget"
	case jobCondition(j, batchv1.JobSuccessCriteriaMet):
		return "SuccessCriteriaMet"
	}
	return "Running"
}

// jobCondition reports whether the first condition of type t is True.
func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ---- CronJob ----

func CronJobPrinter() Printer {
	return typedPrinter(batchv1.SchemeGroupVersion.WithKind("CronJob"), func() *batchv1.CronJob { return &batchv1.CronJob{} },
		func() []metav1.TableColumnDefinition {
			sp := batchv1beta1.CronJobSpec{}.SwaggerDoc()
			st := batchv1beta1.CronJobStatus{}.SwaggerDoc()
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Schedule", Type: "string", Description: sp["schedule"]},
				{Name: "Timezone", Type: "string", Description: sp["timeZone"]},
				{Name: "Suspend", Type: "boolean", Description: sp["suspend"]},
				{Name: "Active", Type: "integer", Description: st["active"]},
				{Name: "Last Schedule", Type: "string", Description: st["lastScheduleTime"]},
				ageColumn(),
				containersColumn(),
				imagesColumn(),
				{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
			}
		},
		func(cj *batchv1.CronJob, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			lastSchedule := "<none>"
			if cj.Status.LastScheduleTime != nil {
				lastSchedule = since(*cj.Status.LastScheduleTime, now)
			}
			timeZone := "<none>"
			if cj.Spec.TimeZone != nil {
				timeZone = *cj.Spec.TimeZone
			}
			names, images := containerCells(cj.Spec.JobTemplate.Spec.Template.Spec.Containers)
			return []interface{}{
				cj.Name, cj.Spec.Schedule, timeZone, boolPtr(cj.Spec.Suspend), int64(len(cj.Status.Active)), lastSchedule, since(cj.CreationTimestamp, now),
				names, images, metav1.FormatLabelSelector(cj.Spec.JobTemplate.Spec.Selector),
			}, nil
		})
}

// boolPtr prints "True", "False" or "<unset>".
func boolPtr(b *bool) string {
	switch {
	case b == nil:
		return "<unset>"
	case *b:
		return "True"
	}
	return "False"
}
