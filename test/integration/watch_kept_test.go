package integration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestQuotaWatchKeepsPreviousValues: the watch hub of ResourceQuota keeps every quota's
// value itself instead of having etcd send the previous one, so it must know a quota's
// previous state exactly as etcd would: updates are MODIFIED (not ADDED), a quota leaving
// a label selector is DELETED, and a deletion carries the last state. The quota "old"
// exists before the server (and so the hub) starts, "new" is created while it runs.
func TestQuotaWatchKeepsPreviousValues(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "kept")
	quotas := s.Client.CoreV1().ResourceQuotas("kept")
	mkLabelled := func(name string) {
		t.Helper()
		q := &corev1.ResourceQuota{ObjectMeta: labelled(name, "a"), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")}}}
		if _, err := quotas.Create(ctx, q, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mkLabelled("old")
	s = s.Restart(t)
	quotas = s.Client.CoreV1().ResourceQuotas("kept")
	pods := s.Client.CoreV1().Pods("kept")

	list, err := quotas.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := quotas.Watch(ctx, metav1.ListOptions{LabelSelector: "t=a", ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	expect := func(typ watch.EventType, name, usedPods string) {
		t.Helper()
		ev := nextEvent(t, w)
		q, ok := ev.Object.(*corev1.ResourceQuota)
		if ev.Type != typ || !ok || q.Name != name {
			t.Fatalf("event %s %T, want %s of quota %s", ev.Type, ev.Object, typ, name)
		}
		if got := q.Status.Used[corev1.ResourcePods]; got.String() != usedPods {
			t.Fatalf("%s of quota %s: used pods %s, want %s", typ, name, got.String(), usedPods)
		}
	}
	relabel := func(name, team string) {
		t.Helper()
		patch := []byte(`{"metadata":{"labels":{"t":"` + team + `"}}}`)
		if _, err := quotas.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mkPod := func(name string) {
		t.Helper()
		if _, err := pods.Create(ctx, pod(name, "", ""), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	mkPod("p1")
	expect(watch.Modified, "old", "1")
	mkLabelled("new")
	expect(watch.Added, "new", "1")
	mkPod("p2")
	// One transaction charges both quotas; their events come in key order.
	expect(watch.Modified, "new", "2")
	expect(watch.Modified, "old", "2")
	relabel("old", "b")
	expect(watch.Deleted, "old", "2")
	mkPod("p3")
	expect(watch.Modified, "new", "3")
	relabel("old", "a")
	expect(watch.Added, "old", "3")
	if err := quotas.Delete(ctx, "new", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expect(watch.Deleted, "new", "3")
	mkPod("p4")
	expect(watch.Modified, "old", "4")
}
