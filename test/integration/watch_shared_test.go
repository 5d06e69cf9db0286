package integration

import (
	"context"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/server/servertest"
)

// TestSharedWatchObjectsMatchStorage: the objects in-process watchers receive for pods this
// replica wrote (which the watch hub takes from the writer instead of decoding) are the
// stored objects: the same JSON and semantically equal to a read, with the resourceVersion
// of their revision. Pods defaulted by a LimitRange, with limits only, and updated ones are
// covered.
func TestSharedWatchObjectsMatchStorage(t *testing.T) {
	s, ctx, podRes := startPodWatchTest(t, "shared")
	events, err := s.Store.Watch(ctx, podRes, "shared", registry.WatchOptions{Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	lr := &corev1.LimitRange{ObjectMeta: metaName("defaults"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
		Type:           corev1.LimitTypeContainer,
		Default:        corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
		DefaultRequest: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("32Mi")},
	}}}}
	if _, err := s.Client.CoreV1().LimitRanges("shared").Create(ctx, lr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := s.Client.CoreV1().Pods("shared")
	check := func(wantType watch.EventType, name string) {
		t.Helper()
		var ev registry.Event
		for ev = range events {
			if ev.Type != watch.Bookmark {
				break
			}
		}
		got, ok := ev.Object.(*corev1.Pod)
		if ev.Type != wantType || !ok || got.Name != name {
			t.Fatalf("event %s %T, want %s of pod %s", ev.Type, ev.Object, wantType, name)
		}
		stored, err := s.Store.Get(ctx, podRes, "shared", name)
		if err != nil {
			t.Fatal(err)
		}
		if got.ResourceVersion != stored.(*corev1.Pod).ResourceVersion {
			t.Fatalf("pod %s: watched resourceVersion %s, stored %s", name, got.ResourceVersion, stored.(*corev1.Pod).ResourceVersion)
		}
		gotJSON, _ := json.Marshal(got)
		storedJSON, _ := json.Marshal(stored)
		if string(gotJSON) != string(storedJSON) {
			t.Fatalf("pod %s: watched\n%s\nstored\n%s", name, gotJSON, storedJSON)
		}
		if !apiequality.Semantic.DeepEqual(got, stored) {
			t.Fatalf("pod %s: watched object is not semantically the stored one", name)
		}
	}
	mk := func(name string, res corev1.ResourceRequirements) {
		t.Helper()
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx", Resources: res}}}}
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		check(watch.Added, name)
	}
	mk("plain", corev1.ResourceRequirements{})
	mk("limits-only", corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.5"), corev1.ResourceMemory: resource.MustParse("1Gi")}})
	mk("requests", corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("1000000")}})
	if _, err := pods.Patch(ctx, "requests", types.MergePatchType, []byte(`{"metadata":{"labels":{"app":"changed"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	check(watch.Modified, "requests")
	p, err := pods.Get(ctx, "plain", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Annotations = map[string]string{"note": "updated"}
	if _, err := pods.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	check(watch.Modified, "plain")
}

// TestWatchEachMatchesWatch: a watch run in the caller's goroutine (Store.WatchEach, as the
// controllers and caches run theirs) hands over exactly the events Watch's channel does, in
// the same order with the same revisions, ends when its function returns false, and fails
// to start as Watch does.
func TestWatchEachMatchesWatch(t *testing.T) {
	s, ctx, podRes := startPodWatchTest(t, "each")
	pods := s.Client.CoreV1().Pods("each")
	mk := func(name string) {
		t.Helper()
		p := &corev1.Pod{ObjectMeta: metaName(name), Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
		if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mk("before-1")
	mk("before-2")

	type seen struct {
		typ         watch.EventType
		name, rv    string
		initial     bool
		midRevision bool
	}
	describe := func(ev registry.Event) seen {
		sn := seen{typ: ev.Type, initial: ev.Initial, midRevision: ev.MidRevision}
		if p, ok := ev.Object.(*corev1.Pod); ok {
			sn.name, sn.rv = p.Name, p.ResourceVersion
		}
		return sn
	}
	// Both watches start from the current objects; each is read until the last pod's deletion.
	opts := registry.WatchOptions{Shared: true}
	events, err := s.Store.Watch(ctx, podRes, "each", opts)
	if err != nil {
		t.Fatal(err)
	}
	eachCh := make(chan []seen, 1)
	started := make(chan struct{})
	go func() {
		var got []seen
		err := s.Store.WatchEach(ctx, podRes, "each", opts, func(ev registry.Event) bool {
			if len(got) == 0 {
				close(started)
			}
			got = append(got, describe(ev))
			return !(ev.Type == watch.Deleted && got[len(got)-1].name == "after-3")
		})
		if err != nil {
			t.Error(err)
		}
		eachCh <- got
	}()
	<-started // its initial events are read: what follows is seen by both as changes
	mk("after-1")
	mk("after-2")
	mk("after-3")
	if _, err := pods.Patch(ctx, "after-2", types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"before-1", "after-3"} {
		if err := pods.Delete(ctx, name, *metav1.NewDeleteOptions(0)); err != nil {
			t.Fatal(err)
		}
	}
	var want []seen
	for ev := range events {
		want = append(want, describe(ev))
		if ev.Type == watch.Deleted && want[len(want)-1].name == "after-3" {
			break
		}
	}
	// WatchEach returned on its own once its function said so (the test's context is live).
	got := <-eachCh
	if len(got) != len(want) {
		t.Fatalf("WatchEach saw %d events, Watch %d:\n%v\n%v", len(got), len(want), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d: WatchEach %+v, Watch %+v", i, got[i], want[i])
		}
	}
	if want[0].typ != watch.Added || !want[0].initial || want[len(want)-1].typ != watch.Deleted {
		t.Fatalf("unexpected sequence %v", want)
	}

	// The applied view of cluster quotas (a watch of its own kind): the cluster quota
	// selecting the namespace, then the end when the function says so.
	mkLabeledNamespace(t, s, "each-applied", map[string]string{"team": "each"})
	appliedRes := s.Store.Catalogue().Get(appliedGVR)
	applied := make(chan string, 1)
	go func() {
		err := s.Store.WatchEach(ctx, appliedRes, "each-applied", registry.WatchOptions{}, func(ev registry.Event) bool {
			if m, ok := ev.Object.(metav1.Object); ok && ev.Type == watch.Added {
				applied <- m.GetName()
				return false
			}
			return true
		})
		if err != nil {
			t.Error(err)
		}
		close(applied)
	}()
	if _, err := createCRQ(t, s, clusterQuota("each-team", "each", rl("pods", "5")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if name := <-applied; name != "each-team" {
		t.Fatalf("applied view watched %q, want each-team", name)
	}
	if _, open := <-applied; open {
		t.Fatal("WatchEach of the applied view went on after its function returned false")
	}

	// A start Watch refuses, WatchEach refuses alike, without calling its function.
	bad := registry.WatchOptions{ResourceVersion: "not-a-revision"}
	_, werr := s.Store.Watch(ctx, podRes, "each", bad)
	eerr := s.Store.WatchEach(ctx, podRes, "each", bad, func(registry.Event) bool {
		t.Error("function called for a watch that did not start")
		return false
	})
	if werr == nil || eerr == nil || werr.Error() != eerr.Error() {
		t.Fatalf("Watch: %v; WatchEach: %v", werr, eerr)
	}
}

// startPodWatchTest starts a parallel test's server with the namespace ns, and returns it,
// the test's context and the pods resource.
func startPodWatchTest(t *testing.T, ns string) (*servertest.Server, context.Context, *registry.Resource) {
	t.Parallel()
	s := servertest.Start(t)
	mkNamespace(t, s, ns)
	return s, ctxT(t), s.Store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("pods"))
}
