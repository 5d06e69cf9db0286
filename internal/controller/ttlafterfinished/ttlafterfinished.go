package ttlafterfinished

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

// Options configure the controller.
type Options struct {
	// Clock tells the time and delays the queue (nil: the real clock).
	Clock  clock.WithTicker
	Panics controller.PanicObserver
	// Workers is the number of Jobs handled at once (0: 5, kube-controller-manager's
	// --concurrent-ttl-after-finished-syncs default).
	Workers int
}

// Controller deletes finished Jobs once their TTL has passed.
type Controller struct {
	store controller.Client
	log   *slog.Logger
	loop  *controller.Loop
	opts  Options
	queue workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller.
func New(store controller.Client, log *slog.Logger, opts Options) *Controller {
	if log == nil {
		log = slog.Default()
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Workers <= 0 {
		opts.Workers = 5
	}
	q := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 1000*time.Second),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "ttl_jobs_to_delete", Clock: opts.Clock},
	)
	return &Controller{store: store, log: log, opts: opts, queue: q,
		loop: controller.NewLoop("ttlafterfinished", store, log, opts.Panics, opts.Clock)}
}

func (c *Controller) jobs() *registry.Resource {
	return c.store.Catalogue().Get(batchv1.SchemeGroupVersion.WithResource("jobs"))
}

// Start runs the controller until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	go c.loop.Watch(ctx, c.jobs(), controller.On(func(j *batchv1.Job, deleted bool) {
		if !deleted && j.DeletionTimestamp == nil && needsCleanup(j) {
			c.queue.Add(j.Namespace + "/" + j.Name)
		}
	}))
	c.loop.Process(ctx, c.queue, c.opts.Workers, c.Sync)
	return nil
}

// Sync handles one Job (namespace/name): 1. read it from storage; 2. decide whether its
// TTL has passed; 3. delete it, foreground, guarded by its UID. A Job not yet expired
// is asked back when its TTL ends (requeue).
func (c *Controller) Sync(ctx context.Context, key string) (time.Duration, error) {
	ns, name, err := splitKey(key)
	if err != nil {
		return 0, nil
	}
	job, requeue, err := c.expired(ctx, ns, name)
	if job == nil || err != nil {
		return requeue, err
	}
	policy := metav1.DeletePropagationForeground
	uid := job.UID
	_, err = c.store.Delete(ctx, c.jobs(), ns, name, metav1.DeleteOptions{PropagationPolicy: &policy, Preconditions: &metav1.Preconditions{UID: &uid}}, registry.WriteOptions{})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err == nil {
		c.log.Debug("Cleaning up Job", "job", key)
	}
	return 0, err
}

// expired reads the Job and returns it when its TTL has passed (nil when it is gone,
// being deleted, unfinished or without a TTL), or the time left.
func (c *Controller) expired(ctx context.Context, ns, name string) (*batchv1.Job, time.Duration, error) {
	obj, err := c.store.Get(ctx, c.jobs(), ns, name)
	if apierrors.IsNotFound(err) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	job, err := controller.As[*batchv1.Job](obj)
	if err != nil {
		return nil, 0, err
	}
	if job.DeletionTimestamp != nil || !needsCleanup(job) {
		return nil, 0, nil
	}
	left, err := c.timeLeft(job)
	if err != nil {
		return nil, 0, err
	}
	if left > 0 {
		return nil, left, nil
	}
	return job, 0, nil
}

// needsCleanup reports a finished Job with a TTL.
func needsCleanup(j *batchv1.Job) bool {
	return j.Spec.TTLSecondsAfterFinished != nil && finished(j)
}

// finished reports a Job with a Complete or Failed condition True.
func finished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// timeLeft is the Job's TTL less the time since it finished.
func (c *Controller) timeLeft(j *batchv1.Job) (time.Duration, error) {
	var finishAt metav1.Time
	found := false
	for _, cond := range j.Status.Conditions {
		if (cond.Type == batchv1.JobComplete || cond.Type == batchv1.JobFailed) && cond.Status == corev1.ConditionTrue {
			if cond.LastTransitionTime.IsZero() {
				return 0, fmt.Errorf("unable to find the time when the Job %s/%s finished", j.Namespace, j.Name)
			}
			finishAt, found = cond.LastTransitionTime, true
			break
		}
	}
	if !found {
		return 0, fmt.Errorf("unable to find the status of the finished Job %s/%s", j.Namespace, j.Name)
	}
	now := c.opts.Clock.Now()
	if finishAt.After(now) {
		c.log.Info("Warning: Found Job finished in the future. This is likely due to time skew in the cluster. Job cleanup will be deferred.", "job", j.Namespace+"/"+j.Name)
	}
	expireAt := finishAt.Add(time.Duration(*j.Spec.TTLSecondsAfterFinished) * time.Second)
	return expireAt.Sub(now), nil
}

func splitKey(key string) (string, string, error) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok {
		return "", "", fmt.Errorf("bad key %q", key)
	}
	return ns, name, nil
}
