package defaults

import (
	"math"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func boolPtr(v bool) *bool { return &v }

// Pre-1.27 label keys that Jobs still put on their pod templates.
const (
	legacyJobNameLabel       = "job-name"
	legacyControllerUIDLabel = "controller-uid"
)

// Job sets the defaults of a Job: completions and parallelism 1 (when both
// are unset), backoffLimit 6 (MaxInt32 with backoffLimitPerIndex), labels
// from the template, completionMode NonIndexed, suspend false, pod failure
// policy condition status True, podReplacementPolicy, manualSelector false,
// and the pod template defaults.
func Job(j *batchv1.Job) {
	sp := &j.Spec
	if sp.Completions == nil && sp.Parallelism == nil {
		sp.Completions = int32Ptr(1)
		sp.Parallelism = int32Ptr(1)
	}
	if sp.Parallelism == nil {
		sp.Parallelism = int32Ptr(1)
	}
	if sp.BackoffLimit == nil {
		if sp.BackoffLimitPerIndex != nil {
			sp.BackoffLimit = int32Ptr(math.MaxInt32)
		} else {
			sp.BackoffLimit = int32Ptr(6)
		}
	}
	if l := sp.Template.Labels; l != nil && len(j.Labels) == 0 {
		j.Labels = copyMap(l)
	}
	if sp.CompletionMode == nil {
		m := batchv1.NonIndexedCompletion
		sp.CompletionMode = &m
	}
	if sp.Suspend == nil {
		sp.Suspend = boolPtr(false)
	}
	if sp.PodFailurePolicy != nil {
		for _, rule := range sp.PodFailurePolicy.Rules {
			for i := range rule.OnPodConditions {
				if rule.OnPodConditions[i].Status == "" {
					rule.OnPodConditions[i].Status = corev1.ConditionTrue
				}
			}
		}
	}
	if sp.PodReplacementPolicy == nil {
		p := batchv1.TerminatingOrFailed
		if sp.PodFailurePolicy != nil {
			p = batchv1.Failed
		}
		sp.PodReplacementPolicy = &p
	}
	if sp.ManualSelector == nil {
		sp.ManualSelector = boolPtr(false)
	}
	PodSpec(&sp.Template.Spec)
}

// JobSelector is upstream's Job strategy step on create (generateSelector):
// unless spec.manualSelector is true, the template gets the job-name and
// controller-uid labels (legacy and batch.kubernetes.io/ forms) and the
// selector matches batch.kubernetes.io/controller-uid=<uid>. Labels the user
// set are kept; conflicts are left for validation. Call it after the name and
// UID are assigned. Upstream's later read-time defaulting copies the template
// labels to an unlabelled Job; JobSelector does that copy at once.
func JobSelector(j *batchv1.Job) {
	if j.Spec.ManualSelector != nil && *j.Spec.ManualSelector {
		return
	}
	t := &j.Spec.Template
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	for _, k := range []string{legacyJobNameLabel, batchv1.JobNameLabel} {
		if _, ok := t.Labels[k]; !ok {
			t.Labels[k] = j.Name
		}
	}
	for _, k := range []string{legacyControllerUIDLabel, batchv1.ControllerUidLabel} {
		if _, ok := t.Labels[k]; !ok {
			t.Labels[k] = string(j.UID)
		}
	}
	if j.Spec.Selector == nil {
		j.Spec.Selector = &metav1.LabelSelector{}
	}
	if j.Spec.Selector.MatchLabels == nil {
		j.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, ok := j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel]; !ok {
		j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] = string(j.UID)
	}
	if len(j.Labels) == 0 {
		j.Labels = copyMap(t.Labels)
	}
}

// CronJob sets the defaults of a CronJob: concurrencyPolicy Allow, suspend
// false, history limits 3 and 1, and the pod template defaults of the job
// template (the job template's own spec is not defaulted, as upstream).
func CronJob(c *batchv1.CronJob) {
	sp := &c.Spec
	if sp.ConcurrencyPolicy == "" {
		sp.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if sp.Suspend == nil {
		sp.Suspend = boolPtr(false)
	}
	if sp.SuccessfulJobsHistoryLimit == nil {
		sp.SuccessfulJobsHistoryLimit = int32Ptr(3)
	}
	if sp.FailedJobsHistoryLimit == nil {
		sp.FailedJobsHistoryLimit = int32Ptr(1)
	}
	PodSpec(&sp.JobTemplate.Spec.Template.Spec)
}
