package server

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/registry"
)

// TestRevSet: a revSet keeps each object by namespace and name, only moving forward in
// revision; a commit's deletion leaves a tombstone that an older watch event cannot undo,
// the watch's deletion drops it; a list drops what it lacks unless observed later.
func TestRevSet(t *testing.T) {
	s := newRevSet(func(m metav1.Object, _ runtime.Object) (types.UID, bool) { return m.GetUID(), true })
	pod := func(ns, name, uid, rv string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid), ResourceVersion: rv}}
	}
	want := func(ns, name string, uid types.UID, ok bool) {
		t.Helper()
		if got, found := s.get(ns, name); got != uid || found != ok {
			t.Fatalf("get(%s, %s) = %q, %v; want %q, %v", ns, name, got, found, uid, ok)
		}
	}
	s.install([]runtime.Object{pod("a", "p", "u1", "10"), pod("b", "p", "u2", "11"), pod("a", "q", "u3", "12")}, 12)
	want("a", "p", "u1", true)
	want("b", "p", "u2", true)
	want("a", "b/p", "", false)
	// A later commit wins over an older watch event.
	s.observe(pod("a", "p", "u4", "20"), false, false)
	s.observe(pod("a", "p", "u1", "15"), false, true)
	want("a", "p", "u4", true)
	// A commit's deletion is a tombstone: an older event does not bring the pod back.
	s.observe(pod("b", "p", "u2", "21"), true, false)
	want("b", "p", "", false)
	s.observe(pod("b", "p", "u2", "19"), false, true)
	want("b", "p", "", false)
	// The watch's deletion drops the entry and its namespace.
	s.observe(pod("b", "p", "u2", "21"), true, true)
	if _, ok := s.entries["b"]; ok {
		t.Fatal("a namespace without entries is kept")
	}
	// A list at 25 lacks a/q (gone) and a/p, observed at 20: both go; a/r observed after
	// the list's revision stays.
	s.observe(pod("a", "r", "u5", "30"), false, false)
	s.install([]runtime.Object{pod("c", "p", "u6", "24")}, 25)
	want("a", "p", "", false)
	want("a", "q", "", false)
	want("a", "r", "u5", true)
	want("c", "p", "u6", true)
}

// TestUIDIndexReadsSharedCache: the token index reads pod UIDs from the Node authorizer's
// cache of pods (which keeps each pod's UID and revision only) with a revSet's rules:
// synced once listed; a later commit wins over an older watch event; a deletion hides the
// UID and an older event does not bring it back; a pod created again under the same name
// has its new UID; a list drops what it lacks unless observed later. The index leaves the
// shared resource's commits to the cache's owner.
func TestUIDIndexReadsSharedCache(t *testing.T) {
	t.Parallel()
	c := &objectCache{byNS: map[string]map[string]runtime.Object{}, keep: metaOnly, kind: "Pod", shared: true}
	x := &uidIndex{byRes: map[string]uidSource{"pods": c}}
	pod := func(ns, name, uid, rv string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid), ResourceVersion: rv}}
	}
	want := func(ns, name string, uid types.UID, ok bool) {
		t.Helper()
		if got, found := x.UID("pods", ns, name); got != uid || found != ok {
			t.Fatalf("UID(pods, %s, %s) = %q, %v; want %q, %v", ns, name, got, found, uid, ok)
		}
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := x.waitSynced(cancelled); err == nil {
		t.Fatal("synced before the cache was listed")
	}
	c.installPage([]runtime.Object{pod("a", "p", "u1", "10"), pod("b", "p", "u2", "11"), pod("a", "q", "u3", "12")})
	c.install(nil, 12)
	if err := x.waitSynced(cancelled); err != nil {
		t.Fatalf("not synced after the list: %v", err)
	}
	want("a", "p", "u1", true)
	want("b", "p", "u2", true)
	if _, ok := c.byNS["a"]["p"].(*keptRev); !ok {
		t.Fatalf("the cache keeps %T, want its UID and revision only", c.byNS["a"]["p"])
	}
	c.observe(pod("a", "p", "u4", "20"), false)
	c.observe(pod("a", "p", "u1", "15"), false)
	want("a", "p", "u4", true)
	c.observe(pod("b", "p", "u2", "21"), true)
	want("b", "p", "", false)
	c.observe(pod("b", "p", "u2", "19"), false)
	want("b", "p", "", false)
	c.observe(pod("b", "p", "u7", "22"), false) // created again
	want("b", "p", "u7", true)
	c.observe(pod("a", "r", "u5", "30"), false)
	c.installPage([]runtime.Object{pod("c", "p", "u6", "24")})
	c.install(nil, 25)
	want("a", "p", "", false)
	want("a", "q", "", false)
	want("a", "r", "u5", true)
	want("c", "p", "u6", true)
	// The index does not apply the shared resource's commits itself.
	x.observe(&registry.Resource{GVR: corev1.SchemeGroupVersion.WithResource("pods")}, pod("d", "p", "u8", "40"), false)
	want("d", "p", "", false)
	want("b", "p", "", false) // dropped by the list at 25, which lacked it
}
