package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

func ownedPod(name string, owner types.UID) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}
	if owner != "" {
		t := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: owner, Controller: &t}}
	}
	return p
}

func names(objs []runtime.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.(named).GetName())
	}
	return out
}

// The index keeps what keep returns, by controller UID; an object keep refuses, or whose
// controller changes, leaves its old place.
func TestIndexByController(t *testing.T) {
	x := NewIndex(func(o runtime.Object) runtime.Object {
		if o.(*corev1.Pod).Labels["skip"] != "" {
			return nil
		}
		return ViewOf(o.(*corev1.Pod))
	})
	h := x.Feed(nil)
	h(ownedPod("b", "rs1"), false)
	h(ownedPod("a", "rs1"), false)
	h(ownedPod("o", ""), false)
	h(ownedPod("c", "rs2"), false)
	if got := names(x.Controlled("ns", "rs1")); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("controlled by rs1: %v", got)
	}
	if got := names(x.Controlled("ns", "")); len(got) != 1 || got[0] != "o" {
		t.Fatalf("orphans: %v", got)
	}
	// Released by rs1: an orphan now.
	h(ownedPod("a", ""), false)
	if got := names(x.Controlled("ns", "rs1")); len(got) != 1 || got[0] != "b" {
		t.Fatalf("controlled by rs1 after a release: %v", got)
	}
	if got := names(x.Controlled("ns", "")); len(got) != 2 {
		t.Fatalf("orphans after a release: %v", got)
	}
	// No longer kept.
	skipped := ownedPod("c", "rs2")
	skipped.Labels = map[string]string{"skip": "1"}
	h(skipped, false)
	if x.Get("ns", "c") != nil || len(x.Controlled("ns", "rs2")) != 0 {
		t.Fatal("an object keep refuses is still held")
	}
	h(ownedPod("b", "rs1"), true)
	if got := names(x.List("")); len(got) != 2 || got[0] != "a" || got[1] != "o" {
		t.Fatalf("after a deletion: %v", got)
	}
}

// A start-over from the current objects removes what was held and is not listed again,
// delivering its deletion, as an informer's relist.
func TestIndexRelistDeliversMissedDeletions(t *testing.T) {
	var deleted []string
	x := NewIndex(nil)
	h := x.Feed(func(o runtime.Object, del bool) {
		if del {
			deleted = append(deleted, o.(named).GetName())
		}
	})
	x.listing()
	h(ownedPod("a", ""), false)
	h(ownedPod("b", ""), false)
	x.listed(10)
	if !x.Synced() || x.Revision() != 10 || len(deleted) != 0 {
		t.Fatalf("synced %v revision %d deleted %v", x.Synced(), x.Revision(), deleted)
	}
	// The watch starts over: b was deleted while it was away. Until the list is in, the
	// index is not synced.
	x.listing()
	if x.Synced() {
		t.Fatal("synced while listing again")
	}
	h(ownedPod("a", ""), false)
	h(ownedPod("c", ""), false)
	x.listed(20)
	if len(deleted) != 1 || deleted[0] != "b" {
		t.Fatalf("deletions delivered: %v, want [b]", deleted)
	}
	if got := names(x.List("ns")); len(got) != 2 || got[0] != "a" || got[1] != "c" {
		t.Fatalf("after the relist: %v", got)
	}
}

// A relist's deletions of pods kept as views reach a pod handler as pods, with their
// owner references (what a controller enqueues by).
func TestIndexRelistDeletionOfAView(t *testing.T) {
	var gone []*corev1.Pod
	x := NewIndex(func(o runtime.Object) runtime.Object { return ViewOf(o.(*corev1.Pod)) })
	h := x.Feed(On(func(p *corev1.Pod, deleted bool) {
		if deleted {
			gone = append(gone, p)
		}
	}))
	x.listing()
	h(ownedPod("a", "rs1"), false)
	x.listed(5)
	x.listing()
	x.listed(9)
	if len(gone) != 1 || gone[0].Name != "a" || metav1.GetControllerOf(gone[0]) == nil || metav1.GetControllerOf(gone[0]).UID != "rs1" {
		t.Fatalf("deletions delivered: %+v", gone)
	}
}
