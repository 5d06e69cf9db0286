package integration

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
)

// TestPodGC: pod GC force-deletes the pods of a node that does not exist (a running one
// and one terminating gracefully, which its node will never confirm) and the terminated
// pods beyond the threshold; each pod's quota charge goes with the writes that end it.
func TestPodGC(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, func(c *server.Config) {
		c.PodGCCheckPeriod, c.PodGCQuarantine, c.TerminatedPodGCThreshold = 50*time.Millisecond, 200*time.Millisecond, 1
	})
	ctx := ctxT(t)
	mkNamespace(t, s, "gc")
	// "ghost" exists until the pods bound to it are in place (one of them terminating),
	// so pod GC cannot collect them before the test has made them.
	for _, node := range []string{"n1", "ghost"} {
		if _, err := s.Client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mkQuota(t, s, "gc", "q", map[string]string{"pods": "10", "count/pods": "10", "requests.cpu": "10"})
	pods := s.Client.CoreV1().Pods("gc")
	mk := func(name, node string, phase corev1.PodPhase) *corev1.Pod {
		t.Helper()
		p := podWith(name, rl("cpu", "1"), nil)
		p.Spec.NodeName = node
		p, err := pods.Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if phase != "" {
			p.Status.Phase = phase
			if p, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	mk("live", "n1", corev1.PodRunning)
	mk("done-a", "n1", corev1.PodSucceeded)
	mk("done-b", "n1", corev1.PodSucceeded)
	mk("orphan", "ghost", corev1.PodRunning)
	terminating := mk("orphan-terminating", "ghost", corev1.PodRunning)
	// Watched from before its graceful delete: the pod is terminating first, then pod GC
	// removes it once its node is gone (the quarantine is short here, so a read could miss
	// the first).
	w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=orphan-terminating", ResourceVersion: terminating.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := pods.Delete(ctx, "orphan-terminating", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](3600)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Client.CoreV1().Nodes().Delete(ctx, "ghost", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	sawTerminating := false
	for ev := range w.ResultChan() {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok {
			t.Fatalf("watch event %s: %v", ev.Type, ev.Object)
		}
		if ev.Type == watch.Deleted {
			break
		}
		if p.DeletionTimestamp != nil && ptr.Deref(p.DeletionGracePeriodSeconds, 0) == 3600 {
			sawTerminating = true
		}
	}
	if !sawTerminating {
		t.Error("orphan-terminating was not terminating with a grace period of 3600 s before pod GC removed it")
	}
	gone := func(name string) bool {
		_, err := pods.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}
	waitFor(t, func() bool { return gone("orphan") && gone("orphan-terminating") && gone("done-a") })
	for _, name := range []string{"live", "done-b"} {
		if gone(name) {
			t.Errorf("pod %s collected", name)
		}
	}
	expectUsed(t, s, "gc", "q", map[string]string{"pods": "1", "count/pods": "2", "requests.cpu": "1"})
}

// TestTTLAfterFinished: a Job with ttlSecondsAfterFinished 0 is deleted, with its pods,
// once it completes.
func TestTTLAfterFinished(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "ttl")
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "once"}, Spec: batchv1.JobSpec{
		TTLSecondsAfterFinished: ptr.To[int32](0),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
	}}
	keep := job.DeepCopy()
	keep.Name, keep.Spec.TTLSecondsAfterFinished = "kept", nil
	for _, j := range []*batchv1.Job{job, keep} {
		if _, err := s.Client.BatchV1().Jobs("ttl").Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Every pod the Jobs make succeeds.
	waitFor(t, func() bool {
		list, err := s.Client.CoreV1().Pods("ttl").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range list.Items {
			if p := &list.Items[i]; p.Status.Phase == corev1.PodPending {
				p.Status.Phase = corev1.PodSucceeded
				_, _ = s.Client.CoreV1().Pods("ttl").UpdateStatus(ctx, p, metav1.UpdateOptions{})
			}
		}
		_, err = s.Client.BatchV1().Jobs("ttl").Get(ctx, "once", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	// Its pods went first (foreground); the Job without a TTL stays.
	list, err := s.Client.CoreV1().Pods("ttl").List(ctx, metav1.ListOptions{LabelSelector: "job-name=once"})
	if err != nil || len(list.Items) != 0 {
		t.Errorf("pods of the deleted job: %v %v", list, err)
	}
	j, err := s.Client.BatchV1().Jobs("ttl").Get(ctx, "kept", metav1.GetOptions{})
	if err != nil || j.DeletionTimestamp != nil {
		t.Errorf("job without a TTL: %v %v", j, err)
	}
}
