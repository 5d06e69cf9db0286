package controller_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/controller/fake"
	"github.com/quotad/quotad/internal/registry"
)

func replicaSetPod(name string, owner types.UID) *corev1.Pod {
	t := true
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: owner, Controller: &t}}}}
}

// podNames names the pods, or their views, of a cache.
func podNames(objs []runtime.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.(interface{ GetName() string }).GetName())
	}
	return out
}

// WaitFor returns once the index is synced and at the revision; a sync's writes, tracked,
// are waited for by its next sync.
func TestIndexWaitsForTrackedWrites(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fc := fake.New(clocktesting.NewFakeClock(metav1.Now().Time))
	fc.Add(replicaSetPod("old", "rs1"))
	res := fc.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("pods"))
	x := controller.NewIndex(nil)
	loop := controller.NewLoop("test", fc, nil, nil, nil)
	// Before the watch runs, nothing is synced: a wait ends only with its context.
	short, stop := context.WithCancel(ctx)
	stop()
	if err := x.WaitFor(short, 0); err == nil {
		t.Fatal("WaitFor returned before the index was synced")
	}
	go loop.WatchIndex(ctx, res, x, nil)
	var writes controller.Revisions
	store := writes.Tracked(fc, res, "ns/rs")
	for _, name := range []string{"p1", "p2"} {
		if _, err := store.Create(ctx, res, "ns", replicaSetPod(name, "rs1"), registry.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.Delete(ctx, res, "ns", "old", metav1.DeleteOptions{}, registry.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := writes.Await(ctx, x, "ns/rs"); err != nil {
		t.Fatal(err)
	}
	if got := podNames(x.Controlled("ns", "rs1")); len(got) != 2 || got[0] != "p1" || got[1] != "p2" {
		t.Fatalf("after awaiting the writes: %v, want [p1 p2]", got)
	}
	if x.Revision() < fc.Revision() {
		t.Fatalf("index at %d, the client at %d", x.Revision(), fc.Revision())
	}
}

// A deletion whose event the watch missed (its revision compacted away while the watch
// was down) reaches OnChange and the handler once the index has started over from the
// current objects, before the index reports the revision reached.
func TestIndexDeliversLostDeletion(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fc := fake.New(nil)
	fc.Add(replicaSetPod("kept", "rs1"), replicaSetPod("lost", "rs1"))
	podsGVR := corev1.SchemeGroupVersion.WithResource("pods")
	var changes, handled []string
	x := controller.NewIndex(nil).OnChange(func(old, cur runtime.Object, deleted bool) {
		if deleted {
			changes = append(changes, cur.(*corev1.Pod).Name)
		}
	})
	go controller.NewLoop("test", fc, nil, nil, nil).WatchIndex(ctx, fc.Catalogue().Get(podsGVR), x, func(obj runtime.Object, deleted bool) {
		if deleted {
			handled = append(handled, obj.(*corev1.Pod).Name)
		}
	})
	if err := x.WaitFor(ctx, fc.Revision()); err != nil {
		t.Fatal(err)
	}
	fc.LoseDeletion(podsGVR, "ns", "lost")
	if err := x.WaitFor(ctx, fc.Revision()); err != nil {
		t.Fatal(err)
	}
	if got := podNames(x.List("ns")); len(got) != 1 || got[0] != "kept" {
		t.Fatalf("index holds %v after the relist, want [kept]", got)
	}
	if len(changes) != 1 || changes[0] != "lost" || len(handled) != 1 || handled[0] != "lost" {
		t.Fatalf("deletions: OnChange %v, handler %v; want [lost] each", changes, handled)
	}
}
