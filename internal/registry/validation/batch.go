package validation

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Job limits of upstream batch validation.
const (
	maxParallelismForIndexedJob = 100000
	maxCompletionsForIndexedJob = 100000
	// maxCronJobNameLength leaves room for the 11-character suffix of the
	// Jobs a CronJob creates within a 63-character DNS-1035 label.
	maxCronJobNameLength = 52
)

var (
	supportedCompletionModes        = []string{string(batchv1.NonIndexedCompletion), string(batchv1.IndexedCompletion)}
	supportedPodReplacementPolicies = []string{string(batchv1.Failed), string(batchv1.TerminatingOrFailed)}
)

// Job validates a Job on create. Unless spec.manualSelector is true, the
// selector must be the generated one (defaults.JobSelector).
func Job(j *batchv1.Job) field.ErrorList {
	errs := objectMeta(&j.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	errs = append(errs, generatedSelector(j)...)
	return append(errs, jobSpecWithSelector(&j.Spec, field.NewPath("spec"))...)
}

// generatedSelector is upstream ValidateGeneratedSelector.
func generatedSelector(j *batchv1.Job) field.ErrorList {
	if j.Spec.ManualSelector != nil && *j.Spec.ManualSelector {
		return nil
	}
	if j.Spec.Selector == nil {
		return nil
	}
	var errs field.ErrorList
	if j.UID == "" {
		errs = append(errs, field.Required(metaPath.Child("uid"), ""))
	}
	tp := field.NewPath("spec").Child("template").Child("metadata")
	errs = append(errs, hasLabel(j.Spec.Template.ObjectMeta, tp, batchv1.ControllerUidLabel, string(j.UID))...)
	errs = append(errs, hasLabel(j.Spec.Template.ObjectMeta, tp, batchv1.JobNameLabel, j.Name)...)
	expected := labels.Set{batchv1.ControllerUidLabel: string(j.UID), batchv1.JobNameLabel: j.Name}
	if sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector); err == nil && !sel.Matches(expected) {
		errs = append(errs, field.Invalid(field.NewPath("spec").Child("selector"), j.Spec.Selector, "`selector` not auto-generated"))
	}
	return errs
}

// hasLabel is upstream ValidateHasLabel.
func hasLabel(m metav1.ObjectMeta, p *field.Path, key, want string) field.ErrorList {
	v, ok := m.Labels[key]
	if !ok {
		return field.ErrorList{field.Required(p.Child("labels").Key(key), fmt.Sprintf("must be '%s'", want))}
	}
	if v != want {
		return field.ErrorList{field.Invalid(p.Child("labels").Key(key), m.Labels, fmt.Sprintf("must be '%s'", want))}
	}
	return nil
}

func jobSpecWithSelector(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	errs := jobSpec(s, p)
	if s.Selector == nil {
		errs = append(errs, field.Required(p.Child("selector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(s.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
	}
	if sel, err := metav1.LabelSelectorAsSelector(s.Selector); err == nil && !sel.Matches(labels.Set(s.Template.Labels)) {
		errs = append(errs, field.Invalid(p.Child("template", "metadata", "labels"), s.Template.Labels, "`selector` does not match template `labels`"))
	}
	return errs
}

// jobSpec is upstream validateJobSpec (the rules shared with job templates).
func jobSpec(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Parallelism != nil {
		errs = append(errs, nonnegative(int64(*s.Parallelism), p.Child("parallelism"))...)
	}
	if s.Completions != nil {
		errs = append(errs, nonnegative(int64(*s.Completions), p.Child("completions"))...)
	}
	if s.ActiveDeadlineSeconds != nil {
		errs = append(errs, nonnegative(*s.ActiveDeadlineSeconds, p.Child("activeDeadlineSeconds"))...)
	}
	if s.BackoffLimit != nil {
		errs = append(errs, nonnegative(int64(*s.BackoffLimit), p.Child("backoffLimit"))...)
	}
	if s.TTLSecondsAfterFinished != nil {
		errs = append(errs, nonnegative(int64(*s.TTLSecondsAfterFinished), p.Child("ttlSecondsAfterFinished"))...)
	}
	if s.CompletionMode != nil {
		mode := *s.CompletionMode
		if mode != batchv1.NonIndexedCompletion && mode != batchv1.IndexedCompletion {
			errs = append(errs, field.NotSupported(p.Child("completionMode"), s.CompletionMode, supportedCompletionModes))
		}
		if mode == batchv1.IndexedCompletion {
			if s.Completions == nil {
				errs = append(errs, field.Required(p.Child("completions"), fmt.Sprintf("when completion mode is %s", batchv1.IndexedCompletion)))
			} else if *s.Completions > maxCompletionsForIndexedJob {
				errs = append(errs, field.Invalid(p.Child("completions"), s.Completions, fmt.Sprintf("must be less than or equal to %d when completion mode is %s", maxCompletionsForIndexedJob, batchv1.IndexedCompletion)))
			}
			if s.Parallelism != nil && *s.Parallelism > maxParallelismForIndexedJob {
				errs = append(errs, field.Invalid(p.Child("parallelism"), s.Parallelism, fmt.Sprintf("must be less than or equal to %d when completion mode is %s", maxParallelismForIndexedJob, batchv1.IndexedCompletion)))
			}
		}
	}
	if s.BackoffLimitPerIndex != nil {
		errs = append(errs, nonnegative(int64(*s.BackoffLimitPerIndex), p.Child("backoffLimitPerIndex"))...)
		if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
			errs = append(errs, field.Invalid(p.Child("backoffLimitPerIndex"), *s.BackoffLimitPerIndex, "requires indexed completion mode"))
		}
	}
	if s.MaxFailedIndexes != nil {
		errs = append(errs, nonnegative(int64(*s.MaxFailedIndexes), p.Child("maxFailedIndexes"))...)
		if s.BackoffLimitPerIndex == nil {
			errs = append(errs, field.Required(p.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"))
		}
	}
	if s.PodFailurePolicy != nil {
		errs = append(errs, podFailurePolicy(s, p.Child("podFailurePolicy"))...)
	}
	if s.SuccessPolicy != nil {
		errs = append(errs, successPolicy(s, p.Child("successPolicy"))...)
	}
	if s.PodReplacementPolicy != nil {
		pol := *s.PodReplacementPolicy
		if pol != batchv1.Failed && pol != batchv1.TerminatingOrFailed {
			errs = append(errs, field.NotSupported(p.Child("podReplacementPolicy"), s.PodReplacementPolicy, supportedPodReplacementPolicies))
		} else if s.PodFailurePolicy != nil && pol != batchv1.Failed {
			errs = append(errs, field.NotSupported(p.Child("podReplacementPolicy"), s.PodReplacementPolicy, []string{string(batchv1.Failed)}))
		}
	}
	tp := p.Child("template")
	errs = append(errs, podTemplateSpec(&s.Template, tp)...)
	return append(errs, jobRestartPolicy(s, p)...)
}

// JobUpdate validates an update of a Job: completions, selector,
// completionMode, podFailurePolicy, backoffLimitPerIndex, managedBy and
// successPolicy are immutable, and so is the template unless the Job is
// suspended and has never started (then only its scheduling directives
// may change).
func JobUpdate(n, o *batchv1.Job) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	p := field.NewPath("spec")
	errs = append(errs, jobSpecWithSelector(&n.Spec, p)...)
	ns, os := &n.Spec, &o.Spec
	if !elasticIndexedScale(ns, os) {
		errs = append(errs, immutable(ns.Completions, os.Completions, p.Child("completions"))...)
	}
	errs = append(errs, immutable(ns.Selector, os.Selector, p.Child("selector"))...)
	errs = append(errs, jobTemplateUpdate(n, o, p.Child("template"))...)
	errs = append(errs, immutable(ns.CompletionMode, os.CompletionMode, p.Child("completionMode"))...)
	errs = append(errs, immutable(ns.PodFailurePolicy, os.PodFailurePolicy, p.Child("podFailurePolicy"))...)
	errs = append(errs, immutable(ns.BackoffLimitPerIndex, os.BackoffLimitPerIndex, p.Child("backoffLimitPerIndex"))...)
	errs = append(errs, immutable(ns.ManagedBy, os.ManagedBy, p.Child("managedBy"))...)
	errs = append(errs, immutable(ns.SuccessPolicy, os.SuccessPolicy, p.Child("successPolicy"))...)
	return errs
}

// elasticIndexedScale reports an allowed completions change: an Indexed Job
// scaled with completions equal to parallelism before and after.
func elasticIndexedScale(n, o *batchv1.JobSpec) bool {
	if n.CompletionMode == nil || *n.CompletionMode != batchv1.IndexedCompletion {
		return false
	}
	eq := func(a, b *int32) bool { return a != nil && b != nil && *a == *b }
	return eq(n.Completions, n.Parallelism) && eq(o.Completions, o.Parallelism)
}

// jobTemplateUpdate is upstream's validatePodTemplateUpdate with 1.37's options: a suspended
// Job with no active pods that never started, or whose suspension took (a true Suspended
// condition), may change its scheduling directives (node affinity, node selector,
// tolerations, scheduling gates), its template's labels and annotations
// (MutableSchedulingDirectivesForSuspendedJobs) and its containers' resources
// (MutablePodResourcesForSuspendedJobs, checked on the pod spec alone); any other Job's
// template is immutable.
func jobTemplateUpdate(n, o *batchv1.Job, p *field.Path) field.ErrorList {
	nt := &n.Spec.Template
	ot := &o.Spec.Template
	suspended := o.Spec.Suspend != nil && *o.Spec.Suspend
	mutable := suspended && (o.Status.StartTime == nil || suspendedCondition(o)) && o.Status.Active == 0
	if mutable {
		ot = ot.DeepCopy()
		switch {
		case nt.Spec.Affinity == nil && ot.Spec.Affinity != nil:
			ot.Spec.Affinity.NodeAffinity = nil
			if *ot.Spec.Affinity == (corev1.Affinity{}) {
				ot.Spec.Affinity = nil
			}
		case nt.Spec.Affinity != nil && ot.Spec.Affinity == nil:
			ot.Spec.Affinity = &corev1.Affinity{NodeAffinity: nt.Spec.Affinity.NodeAffinity}
		case nt.Spec.Affinity != nil && ot.Spec.Affinity != nil:
			ot.Spec.Affinity.NodeAffinity = nt.Spec.Affinity.NodeAffinity
		}
		ot.Spec.NodeSelector = nt.Spec.NodeSelector
		ot.Spec.Tolerations = nt.Spec.Tolerations
		ot.Annotations = nt.Annotations
		ot.Labels = nt.Labels
		ot.Spec.SchedulingGates = nt.Spec.SchedulingGates
	}
	if !suspended || !mutable {
		return immutable(nt, ot, p)
	}
	// Only the containers' resources may change besides.
	old := ot.Spec.DeepCopy()
	for _, cs := range []struct{ n, o []corev1.Container }{{nt.Spec.Containers, old.Containers}, {nt.Spec.InitContainers, old.InitContainers}} {
		if len(cs.n) != len(cs.o) {
			continue
		}
		for i := range cs.n {
			if cs.o[i].Name == cs.n[i].Name {
				cs.o[i].Resources = cs.n[i].Resources
			}
		}
	}
	return immutable(nt.Spec, *old, p.Child("spec"))
}

// suspendedCondition reports a Job whose Suspended condition is true.
func suspendedCondition(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobSuspended && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// CronJob validates a CronJob on create.
func CronJob(c *batchv1.CronJob) field.ErrorList {
	errs := objectMeta(&c.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	if len(c.Name) > maxCronJobNameLength {
		errs = append(errs, field.Invalid(metaPath.Child("name"), c.Name, fmt.Sprintf("must be no more than %d characters", maxCronJobNameLength)))
	}
	return append(errs, cronJobSpec(&c.Spec, nil, field.NewPath("spec"))...)
}

// CronJobUpdate validates an update of a CronJob; a TZ in the schedule is
// tolerated only if the old schedule had one.
func CronJobUpdate(n, o *batchv1.CronJob) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	return append(errs, cronJobSpec(&n.Spec, &o.Spec, field.NewPath("spec"))...)
}

func cronJobSpec(s, old *batchv1.CronJobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Schedule == "" {
		errs = append(errs, field.Required(p.Child("schedule"), ""))
	} else {
		allowTZ := old != nil && strings.Contains(old.Schedule, "TZ")
		errs = append(errs, scheduleFormat(s.Schedule, allowTZ, s.TimeZone, p.Child("schedule"))...)
	}
	if s.StartingDeadlineSeconds != nil {
		errs = append(errs, nonnegative(*s.StartingDeadlineSeconds, p.Child("startingDeadlineSeconds"))...)
	}
	if old == nil || !semantic.DeepEqual(old.TimeZone, s.TimeZone) {
		errs = append(errs, timeZone(s.TimeZone, p.Child("timeZone"))...)
	}
	switch s.ConcurrencyPolicy {
	case batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent:
	case "":
		errs = append(errs, field.Required(p.Child("concurrencyPolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(p.Child("concurrencyPolicy"), s.ConcurrencyPolicy,
			[]string{string(batchv1.AllowConcurrent), string(batchv1.ForbidConcurrent), string(batchv1.ReplaceConcurrent)}))
	}
	jp := p.Child("jobTemplate")
	errs = append(errs, metav1validation.ValidateLabels(s.JobTemplate.Labels, jp.Child("metadata", "labels"))...)
	errs = append(errs, annotations(s.JobTemplate.Annotations, jp.Child("metadata", "annotations"))...)
	errs = append(errs, jobSpec(&s.JobTemplate.Spec, jp.Child("spec"))...)
	if s.JobTemplate.Spec.ManualSelector != nil && *s.JobTemplate.Spec.ManualSelector {
		errs = append(errs, field.NotSupported(jp.Child("spec", "manualSelector"), s.JobTemplate.Spec.ManualSelector, []string{"nil", "false"}))
	}
	// The history limits after the template, as upstream checks them.
	if s.SuccessfulJobsHistoryLimit != nil {
		errs = append(errs, nonnegative(int64(*s.SuccessfulJobsHistoryLimit), p.Child("successfulJobsHistoryLimit"))...)
	}
	if s.FailedJobsHistoryLimit != nil {
		errs = append(errs, nonnegative(int64(*s.FailedJobsHistoryLimit), p.Child("failedJobsHistoryLimit"))...)
	}
	return errs
}

func scheduleFormat(schedule string, allowTZ bool, tz *string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if _, err := ParseCron(schedule); err != nil {
		errs = append(errs, field.Invalid(p, schedule, err.Error()))
	}
	switch {
	case allowTZ && strings.Contains(schedule, "TZ") && tz != nil:
		errs = append(errs, field.Invalid(p, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
	case !allowTZ && strings.Contains(schedule, "TZ"):
		errs = append(errs, field.Invalid(p, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
	}
	return errs
}

var validTimeZoneCharacters = regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)

func timeZone(tz *string, p *field.Path) field.ErrorList {
	if tz == nil {
		return nil
	}
	if *tz == "" {
		return field.ErrorList{field.Invalid(p, tz, "timeZone must be nil or non-empty string")}
	}
	for _, part := range strings.Split(*tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !validTimeZoneCharacters.MatchString(part) {
			return field.ErrorList{field.Invalid(p, tz, fmt.Sprintf("unknown time zone %s", *tz))}
		}
	}
	if strings.EqualFold(*tz, "Local") {
		return field.ErrorList{field.Invalid(p, tz, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones")}
	}
	if _, err := time.LoadLocation(*tz); err != nil {
		return field.ErrorList{field.Invalid(p, tz, err.Error())}
	}
	return nil
}
