package workloads

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/registry/validation"
)

// nextScheduleDelta is upstream's margin after a schedule time before syncing again.
const nextScheduleDelta = 100 * time.Millisecond

// CronJob is upstream's CronJob controller (v2): it creates a Job named
// <cronjob>-<scheduled minutes since epoch> at each schedule time, keeps status.active,
// lastScheduleTime and lastSuccessfulTime, applies concurrencyPolicy, suspend,
// startingDeadlineSeconds and the history limits. A Job refused by quota
// (count/jobs.batch) is a FailedCreate event and is retried for the same schedule time,
// so a runaway CronJob stops at the quota.
type CronJob struct {
	base
	// jobs holds the Jobs CronJobs control (their metadata and status: cronJobChild),
	// indexed by controller; writes holds each CronJob's last Job write, which its next
	// sync waits for.
	jobs   *controller.Index
	writes controller.Revisions
}

// NewCronJob returns the CronJob controller (events from "cronjob-controller"). Its work
// queue, schedule and timestamps run on opts.Clock.
func NewCronJob(store controller.Client, log *slog.Logger, opts Options) *CronJob {
	return &CronJob{base: newBase(store, log, opts, "cronjob", "cronjob-controller"), jobs: controller.NewIndex(func(obj runtime.Object) runtime.Object {
		j, ok := obj.(*batchv1.Job)
		if !ok {
			return nil
		}
		if ref := metav1.GetControllerOf(j); ref == nil || ref.Kind != cronJobKind.Kind || ref.APIVersion != cronJobKind.GroupVersion().String() {
			return nil
		}
		return cronJobChild(j)
	})}
}

// cronJobChild is what the CronJob controller reads of its Jobs: their metadata and
// status (finished or not, when).
func cronJobChild(j *batchv1.Job) *batchv1.Job {
	c := &batchv1.Job{ObjectMeta: j.ObjectMeta, Status: j.Status}
	c.ManagedFields = nil
	return c
}

// Start runs the controller until ctx ends.
func (c *CronJob) Start(ctx context.Context) error {
	c.rec.Start(ctx) // the event recorder stops with the controller
	q := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 30*time.Second),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "cronjob", Clock: c.opts.Clock},
	)
	c.owned(ctx, q, cronJobKind, cronJobGVR, c.indexFeed(jobGVR, c.jobs), func(obj runtime.Object, deleted bool) {
		if m, err := controller.Meta(obj); err == nil && deleted {
			c.writes.Forget(keyOf(m.GetNamespace(), m.GetName()))
		}
	}, c.sync)
	return nil
}

func (c *CronJob) sync(ctx context.Context, key string) (time.Duration, error) {
	ns, name := splitKey(key)
	cat := c.store.Catalogue()
	cj, found, err := ownerOf[*batchv1.CronJob](ctx, &c.base, cronJobGVR, key)
	if !found {
		return 0, err
	}
	orig := cj.Status.DeepCopy()
	// Its Jobs, from the index once it holds this CronJob's earlier Job writes.
	if err := c.writes.Await(ctx, c.jobs, key); err != nil {
		return 0, err
	}
	var jobs []*batchv1.Job
	for _, o := range c.jobs.Controlled(ns, cj.UID) {
		if j, ok := o.(*batchv1.Job); ok {
			jobs = append(jobs, j)
		}
	}
	requeue, syncErr := c.syncCronJob(ctx, cj, jobs)
	c.starved.set(key, syncErr != nil && isQuotaRefusal(syncErr))
	if cj.DeletionTimestamp == nil {
		c.cleanupFinishedJobs(ctx, cj, jobs)
	}
	if !apiequality.Semantic.DeepEqual(*orig, cj.Status) {
		st := *cj.Status.DeepCopy()
		rv := cj.ResourceVersion
		_, err := c.store.Update(ctx, cat.Get(cronJobGVR), ns, name, "status", func(o runtime.Object) (runtime.Object, error) {
			cur, err := controller.As[*batchv1.CronJob](o)
			if err != nil {
				return nil, err
			}
			cur.ResourceVersion = rv
			cur.Status = st
			return cur, nil
		}, registry.WriteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return 0, err
		}
	}
	if syncErr != nil {
		return 0, retryErr(syncErr)
	}
	if requeue != nil && *requeue > 0 {
		return *requeue, nil
	}
	return 0, nil
}

func jobFinishedCondition(j *batchv1.Job) (bool, batchv1.JobConditionType) {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true, c.Type
		}
	}
	return false, ""
}

func inActive(cj *batchv1.CronJob, uid types.UID) bool {
	for _, r := range cj.Status.Active {
		if r.UID == uid {
			return true
		}
	}
	return false
}

func removeActive(cj *batchv1.CronJob, uid types.UID) {
	var keep []corev1.ObjectReference
	for _, r := range cj.Status.Active {
		if r.UID != uid {
			keep = append(keep, r)
		}
	}
	cj.Status.Active = keep
}

// syncCronJob is upstream's syncCronJob; it changes cj.Status in memory.
func (c *CronJob) syncCronJob(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) (*time.Duration, error) {
	now := c.opts.Clock.Now()
	cat := c.store.Catalogue()
	// 1. Reconcile the active list with the Jobs that exist.
	children := map[types.UID]bool{}
	for _, j := range jobs {
		children[j.UID] = true
		found := inActive(cj, j.UID)
		finished, cond := jobFinishedCondition(j)
		switch {
		case !found && !finished:
			c.rec.Eventf(ctx, cj, corev1.EventTypeWarning, "UnexpectedJob", "Saw a job that the controller did not create or forgot: %s", j.Name)
		case found && finished:
			removeActive(cj, j.UID)
			c.rec.Eventf(ctx, cj, corev1.EventTypeNormal, "SawCompletedJob", "Saw completed job: %s, condition: %v", j.Name, cond)
		}
		if finished && cond == batchv1.JobComplete && j.Status.CompletionTime != nil {
			if cj.Status.LastSuccessfulTime == nil || j.Status.CompletionTime.After(cj.Status.LastSuccessfulTime.Time) {
				t := *j.Status.CompletionTime
				cj.Status.LastSuccessfulTime = &t
			}
		}
	}
	for _, r := range append([]corev1.ObjectReference(nil), cj.Status.Active...) {
		if children[r.UID] {
			continue
		}
		_, err := c.store.Get(ctx, cat.Get(jobGVR), r.Namespace, r.Name)
		switch {
		case apierrors.IsNotFound(err):
			c.rec.Eventf(ctx, cj, corev1.EventTypeNormal, "MissingJob", "Active job went missing: %v", r.Name)
			removeActive(cj, r.UID)
		case err != nil:
			return nil, err
		}
	}
	if cj.DeletionTimestamp != nil {
		return nil, nil
	}
	// 2. Time zone, suspend, schedule.
	if cj.Spec.TimeZone != nil {
		if _, err := time.LoadLocation(*cj.Spec.TimeZone); err != nil {
			c.rec.Eventf(ctx, cj, corev1.EventTypeWarning, "UnknownTimeZone", "invalid timeZone: %q: %s", *cj.Spec.TimeZone, err)
			return nil, nil
		}
	}
	if cj.Spec.Suspend != nil && *cj.Spec.Suspend {
		return nil, nil
	}
	sched, err := validation.ParseCron(c.formatSchedule(ctx, cj))
	if err != nil {
		c.rec.Eventf(ctx, cj, corev1.EventTypeWarning, "UnparseableSchedule", "unparseable schedule: %q : %s", cj.Spec.Schedule, err)
		return nil, nil
	}
	scheduled, err := c.nextScheduleTime(ctx, cj, now, sched)
	if err != nil {
		c.rec.Eventf(ctx, cj, corev1.EventTypeWarning, "InvalidSchedule", "invalid schedule: %s : %s", cj.Spec.Schedule, err)
		return nil, nil
	}
	if scheduled == nil {
		return nextScheduleTimeDuration(cj, now, sched), nil
	}
	if cj.Spec.StartingDeadlineSeconds != nil && scheduled.Add(time.Duration(*cj.Spec.StartingDeadlineSeconds)*time.Second).Before(now) {
		c.rec.Eventf(ctx, cj, corev1.EventTypeWarning, "MissSchedule", "Missed scheduled time to start a job: %s", scheduled.UTC().Format(time.RFC1123Z))
		return nextScheduleTimeDuration(cj, now, sched), nil
	}
	jobName := cronJobName(cj, *scheduled)
	for _, r := range cj.Status.Active {
		if r.Name == jobName {
			return nextScheduleTimeDuration(cj, now, sched), nil
		}
	}
	if cj.Status.LastScheduleTime != nil && cj.Status.LastScheduleTime.Time.Equal(*scheduled) {
		return nextScheduleTimeDuration(cj, now, sched), nil
	}
	// 3. Concurrency policy.
	if cj.Spec.ConcurrencyPolicy == batchv1.ForbidConcurrent && len(cj.Status.Active) > 0 {
		c.rec.Eventf(ctx, cj, corev1.EventTypeNormal, "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid")
		return nextScheduleTimeDuration(cj, now, sched), nil
	}
	if cj.Spec.ConcurrencyPolicy == batchv1.ReplaceConcurrent {
		for _, r := range append([]corev1.ObjectReference(nil), cj.Status.Active...) {
			obj, err := c.store.Get(ctx, cat.Get(jobGVR), r.Namespace, r.Name)
			if err != nil {
				c.rec.Eventf(ctx, cj, corev1.EventTypeWarning, "FailedGet", "Get job: %v", err)
				return nil, err
			}
			j, err := controller.As[*batchv1.Job](obj)
			if err != nil {
				return nil, err
			}
			if !c.deleteJob(ctx, cj, j) {
				return nil, fmt.Errorf("could not replace job %s/%s", r.Namespace, r.Name)
			}
		}
	}
	// 4. The Job of this schedule time, named after it so that it is created once.
	job, err := jobFromTemplate(cj, *scheduled)
	if err != nil {
		return nil, err
	}
	res, err := c.store.Create(ctx, cat.Get(jobGVR), cj.Namespace, job, registry.WriteOptions{})
	if err == nil {
		c.writes.Wrote(keyOf(cj.Namespace, cj.Name), res.Object)
	}
	var created *batchv1.Job
	switch {
	case isNamespaceTerminating(err):
		return nil, err
	case apierrors.IsAlreadyExists(err):
		cur, gerr := c.store.Get(ctx, cat.Get(jobGVR), cj.Namespace, job.Name)
		if gerr != nil {
			return nil, gerr
		}
		if created, err = controller.As[*batchv1.Job](cur); err != nil {
			return nil, err
		}
		if !metav1.IsControlledBy(created, cj) || inActive(cj, created.UID) {
			return nil, nil
		}
		c.log.Info("job already exists", "cronjob", cj.Namespace+"/"+cj.Name, "job", job.Name)
	case err != nil:
		c.rec.Eventf(ctx, cj, corev1.EventTypeWarning, "FailedCreate", "Error creating job: %v", err)
		return nil, err
	default:
		if created, err = controller.As[*batchv1.Job](res.Object); err != nil {
			return nil, err
		}
		c.rec.Eventf(ctx, cj, corev1.EventTypeNormal, "SuccessfulCreate", "Created job %v", created.Name)
	}
	cj.Status.Active = append(cj.Status.Active, corev1.ObjectReference{
		Kind: jobKind.Kind, Namespace: created.Namespace, Name: created.Name, UID: created.UID,
		APIVersion: jobKind.GroupVersion().String(), ResourceVersion: created.ResourceVersion,
	})
	t := metav1.NewTime(*scheduled)
	cj.Status.LastScheduleTime = &t
	return nextScheduleTimeDuration(cj, now, sched), nil
}

// formatSchedule is upstream's: spec.timeZone becomes a TZ= prefix.
func (c *CronJob) formatSchedule(ctx context.Context, cj *batchv1.CronJob) string {
	if strings.Contains(cj.Spec.Schedule, "TZ") {
		c.rec.Eventf(ctx, cj, corev1.EventTypeWarning, "UnsupportedSchedule", "CRON_TZ or TZ used in schedule %q is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details", cj.Spec.Schedule)
		return cj.Spec.Schedule
	}
	if cj.Spec.TimeZone != nil {
		if _, err := time.LoadLocation(*cj.Spec.TimeZone); err != nil {
			return cj.Spec.Schedule
		}
		return fmt.Sprintf("TZ=%s %s", *cj.Spec.TimeZone, cj.Spec.Schedule)
	}
	return cj.Spec.Schedule
}

// cronJobName is upstream's getJobName.
func cronJobName(cj *batchv1.CronJob, scheduled time.Time) string {
	return fmt.Sprintf("%s-%d", cj.Name, scheduled.Unix()/60)
}

// jobFromTemplate is upstream's getJobFromTemplate2.
func jobFromTemplate(cj *batchv1.CronJob, scheduled time.Time) (*batchv1.Job, error) {
	tz := ""
	if cj.Spec.TimeZone != nil {
		tz = *cj.Spec.TimeZone
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, err
	}
	ann := copyMap(cj.Spec.JobTemplate.Annotations)
	if ann == nil {
		ann = map[string]string{}
	}
	ann[batchv1.CronJobScheduledTimestampAnnotation] = scheduled.In(loc).Format(time.RFC3339)
	labels := copyMap(cj.Spec.JobTemplate.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Labels: labels, Annotations: ann, Name: cronJobName(cj, scheduled),
			OwnerReferences: []metav1.OwnerReference{*controllerRef(cj, cronJobKind)},
		},
	}
	cj.Spec.JobTemplate.Spec.DeepCopyInto(&job.Spec)
	return job, nil
}

type missed int

const (
	noneMissed missed = iota
	fewMissed
	manyMissed
)

// mostRecentScheduleTime is upstream's.
func mostRecentScheduleTime(cj *batchv1.CronJob, now time.Time, s *validation.CronSchedule, includeDeadline bool) (time.Time, *time.Time, missed, error) {
	earliest := cj.CreationTimestamp.Time
	if cj.Status.LastScheduleTime != nil {
		earliest = cj.Status.LastScheduleTime.Time
	}
	if includeDeadline && cj.Spec.StartingDeadlineSeconds != nil {
		deadline := now.Add(-time.Second * time.Duration(*cj.Spec.StartingDeadlineSeconds))
		if deadline.After(earliest) {
			earliest = deadline
		}
	}
	t1 := s.Next(earliest)
	t2 := s.Next(t1)
	if now.Before(t1) {
		return earliest, nil, noneMissed, nil
	}
	if now.Before(t2) {
		return earliest, &t1, noneMissed, nil
	}
	between := int64(t2.Sub(t1).Round(time.Second).Seconds())
	if between < 1 {
		return earliest, nil, noneMissed, fmt.Errorf("time difference between two schedules is less than 1 second")
	}
	elapsed := int64(now.Sub(t1).Seconds())
	n := elapsed/between + 1
	recent := time.Unix(t1.Unix()+(n-1)*between, 0).In(now.Location())
	m := noneMissed
	switch {
	case n > 100:
		m = manyMissed
	case n > 1:
		m = fewMissed
	}
	if recent.IsZero() {
		return earliest, nil, m, nil
	}
	return earliest, &recent, m, nil
}

// nextScheduleTime is upstream's: the most recent unmet schedule time, or nil.
func (c *CronJob) nextScheduleTime(ctx context.Context, cj *batchv1.CronJob, now time.Time, s *validation.CronSchedule) (*time.Time, error) {
	_, recent, m, err := mostRecentScheduleTime(cj, now, s, true)
	if recent == nil || recent.After(now) {
		return nil, err
	}
	if m == manyMissed {
		c.rec.Eventf(ctx, cj, corev1.EventTypeWarning, "TooManyMissedTimes", "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
	}
	return recent, err
}

// nextScheduleTimeDuration is upstream's: how long until the next schedule time.
func nextScheduleTimeDuration(cj *batchv1.CronJob, now time.Time, s *validation.CronSchedule) *time.Duration {
	earliest, recent, m, err := mostRecentScheduleTime(cj, now, s, false)
	if err != nil {
		return nil
	}
	if recent == nil {
		if m != noneMissed {
			return nil
		}
		recent = &earliest
	}
	d := s.Next(*recent).Add(nextScheduleDelta).Sub(now)
	return &d
}

// deleteJob is upstream's: delete the Job (background) and drop it from the active list.
func (c *CronJob) deleteJob(ctx context.Context, cj *batchv1.CronJob, j *batchv1.Job) bool {
	bg := metav1.DeletePropagationBackground
	uid := j.UID
	res, err := c.store.Delete(ctx, c.store.Catalogue().Get(jobGVR), j.Namespace, j.Name, metav1.DeleteOptions{
		PropagationPolicy: &bg, Preconditions: &metav1.Preconditions{UID: &uid},
	}, registry.WriteOptions{})
	if err == nil && res != nil {
		c.writes.Wrote(keyOf(cj.Namespace, cj.Name), res.Object)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		c.rec.Eventf(ctx, cj, corev1.EventTypeWarning, "FailedDelete", "Deleted job: %v", err)
		return false
	}
	removeActive(cj, j.UID)
	c.rec.Eventf(ctx, cj, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted job %v", j.Name)
	return true
}

// cleanupFinishedJobs is upstream's: keep the history limits of finished Jobs.
func (c *CronJob) cleanupFinishedJobs(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) {
	if cj.Spec.FailedJobsHistoryLimit == nil && cj.Spec.SuccessfulJobsHistoryLimit == nil {
		return
	}
	var ok, failed []*batchv1.Job
	for _, j := range jobs {
		fin, cond := jobFinishedCondition(j)
		switch {
		case fin && cond == batchv1.JobComplete:
			ok = append(ok, j)
		case fin && cond == batchv1.JobFailed:
			failed = append(failed, j)
		}
	}
	if cj.Spec.SuccessfulJobsHistoryLimit != nil {
		c.removeOldest(ctx, cj, ok, *cj.Spec.SuccessfulJobsHistoryLimit)
	}
	if cj.Spec.FailedJobsHistoryLimit != nil {
		c.removeOldest(ctx, cj, failed, *cj.Spec.FailedJobsHistoryLimit)
	}
}

func (c *CronJob) removeOldest(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job, limit int32) {
	n := len(jobs) - int(limit)
	if n <= 0 {
		return
	}
	sort.SliceStable(jobs, func(i, j int) bool {
		a, b := jobs[i].Status.StartTime, jobs[j].Status.StartTime
		switch {
		case a == nil && b != nil:
			return false
		case a != nil && b == nil:
			return true
		case a == nil && b == nil || a.Equal(b):
			return jobs[i].Name < jobs[j].Name
		}
		return a.Before(b)
	})
	for i := 0; i < n; i++ {
		c.deleteJob(ctx, cj, jobs[i])
	}
}
