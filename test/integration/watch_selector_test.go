package integration

import (
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestWatchSelectorTransitions: a watch with a label selector sees an object enter the
// selection as ADDED, leave it as DELETED, and its deletion only while selected.
func TestWatchSelectorTransitions(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "sel")
	cms := s.Client.CoreV1().ConfigMaps("sel")
	w, err := cms.Watch(ctx, metav1.ListOptions{LabelSelector: "app=a"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	label := func(v string) {
		t.Helper()
		if _, err := cms.Patch(ctx, "x", types.MergePatchType, []byte(`{"metadata":{"labels":{"app":"`+v+`"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cm := &metav1.ObjectMeta{Name: "x", Labels: map[string]string{"app": "a"}}
	if _, err := cms.Create(ctx, mkConfigMap(cm), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	label("b") // leaves the selection
	label("c") // stays outside: no event
	label("a") // enters again
	if err := cms.Delete(ctx, "x", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		typ watch.EventType
		app string
	}{{watch.Added, "a"}, {watch.Deleted, "b"}, {watch.Added, "a"}, {watch.Deleted, "a"}}
	for i, wnt := range want {
		ev, ok := <-w.ResultChan()
		if !ok {
			t.Fatalf("watch closed after %d events", i)
		}
		m, _ := apimeta.Accessor(ev.Object)
		if ev.Type != wnt.typ || m.GetLabels()["app"] != wnt.app {
			t.Errorf("event %d: %s app=%s, want %s app=%s", i, ev.Type, m.GetLabels()["app"], wnt.typ, wnt.app)
		}
	}
}
