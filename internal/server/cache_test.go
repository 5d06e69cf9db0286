package server

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func namespaceAt(name, rv string, phase corev1.NamespacePhase) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv}, Status: corev1.NamespaceStatus{Phase: phase}}
}

// TestCacheInstallKeepsLaterCommits: a list read before this replica's commits must not
// take the cache back. A namespace turned Terminating (revision 12) while the list (at
// revision 10) was read stays Terminating; one created after the list stays; one deleted
// after the list stays deleted; one the list no longer holds and the cache knew only
// before is gone.
func TestCacheInstallKeepsLaterCommits(t *testing.T) {
	t.Parallel()
	c := &objectCache{byNS: map[string]map[string]runtime.Object{}}
	c.observe(namespaceAt("gone", "3", corev1.NamespaceActive), false)
	c.observe(namespaceAt("doomed", "12", corev1.NamespaceTerminating), false)
	c.observe(namespaceAt("fresh", "11", corev1.NamespaceActive), false)
	c.observe(namespaceAt("removed", "13", corev1.NamespaceActive), true)

	c.install([]runtime.Object{
		namespaceAt("doomed", "5", corev1.NamespaceActive),
		namespaceAt("removed", "6", corev1.NamespaceActive),
		namespaceAt("kept", "7", corev1.NamespaceActive),
	}, 10)

	want := map[string]string{"doomed": "12/Terminating", "fresh": "11/Active", "kept": "7/Active"}
	got := map[string]string{}
	for name, o := range c.byNS[""] {
		ns := o.(*corev1.Namespace)
		got[name] = ns.ResourceVersion + "/" + string(ns.Status.Phase)
	}
	if len(got) != len(want) {
		t.Fatalf("cache after the list: %v, want %v", got, want)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("namespace %s: %s, want %s", name, got[name], w)
		}
	}
	if !c.synced {
		t.Error("cache not synced after the list")
	}
	// The watch from the list's revision then delivers the same changes: nothing moves back.
	c.observe(namespaceAt("doomed", "12", corev1.NamespaceTerminating), false)
	c.observe(namespaceAt("removed", "13", corev1.NamespaceActive), true)
	if _, ok := c.get("", "removed"); ok {
		t.Error("a namespace deleted after the list came back")
	}
	if o, _ := c.get("", "doomed"); o.(*corev1.Namespace).Status.Phase != corev1.NamespaceTerminating {
		t.Error("a terminating namespace went back to active")
	}
}

// TestKeptRevisionsCache: a cache keeping only revisions (the Node authorizer's) orders
// changes by them, lists a page at a time, and tells applied of an object a relist no
// longer holds as a PartialObjectMetadata of its kind, namespace and name.
func TestKeptRevisionsCache(t *testing.T) {
	t.Parallel()
	var applied []string
	c := &objectCache{byNS: map[string]map[string]runtime.Object{}, keep: metaOnly, kind: "Pod", applied: func(obj runtime.Object, deleted bool) {
		switch o := obj.(type) {
		case *corev1.Pod:
			applied = append(applied, fmt.Sprintf("pod %s/%s rv=%s deleted=%v", o.Namespace, o.Name, o.ResourceVersion, deleted))
		case *metav1.PartialObjectMetadata:
			applied = append(applied, fmt.Sprintf("%s %s/%s rv=%s deleted=%v", o.Kind, o.Namespace, o.Name, o.ResourceVersion, deleted))
		}
	}}
	pod := func(name, rv string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
	}
	c.installPage([]runtime.Object{pod("a", "4"), pod("b", "5")})
	c.install(nil, 5)
	c.observe(pod("a", "3"), false) // older than what the cache holds: ignored
	c.observe(pod("a", "7"), false)
	c.installPage([]runtime.Object{pod("a", "7")}) // a relist at 8 without b
	c.install(nil, 8)
	want := []string{"pod ns/a rv=4 deleted=false", "pod ns/b rv=5 deleted=false", "pod ns/a rv=7 deleted=false", "Pod ns/b rv=5 deleted=true"}
	if fmt.Sprint(applied) != fmt.Sprint(want) {
		t.Fatalf("applied:\n%q\nwant:\n%q", applied, want)
	}
	if r, ok := storedRev(c.byNS["ns"]["a"]); !ok || r != 7 {
		t.Fatalf("a kept at %d, want 7", r)
	}
}
