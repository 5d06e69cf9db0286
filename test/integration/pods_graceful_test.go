package integration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/server/servertest"
)

// deletePodAnswer deletes a pod with grace seconds (nil: none) and returns the pod the
// server answered with (the marked pod of a graceful delete, the removed one otherwise).
func deletePodAnswer(t *testing.T, s *servertest.Server, ns, name string, grace *int64) *corev1.Pod {
	t.Helper()
	out := &corev1.Pod{}
	err := s.Client.CoreV1().RESTClient().Delete().Namespace(ns).Resource("pods").Name(name).
		Body(&metav1.DeleteOptions{GracePeriodSeconds: grace}).Do(context.Background()).Into(out)
	if err != nil {
		t.Fatalf("delete pod %s: %v", name, err)
	}
	return out
}

// TestGracefulPodDeletionQuota: a pod bound to a node is deleted gracefully and keeps its
// quota charge until a write ends its counting; that write carries the credit (the quota
// is written at the pod write's revision). status.used equals what the stored pods charge
// at every step (and the invariant checker runs at the end).
func TestGracefulPodDeletionQuota(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "gd")
	mkQuota(t, s, "gd", "q", map[string]string{"pods": "2", "count/pods": "5", "requests.cpu": "2"})
	pods := s.Client.CoreV1().Pods("gd")
	for _, name := range []string{"a", "b"} {
		p := podWith(name, rl("cpu", "1"), nil)
		p.Spec.NodeName = "node-1"
		p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](45)
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	full := map[string]string{"pods": "2", "count/pods": "2", "requests.cpu": "2"}
	expectUsed(t, s, "gd", "q", full)
	quotaRV := func() string {
		t.Helper()
		q, err := s.Client.CoreV1().ResourceQuotas("gd").Get(ctx, "q", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return q.ResourceVersion
	}

	// 1. A graceful delete marks the pod (terminationGracePeriodSeconds), answered with it.
	got := deletePodAnswer(t, s, "gd", "a", nil)
	if got.DeletionTimestamp == nil || ptr.Deref(got.DeletionGracePeriodSeconds, -1) != 45 {
		t.Fatalf("graceful delete answered deletionTimestamp %v grace %v, want set and 45", got.DeletionTimestamp, got.DeletionGracePeriodSeconds)
	}
	if d := got.DeletionTimestamp.Sub(got.CreationTimestamp.Time); d < 44e9 || d > 60e9 {
		t.Errorf("deletionTimestamp %v is not about now + 45s (created %v)", got.DeletionTimestamp, got.CreationTimestamp)
	}
	stored, err := pods.Get(ctx, "a", metav1.GetOptions{})
	if err != nil || stored.DeletionTimestamp == nil {
		t.Fatalf("terminating pod: %v, %v", stored, err)
	}
	expectUsed(t, s, "gd", "q", full)
	// Its charge still holds: a third pod is refused.
	_, err = pods.Create(ctx, podWith("c", rl("cpu", "1"), nil), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "c" is forbidden: exceeded quota: q, requested: pods=1,requests.cpu=1, used: pods=2,requests.cpu=2, limited: pods=2,requests.cpu=2`)

	// 2. A longer second delete changes nothing; a shorter one shortens it.
	if got := deletePodAnswer(t, s, "gd", "a", ptr.To[int64](100)); ptr.Deref(got.DeletionGracePeriodSeconds, -1) != 45 || got.ResourceVersion != stored.ResourceVersion {
		t.Errorf("longer delete: grace %v rv %s, want 45 and unchanged %s", got.DeletionGracePeriodSeconds, got.ResourceVersion, stored.ResourceVersion)
	}
	if got := deletePodAnswer(t, s, "gd", "a", ptr.To[int64](10)); ptr.Deref(got.DeletionGracePeriodSeconds, -1) != 10 ||
		!got.DeletionTimestamp.Time.Equal(stored.DeletionTimestamp.Add(-35e9)) {
		t.Errorf("shorter delete: grace %v at %v, want 10 at %v", got.DeletionGracePeriodSeconds, got.DeletionTimestamp, stored.DeletionTimestamp.Add(-35e9))
	}
	expectUsed(t, s, "gd", "q", full)

	// 3. The kubelet's status write on the terminating pod is not its deletion.
	stored, _ = pods.Get(ctx, "a", metav1.GetOptions{})
	stored.Status.Phase = corev1.PodRunning
	if _, err := pods.UpdateStatus(ctx, stored, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "a", metav1.GetOptions{}); err != nil {
		t.Fatalf("status write during the grace period removed the pod: %v", err)
	}
	expectUsed(t, s, "gd", "q", full)

	// 4. The node confirms with grace 0: removed, credited in that very transaction.
	gone := deletePodAnswer(t, s, "gd", "a", ptr.To[int64](0))
	if _, err := pods.Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("pod a after its node confirmed: %v", err)
	}
	expectUsed(t, s, "gd", "q", map[string]string{"pods": "1", "count/pods": "1", "requests.cpu": "1"})
	if rv := quotaRV(); rv != gone.ResourceVersion {
		t.Errorf("quota written at %s, the removal at %s: the credit is not in the removal's transaction", rv, gone.ResourceVersion)
	}

	// 5. b terminates gracefully; its node reports it Succeeded: credited by that status write.
	deletePodAnswer(t, s, "gd", "b", nil)
	expectUsed(t, s, "gd", "q", map[string]string{"pods": "1", "count/pods": "1", "requests.cpu": "1"})
	b, _ := pods.Get(ctx, "b", metav1.GetOptions{})
	b.Status.Phase = corev1.PodSucceeded
	b, err = pods.UpdateStatus(ctx, b, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "gd", "q", map[string]string{"pods": "0", "count/pods": "1", "requests.cpu": "0"})
	if rv := quotaRV(); rv != b.ResourceVersion {
		t.Errorf("quota written at %s, the terminal status at %s", rv, b.ResourceVersion)
	}
	gone = deletePodAnswer(t, s, "gd", "b", ptr.To[int64](0))
	expectUsed(t, s, "gd", "q", map[string]string{"pods": "0", "count/pods": "0", "requests.cpu": "0"})
	if rv := quotaRV(); rv != gone.ResourceVersion {
		t.Errorf("quota written at %s, b's removal at %s", rv, gone.ResourceVersion)
	}

	// 6. An unbound pod, and a terminal one, are removed at once.
	if _, err := pods.Create(ctx, podWith("u", rl("cpu", "1"), nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deletePodAnswer(t, s, "gd", "u", nil)
	if _, err := pods.Get(ctx, "u", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("unbound pod after delete: %v", err)
	}
	term := podWith("t", rl("cpu", "1"), nil)
	term.Spec.NodeName = "node-1"
	term, err = pods.Create(ctx, term, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	term.Status.Phase = corev1.PodFailed
	if _, err := pods.UpdateStatus(ctx, term, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deletePodAnswer(t, s, "gd", "t", nil)
	if _, err := pods.Get(ctx, "t", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("terminal pod after delete: %v", err)
	}
	expectUsed(t, s, "gd", "q", map[string]string{"pods": "0", "count/pods": "0", "requests.cpu": "0"})
}
