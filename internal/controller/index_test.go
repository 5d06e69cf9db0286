package controller

import (
	"fmt"
	"slices"
	"strings"
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
	isA := func(o runtime.Object) bool { return o.(named).GetName() == "a" }
	if !x.AnyControlled("ns", "rs1", isA) || x.AnyControlled("ns", "rs2", isA) || x.AnyControlled("other", "rs1", isA) {
		t.Fatal("AnyControlled does not see exactly rs1's a")
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

// Feed records an event before the handler runs; OnChange sees the version held before and
// what the index keeps now (for a deletion, what it held), and Apply calls it too.
func TestIndexFeedOnChange(t *testing.T) {
	x := NewIndex(func(o runtime.Object) runtime.Object {
		if p, ok := o.(*corev1.Pod); ok {
			return ViewOf(p)
		}
		return nil
	})
	var seen []string
	x.OnChange(func(old, cur runtime.Object, deleted bool) {
		o, _ := old.(*PodView)
		c := cur.(*PodView)
		seen = append(seen, fmt.Sprintf("change %s/%s old=%v node=%s deleted=%v", c.Namespace, c.Name, o != nil, c.NodeName, deleted))
	})
	h := x.Feed(func(obj runtime.Object, deleted bool) {
		p := obj.(*corev1.Pod)
		seen = append(seen, fmt.Sprintf("handler %s held=%v", p.Name, x.Get(p.Namespace, p.Name) != nil))
	})
	pod := func(ns, name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{NodeName: node}}
	}
	h(pod("a", "2", ""), false)
	h(pod("a", "1", ""), false)
	h(pod("b", "1", ""), false)
	h(pod("a", "2", "n1"), false)
	h(pod("a", "2", "n1"), true)
	x.Apply(pod("c", "1", "n2"), false)
	var names []string
	for _, o := range x.List("a") {
		names = append(names, o.(*PodView).Name)
	}
	if fmt.Sprint(names) != "[1]" || len(x.List("b")) != 1 || len(x.List("")) != 3 {
		t.Fatalf("a: %v, b: %d, all: %d", names, len(x.List("b")), len(x.List("")))
	}
	want := []string{
		"change a/2 old=false node= deleted=false", "handler 2 held=true",
		"change a/1 old=false node= deleted=false", "handler 1 held=true",
		"change b/1 old=false node= deleted=false", "handler 1 held=true",
		"change a/2 old=true node=n1 deleted=false", "handler 2 held=true",
		"change a/2 old=true node=n1 deleted=true", "handler 2 held=false",
		"change c/1 old=false node=n2 deleted=false",
	}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("saw\n%s\nwant\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}

// PodsByNode follows pods from node to node and forgets them when deleted, including a
// deletion a relist found.
func TestPodsByNode(t *testing.T) {
	var b PodsByNode
	x := NewIndex(func(o runtime.Object) runtime.Object { return ViewOf(o.(*corev1.Pod)) })
	x.OnChange(func(old, cur runtime.Object, deleted bool) { b.Changed(old, cur, deleted) })
	pod := func(name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: corev1.PodSpec{NodeName: node}}
	}
	x.Apply(pod("a", ""), false)
	x.Apply(pod("b", "n1"), false)
	x.Apply(pod("a", "n1"), false)
	x.Apply(pod("c", "n2"), false)
	if got := fmt.Sprint(b.Keys("n1"), b.Keys("n2")); got != "[ns/a ns/b] [ns/c]" {
		t.Fatalf("n1, n2: %s", got)
	}
	x.Apply(pod("b", "n1"), true)
	x.listing()
	x.Apply(pod("a", "n1"), false)
	x.listed(7) // c was not listed again: deleted
	if got := fmt.Sprint(b.Keys("n1"), b.Keys("n2")); got != "[ns/a] []" {
		t.Fatalf("after a deletion and a relist: n1, n2: %s", got)
	}
}

// TestIndexEach: Each reads every kept object of every namespace once, as List holds them,
// and nothing deleted or not kept.
func TestIndexEach(t *testing.T) {
	x := NewIndex(func(o runtime.Object) runtime.Object {
		if p := o.(*corev1.Pod); p.Spec.NodeName != "" {
			return ViewOf(p)
		}
		return nil
	})
	pod := func(ns, name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{NodeName: node}}
	}
	x.Apply(pod("a", "p", "n1"), false)
	x.Apply(pod("b", "p", "n1"), false)
	x.Apply(pod("b", "q", "n2"), false)
	x.Apply(pod("b", "unbound", ""), false)
	x.Apply(pod("c", "gone", "n1"), false)
	x.Apply(pod("c", "gone", "n1"), true)
	var got []string
	x.Each(func(o runtime.Object) {
		v := o.(*PodView)
		got = append(got, v.Namespace+"/"+v.Name)
	})
	slices.Sort(got)
	var listed []string
	for _, o := range x.List("") {
		v := o.(*PodView)
		listed = append(listed, v.Namespace+"/"+v.Name)
	}
	if want := []string{"a/p", "b/p", "b/q"}; !slices.Equal(got, want) || !slices.Equal(listed, want) {
		t.Fatalf("Each read %v, List holds %v; want %v", got, listed, want)
	}
}
