package workloads

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

// Upstream's Job condition reasons and messages (k8s.io/api/batch/v1, job_controller.go).
const (
	jobReasonBackoffLimitExceeded = "BackoffLimitExceeded"
	jobMsgBackoffLimitExceeded    = "Job has reached the specified backoff limit"
	jobReasonDeadlineExceeded     = "DeadlineExceeded"
	jobMsgDeadlineExceeded        = "Job was active longer than specified deadline"
	jobReasonCompletionsReached   = "CompletionsReached"
	jobMsgCompletionsReached      = "Reached expected number of succeeded pods"
	defaultBackoffLimit           = 6
)

// Job is upstream's Job controller: it runs parallelism pods until completions succeed
// (NonIndexed and Indexed), counts Succeeded and Failed pods (phases set through
// pods/status), fails the Job past backoffLimit or activeDeadlineSeconds, honours suspend,
// and reports the SuccessCriteriaMet/Complete or FailureTarget/Failed conditions. Every pod
// it creates is charged to quota; a refusal is a FailedCreate event and a retry.
type Job struct {
	base
	// pods is the Jobs' pods (in detail: the completion index annotation, conditions,
	// container statuses) and the labelled orphans a selector may adopt, as views of the
	// shared pods; writes holds each Job's last pod write, which its next sync waits for.
	pods   *controller.PodSub
	writes controller.Revisions
}

// NewJob returns the Job controller (events from "job-controller").
func NewJob(store controller.Client, log *slog.Logger, opts Options) *Job {
	c := &Job{base: newBase(store, log, opts, "job", "job-controller")}
	c.pods = c.opts.Pods.Sub(detailedPods(jobKind))
	return c
}

// Start runs the controller until ctx ends.
func (c *Job) Start(ctx context.Context) error {
	c.rec.Start(ctx) // the event recorder stops with the controller
	c.owned(ctx, controller.NewQueue("job"), jobKind, jobGVR, c.subFeed(c.pods), func(obj runtime.Object, deleted bool) {
		if m, err := controller.Meta(obj); err == nil && deleted {
			c.writes.Forget(keyOf(m.GetNamespace(), m.GetName()))
		}
	}, c.sync)
	return nil
}

func jobFinished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func isIndexed(j *batchv1.Job) bool {
	return j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion
}

func completionIndex(p *corev1.Pod) int {
	v, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// sync is upstream's syncJob, without the pod tracking finalizer: counts come from the
// pods that exist and never go down.
func (c *Job) sync(ctx context.Context, key string) (time.Duration, error) {
	ns, name := splitKey(key)
	job, found, err := ownerOf[*batchv1.Job](ctx, &c.base, jobGVR, key)
	if !found {
		return 0, err
	}
	if jobFinished(job) {
		c.starved.set(key, false)
		return 0, nil
	}
	now := c.opts.Clock.Now()
	// 1. The Job's pods (adopting matching orphans when a selector is set), from the index
	// once it holds this Job's earlier writes; the writes of this sync are recorded.
	if err := c.writes.Await(ctx, c.pods, key); err != nil {
		return 0, err
	}
	store := c.writes.Tracked(c.store, c.store.Catalogue().Get(podGVR), key)
	var pods []*corev1.Pod
	if job.Spec.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
		if err != nil {
			return 0, nil
		}
		if pods, err = claimPods(ctx, store, c.log, job, job.ObjectMeta, jobKind, jobGVR, sel, claimable(c.pods, ns, job.UID, sel, controller.CachedPod, nil, true)); err != nil {
			return 0, err
		}
	} else {
		pods = cachedPods(c.pods.Controlled(ns, job.UID))
	}
	var active []*corev1.Pod
	var succeeded, failed, ready, terminating int32
	succeededIdx := map[int]bool{}
	for _, p := range pods {
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			succeeded++
			if ix := completionIndex(p); ix >= 0 {
				succeededIdx[ix] = true
			}
		case p.Status.Phase == corev1.PodFailed:
			failed++
		case p.DeletionTimestamp != nil:
			terminating++
		default:
			active = append(active, p)
			if isPodReady(p) {
				ready++
			}
		}
	}
	if isIndexed(job) {
		succeeded = int32(len(succeededIdx))
	}
	succeeded = max(succeeded, job.Status.Succeeded)
	failed = max(failed, job.Status.Failed)
	st := *job.Status.DeepCopy()
	suspended := job.Spec.Suspend != nil && *job.Spec.Suspend
	if st.StartTime == nil && !suspended {
		t := metav1.NewTime(now)
		st.StartTime = &t
	}
	// 2. Failure: past the backoff limit or the active deadline.
	backoffLimit := int32(defaultBackoffLimit)
	if job.Spec.BackoffLimit != nil {
		backoffLimit = *job.Spec.BackoffLimit
	}
	var failure *batchv1.JobCondition
	var requeue time.Duration
	switch {
	case failed > backoffLimit:
		failure = jobCondition(batchv1.JobFailureTarget, jobReasonBackoffLimitExceeded, jobMsgBackoffLimitExceeded, now)
	case job.Spec.ActiveDeadlineSeconds != nil && st.StartTime != nil && !suspended:
		deadline := st.StartTime.Add(time.Duration(*job.Spec.ActiveDeadlineSeconds) * time.Second)
		if !now.Before(deadline) {
			failure = jobCondition(batchv1.JobFailureTarget, jobReasonDeadlineExceeded, jobMsgDeadlineExceeded, now)
		} else {
			requeue = deadline.Sub(now)
		}
	}
	var manageErr error
	complete := false
	activeCount := int32(len(active))
	switch {
	case failure != nil:
		manageErr = deletePods(ctx, store, c.rec, job, active)
		if manageErr == nil {
			st.Conditions = append(st.Conditions, *failure)
			f := *failure
			f.Type = batchv1.JobFailed
			st.Conditions = append(st.Conditions, f)
			terminating += activeCount
			activeCount = 0
			ready = 0
		}
	case job.DeletionTimestamp == nil:
		activeCount, manageErr = c.manage(ctx, store, job, &st, active, succeeded, succeededIdx, suspended, now)
		if job.Spec.Completions == nil {
			complete = succeeded > 0 && activeCount == 0
		} else {
			complete = succeeded >= *job.Spec.Completions && activeCount == 0
		}
	}
	c.starved.set(key, manageErr != nil && isQuotaRefusal(manageErr))
	if complete {
		met := jobCondition(batchv1.JobSuccessCriteriaMet, jobReasonCompletionsReached, jobMsgCompletionsReached, now)
		st.Conditions = append(st.Conditions, *met)
		done := *met
		done.Type = batchv1.JobComplete
		st.Conditions = append(st.Conditions, done)
		t := metav1.NewTime(now)
		st.CompletionTime = &t
	}
	st.Active = activeCount
	st.Ready = &ready
	st.Terminating = &terminating
	st.Succeeded = succeeded
	st.Failed = failed
	if st.UncountedTerminatedPods == nil {
		st.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	if isIndexed(job) {
		st.CompletedIndexes = formatIndexes(succeededIdx)
	}
	if !apiequality.Semantic.DeepEqual(st, job.Status) {
		rv := job.ResourceVersion
		_, err := c.store.Update(ctx, c.store.Catalogue().Get(jobGVR), ns, name, "status", func(o runtime.Object) (runtime.Object, error) {
			cur, err := controller.As[*batchv1.Job](o)
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
		if err == nil {
			switch {
			case complete:
				c.rec.Event(ctx, job, corev1.EventTypeNormal, "Completed", "Job completed")
			case failure != nil && manageErr == nil:
				c.rec.Event(ctx, job, corev1.EventTypeWarning, failure.Reason, failure.Message)
			}
		}
	}
	if manageErr != nil {
		return 0, retryErr(manageErr)
	}
	return requeue, nil
}

func jobCondition(t batchv1.JobConditionType, reason, msg string, now time.Time) *batchv1.JobCondition {
	ts := metav1.NewTime(now)
	return &batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, LastProbeTime: ts, LastTransitionTime: ts, Reason: reason, Message: msg}
}

// manage is upstream's manageJob: it returns the number of active pods after its changes.
func (c *Job) manage(ctx context.Context, store controller.Client, job *batchv1.Job, st *batchv1.JobStatus, active []*corev1.Pod, succeeded int32, succeededIdx map[int]bool, suspended bool, now time.Time) (int32, error) {
	n := int32(len(active))
	if suspended {
		if setJobCondition(st, batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended", now) {
			c.rec.Event(ctx, job, corev1.EventTypeNormal, "Suspended", "Job suspended")
		}
		if err := deletePods(ctx, store, c.rec, job, active); err != nil {
			return n, err
		}
		return 0, nil
	}
	if setJobCondition(st, batchv1.JobSuspended, corev1.ConditionFalse, "JobResumed", "Job resumed", now) {
		c.rec.Event(ctx, job, corev1.EventTypeNormal, "Resumed", "Job resumed")
		t := metav1.NewTime(now)
		st.StartTime = &t
	}
	parallelism := int32(1)
	if job.Spec.Parallelism != nil {
		parallelism = *job.Spec.Parallelism
	}
	var want int32
	if job.Spec.Completions == nil {
		want = parallelism
		if succeeded > 0 {
			want = n
		}
	} else {
		want = min(*job.Spec.Completions-succeeded, parallelism)
		if want < 0 {
			want = 0
		}
	}
	if n > want {
		victims := append([]*corev1.Pod(nil), active...)
		sortPodsForDeletion(victims)
		if err := deletePods(ctx, store, c.rec, job, victims[:n-want]); err != nil {
			return n, err
		}
		return want, nil
	}
	diff := int(want - n)
	if diff == 0 {
		return n, nil
	}
	diff = min(diff, burstReplicas)
	ref := controllerRef(job, jobKind)
	// Each pod's generateName prefix: "<job>-", or "<job>-<index>-" for an index.
	type slot struct {
		prefix string
		index  int
	}
	var slots []slot
	if isIndexed(job) {
		busy := map[int]bool{}
		for _, p := range active {
			busy[completionIndex(p)] = true
		}
		for ix := 0; len(slots) < diff && job.Spec.Completions != nil && ix < int(*job.Spec.Completions); ix++ {
			if succeededIdx[ix] || busy[ix] {
				continue
			}
			slots = append(slots, slot{podsPrefix(fmt.Sprintf("%s-%d", job.Name, ix)), ix})
		}
	} else {
		for range diff {
			slots = append(slots, slot{podsPrefix(job.Name), -1})
		}
	}
	created, err := slowStartBatch(len(slots), slowStartInitialBatch, func(i int) error {
		t := job.Spec.Template.DeepCopy()
		if slots[i].index >= 0 {
			addCompletionIndex(t, job.Name, slots[i].index)
		}
		return createPod(ctx, store, c.rec, job, t, slots[i].prefix, ref)
	})
	return n + int32(created), err
}

// addCompletionIndex is upstream's addCompletionIndexEnvVariables and annotations.
func addCompletionIndex(t *corev1.PodTemplateSpec, jobName string, ix int) {
	v := strconv.Itoa(ix)
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[batchv1.JobCompletionIndexAnnotation] = v
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	t.Labels[batchv1.JobCompletionIndexAnnotation] = v
	if t.Spec.Hostname == "" {
		t.Spec.Hostname = fmt.Sprintf("%s-%d", jobName, ix)
	}
	env := corev1.EnvVar{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: fmt.Sprintf("metadata.labels['%s']", batchv1.JobCompletionIndexAnnotation)}}}
	for i := range t.Spec.InitContainers {
		t.Spec.InitContainers[i].Env = append(t.Spec.InitContainers[i].Env, env)
	}
	for i := range t.Spec.Containers {
		t.Spec.Containers[i].Env = append(t.Spec.Containers[i].Env, env)
	}
}

// setJobCondition is upstream's ensureJobConditionStatus: it reports a change. A False
// condition is only written over an existing one.
func setJobCondition(st *batchv1.JobStatus, t batchv1.JobConditionType, status corev1.ConditionStatus, reason, msg string, now time.Time) bool {
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status == status && c.Reason == reason && c.Message == msg {
			return false
		}
		ts := metav1.NewTime(now)
		c.Status, c.Reason, c.Message, c.LastProbeTime, c.LastTransitionTime = status, reason, msg, ts, ts
		return true
	}
	if status == corev1.ConditionFalse {
		return false
	}
	st.Conditions = append(st.Conditions, *jobCondition(t, reason, msg, now))
	return true
}

// formatIndexes renders completed indexes as upstream: "1,3-5,7".
func formatIndexes(set map[int]bool) string {
	ixs := make([]int, 0, len(set))
	for ix := range set {
		ixs = append(ixs, ix)
	}
	sort.Ints(ixs)
	var parts []string
	for i := 0; i < len(ixs); {
		j := i
		for j+1 < len(ixs) && ixs[j+1] == ixs[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(ixs[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ixs[i], ixs[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
