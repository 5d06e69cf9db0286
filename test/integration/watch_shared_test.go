package integration

import (
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
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "shared")
	podRes := s.Store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("pods"))
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
