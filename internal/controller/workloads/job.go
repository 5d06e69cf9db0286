package workloads

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
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
// pods/status), fails the Job past backoffLimit (or container restarts reaching it under
// restartPolicy OnFailure) or activeDeadlineSeconds, honours suspend, and applies the
// Job's policies as upstream (jobpolicy.go): podFailurePolicy (FailJob, Ignore, Count,
// FailIndex on exit codes and pod conditions), backoffLimitPerIndex with maxFailedIndexes
// and .status.failedIndexes, successPolicy. It writes the interim SuccessCriteriaMet or
// FailureTarget condition when the Job's end is decided and deletes its active pods, and
// the terminal Complete or Failed (same reason and message) once none of its pods is
// terminating. Every pod it creates is charged to quota; a refusal is a FailedCreate event
// and a retry.
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
	// 2. What the pods say: the counts, the succeeded and failed indexes, and the failed
	// pod of each index a replacement carries its failure counts from.
	indexed := isIndexed(job)
	completions := 0
	if job.Spec.Completions != nil {
		completions = int(*job.Spec.Completions)
	}
	perIndex := indexed && job.Spec.BackoffLimitPerIndex != nil
	var active, dying []*corev1.Pod
	var succeeded, failed, ready, terminating int32
	var succeededIxs, failedIxs []int
	var failJob *string
	replaced := map[int]*corev1.Pod{}
	for _, p := range pods {
		ix := completionIndex(p)
		if ix >= completions {
			ix = -1
		}
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			succeeded++
			if ix >= 0 {
				succeededIxs = append(succeededIxs, ix)
			}
		case p.Status.Phase == corev1.PodFailed:
			a := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p)
			if a.counts() {
				failed++
			}
			if a.action == batchv1.PodFailurePolicyActionFailJob && failJob == nil {
				failJob = &a.msg
			}
			if perIndex && ix >= 0 {
				if indexFailed(job, p) {
					failedIxs = append(failedIxs, ix)
				}
				if prev := replaced[ix]; prev == nil || failureTotal(prev) < failureTotal(p) {
					replaced[ix] = p
				}
			}
		case p.DeletionTimestamp != nil:
			terminating++
			dying = append(dying, p)
		default:
			active = append(active, p)
			if isPodReady(p) {
				ready++
			}
		}
	}
	var succeededIx, failedIx intervals
	if indexed {
		succeededIx = parseIntervals(job.Status.CompletedIndexes, completions).with(succeededIxs...)
		succeeded = int32(succeededIx.total())
	}
	if perIndex {
		if job.Status.FailedIndexes != nil {
			failedIx = parseIntervals(*job.Status.FailedIndexes, completions)
		}
		failedIx = failedIx.with(failedIxs...)
	}
	succeeded = max(succeeded, job.Status.Succeeded)
	failed = max(failed, job.Status.Failed)
	st := *job.Status.DeepCopy()
	suspended := job.Spec.Suspend != nil && *job.Spec.Suspend
	if st.StartTime == nil && !suspended {
		t := metav1.NewTime(now)
		st.StartTime = &t
	}
	// 3. Whether the Job is done, in upstream's order: a SuccessCriteriaMet or FailureTarget
	// condition already written, the pod failure policy's FailJob, the backoff limit (or
	// restarts past it under restartPolicy OnFailure), the active deadline, the failed
	// indexes, the success policy.
	var requeue time.Duration
	finished := trueCondition(job, batchv1.JobSuccessCriteriaMet)
	if finished == nil {
		finished = trueCondition(job, batchv1.JobFailureTarget)
	}
	if finished == nil && failJob != nil {
		finished = jobCondition(batchv1.JobFailureTarget, batchv1.JobReasonPodFailurePolicy, *failJob, now)
	}
	if finished == nil {
		backoffLimit := int32(defaultBackoffLimit)
		if job.Spec.BackoffLimit != nil {
			backoffLimit = *job.Spec.BackoffLimit
		}
		switch {
		case failed > backoffLimit || restartsPastLimit(job, pods, backoffLimit):
			finished = jobCondition(batchv1.JobFailureTarget, jobReasonBackoffLimitExceeded, jobMsgBackoffLimitExceeded, now)
		case job.Spec.ActiveDeadlineSeconds != nil && st.StartTime != nil && !suspended:
			deadline := st.StartTime.Add(time.Duration(*job.Spec.ActiveDeadlineSeconds) * time.Second)
			if !now.Before(deadline) {
				finished = jobCondition(batchv1.JobFailureTarget, jobReasonDeadlineExceeded, jobMsgDeadlineExceeded, now)
			} else {
				requeue = deadline.Sub(now)
			}
		}
	}
	if finished == nil && perIndex {
		switch n := failedIx.total(); {
		case job.Spec.MaxFailedIndexes != nil && n > int(*job.Spec.MaxFailedIndexes):
			finished = jobCondition(batchv1.JobFailureTarget, batchv1.JobReasonMaxFailedIndexesExceeded, jobMsgMaxFailedIndexesExceeded, now)
		case n > 0 && n+succeededIx.total() >= completions:
			finished = jobCondition(batchv1.JobFailureTarget, batchv1.JobReasonFailedIndexes, jobMsgFailedIndexes, now)
		}
	}
	if finished == nil && indexed {
		if msg, ok := matchSuccessPolicy(job.Spec.SuccessPolicy, completions, succeededIx); ok {
			finished = jobCondition(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonSuccessPolicy, msg, now)
		}
	}
	// 4. A finished Job's active pods are deleted; an unfinished one's are managed, and it
	// is complete once its completions succeeded with nothing active.
	var manageErr error
	activeCount := int32(len(active))
	switch {
	case finished != nil:
		if manageErr = deletePods(ctx, store, c.rec, job, active); manageErr != nil {
			finished = nil // not declared before every active pod is on its way out
		} else {
			terminating += activeCount
			activeCount, ready = 0, 0
		}
	case job.DeletionTimestamp == nil:
		activeCount, manageErr = c.manage(ctx, store, job, &st, active, succeeded, succeededIx, failedIx, replaced, dying, suspended, now)
		complete := succeeded > 0 && activeCount == 0
		if job.Spec.Completions != nil {
			complete = succeeded >= *job.Spec.Completions && activeCount == 0
		}
		if complete {
			finished = jobCondition(batchv1.JobSuccessCriteriaMet, jobReasonCompletionsReached, jobMsgCompletionsReached, now)
		}
	}
	c.starved.set(key, manageErr != nil && isQuotaRefusal(manageErr))
	// 5. The interim condition (SuccessCriteriaMet, FailureTarget) is written at once, the
	// terminal one (Complete, Failed, with the same reason and message) once no pod of the
	// Job is terminating, as upstream's enactJobFinished.
	var done *batchv1.JobCondition
	if finished != nil {
		if trueCondition(job, finished.Type) == nil {
			st.Conditions = append(st.Conditions, *finished)
		}
		if terminating == 0 {
			done = jobCondition(batchv1.JobComplete, finished.Reason, finished.Message, now)
			if finished.Type == batchv1.JobFailureTarget {
				done.Type = batchv1.JobFailed
			}
			setJobCondition(&st, done.Type, corev1.ConditionTrue, done.Reason, done.Message, now)
			if done.Type == batchv1.JobComplete {
				t := metav1.NewTime(now)
				st.CompletionTime = &t
			}
		}
	}
	st.Active = activeCount
	st.Ready = &ready
	st.Terminating = &terminating
	st.Succeeded = succeeded
	st.Failed = failed
	if st.UncountedTerminatedPods == nil {
		st.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	if indexed {
		st.CompletedIndexes = succeededIx.String()
	}
	if perIndex {
		s := failedIx.String()
		st.FailedIndexes = &s
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
		switch {
		case err != nil || done == nil:
		case done.Type == batchv1.JobComplete:
			c.rec.Event(ctx, job, corev1.EventTypeNormal, "Completed", "Job completed")
		default:
			c.rec.Event(ctx, job, corev1.EventTypeWarning, done.Reason, done.Message)
		}
	}
	if manageErr != nil {
		return 0, retryErr(manageErr)
	}
	return requeue, nil
}

// trueCondition is the Job's condition of type t when it is True.
func trueCondition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if c := &j.Status.Conditions[i]; c.Type == t && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

// restartsPastLimit is upstream's pastBackoffLimitOnFailure: under restartPolicy
// OnFailure, the container restarts of the pods still pending or running reaching the
// backoff limit.
func restartsPastLimit(job *batchv1.Job, pods []*corev1.Pod, limit int32) bool {
	if job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		return false
	}
	var n int32
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning && p.Status.Phase != corev1.PodPending {
			continue
		}
		for _, list := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
			for _, cs := range list {
				n += cs.RestartCount
			}
		}
	}
	return limit == 0 && n > 0 || limit > 0 && n >= limit
}

// failureTotal is the failures of a pod's index before it, counted and ignored.
func failureTotal(p *corev1.Pod) int32 {
	counted, ignored := indexFailureCounts(p)
	return counted + ignored
}

func jobCondition(t batchv1.JobConditionType, reason, msg string, now time.Time) *batchv1.JobCondition {
	ts := metav1.NewTime(now)
	return &batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, LastProbeTime: ts, LastTransitionTime: ts, Reason: reason, Message: msg}
}

// manage is upstream's manageJob: it returns the number of active pods after its changes.
//
// An Indexed Job's pending indexes are those neither succeeded, failed (backoffLimitPerIndex)
// nor active; the pod of an index that failed before carries the index's failure counts
// (upstream's annotations), from replaced, the failed pod of each index with the most.
// Under podReplacementPolicy Failed (the default with a podFailurePolicy) a pod still
// terminating (dying) is not replaced until it is gone or failed.
func (c *Job) manage(ctx context.Context, store controller.Client, job *batchv1.Job, st *batchv1.JobStatus, active []*corev1.Pod, succeeded int32, succeededIx, failedIx intervals, replaced map[int]*corev1.Pod, dying []*corev1.Pod, suspended bool, now time.Time) (int32, error) {
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
	onlyFailed := job.Spec.PodReplacementPolicy != nil && *job.Spec.PodReplacementPolicy == batchv1.Failed
	diff := int(want - n)
	if onlyFailed {
		diff -= len(dying)
	}
	if diff <= 0 {
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
		if onlyFailed {
			for _, p := range dying {
				busy[completionIndex(p)] = true
			}
		}
		for ix := 0; len(slots) < diff && job.Spec.Completions != nil && ix < int(*job.Spec.Completions); ix++ {
			if succeededIx.has(ix) || failedIx.has(ix) || busy[ix] {
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
		if ix := slots[i].index; ix >= 0 {
			addCompletionIndex(t, job.Name, ix)
			if job.Spec.BackoffLimitPerIndex != nil {
				counted, ignored := replacementFailureCounts(job, replaced[ix])
				t.Annotations[batchv1.JobIndexFailureCountAnnotation] = strconv.Itoa(int(counted))
				if ignored > 0 {
					t.Annotations[batchv1.JobIndexIgnoredFailureCountAnnotation] = strconv.Itoa(int(ignored))
				}
			}
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
