package ttlafterfinished

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/controller/fake"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

var jobsGVR = batchv1.SchemeGroupVersion.WithResource("jobs")

func job(name string, ttl *int32, cond batchv1.JobConditionType, finishedAt time.Time) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
	j.Spec.TTLSecondsAfterFinished = ttl
	if cond != "" {
		j.Status.Conditions = []batchv1.JobCondition{{Type: cond, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(finishedAt)}}
	}
	return j
}

func newController(clk *clocktesting.FakeClock) (*Controller, *fake.Client) {
	fc := fake.New(clk)
	return New(fc, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{Clock: clk}), fc
}

// TestSync decides each Job on the time left: expired finished Jobs with a TTL are
// deleted (foreground: marked with the foregroundDeletion finalizer), others are kept and
// asked back when their TTL ends.
func TestSync(t *testing.T) {
	now := t0.Add(time.Hour)
	for _, tc := range []struct {
		name    string
		job     *batchv1.Job
		deleted bool
		requeue time.Duration
		wantErr bool
	}{
		{name: "complete, expired", job: job("a", ptr.To[int32](60), batchv1.JobComplete, now.Add(-61*time.Second)), deleted: true},
		{name: "failed, expired exactly now", job: job("a", ptr.To[int32](60), batchv1.JobFailed, now.Add(-60*time.Second)), deleted: true},
		{name: "ttl 0 deleted at once", job: job("a", ptr.To[int32](0), batchv1.JobComplete, now), deleted: true},
		{name: "not yet expired: asked back when it is", job: job("a", ptr.To[int32](60), batchv1.JobComplete, now.Add(-20*time.Second)), requeue: 40 * time.Second},
		{name: "finished in the future (skew): deferred", job: job("a", ptr.To[int32](10), batchv1.JobComplete, now.Add(time.Minute)), requeue: 70 * time.Second},
		{name: "no ttl", job: job("a", nil, batchv1.JobComplete, now.Add(-time.Hour))},
		{name: "unfinished", job: job("a", ptr.To[int32](0), "", now)},
		{name: "no transition time", job: job("a", ptr.To[int32](0), batchv1.JobComplete, time.Time{}), wantErr: true},
		{name: "already being deleted", job: func() *batchv1.Job {
			j := job("a", ptr.To[int32](0), batchv1.JobComplete, now.Add(-time.Hour))
			j.DeletionTimestamp = &metav1.Time{Time: now}
			j.Finalizers = []string{"example.com/x"}
			return j
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(now)
			c, fc := newController(clk)
			fc.Add(tc.job)
			requeue, err := c.Sync(context.Background(), "ns/a")
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if requeue != tc.requeue {
				t.Errorf("requeue %v, want %v", requeue, tc.requeue)
			}
			got := fc.Object(jobsGVR, "ns", "a").(*batchv1.Job)
			deleting := got.DeletionTimestamp != nil && tc.job.DeletionTimestamp == nil
			if deleting != tc.deleted {
				t.Fatalf("deleted %v, want %v", deleting, tc.deleted)
			}
			if tc.deleted && (len(got.Finalizers) != 1 || got.Finalizers[0] != metav1.FinalizerDeleteDependents) {
				t.Errorf("finalizers %v, want foreground deletion", got.Finalizers)
			}
		})
	}
	// A Job gone is nothing to do.
	c, _ := newController(clocktesting.NewFakeClock(now))
	if requeue, err := c.Sync(context.Background(), "ns/none"); err != nil || requeue != 0 {
		t.Errorf("missing job: %v %v", requeue, err)
	}
}

// TestStartDeletesWhenTTLEnds: a running controller deletes a finished Job once the clock
// passes its TTL, and not before.
func TestStartDeletesWhenTTLEnds(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c, fc := newController(clk)
	fc.Add(job("j", ptr.To[int32](100), batchv1.JobComplete, t0))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = c.Start(ctx) }()
	stamped := func() *metav1.Time {
		return fc.Object(jobsGVR, "ns", "j").(*batchv1.Job).DeletionTimestamp
	}
	// The clock moves a second at a time while the controller runs (it may look at the
	// Job at any of those times); the Job's deletion is stamped by the clock, so it shows
	// when the controller decided. The clock moves only once the controller's queue waits
	// on it (it has started), and a millisecond apart so that the controller runs between
	// steps; a controller slower than that on a loaded machine sees a later clock, which
	// the stamp shows too.
	deadline := time.Now().Add(30 * time.Second)
	for stamped() == nil {
		if time.Now().After(deadline) {
			t.Fatalf("job not deleted (clock at +%v)", clk.Since(t0))
		}
		if clk.HasWaiters() {
			clk.Step(time.Second)
		}
		time.Sleep(time.Millisecond)
	}
	if at := stamped().Time; at.Before(t0.Add(100 * time.Second)) {
		t.Errorf("deleted at +%v, before its TTL of 100s", at.Sub(t0))
	}
}
