package controller_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/storage"
)

// TestWatchResumesAfterFallingBehind: a controller's watch that falls behind the watch
// hub (its handler blocked while more changes than the hub buffers were committed) is
// dropped; Loop.Watch then watches again from the last revision it saw, so a deletion
// committed while it was behind is delivered. Starting over from the current objects
// instead would never tell the handler the object is gone, and its cache would keep it.
func TestWatchResumesAfterFallingBehind(t *testing.T) {
	t.Parallel()
	etcd, err := storage.StartEmbedded(t.Context(), t.TempDir(), nil, storage.WithUnsafeNoFsync(), storage.WithFastElection())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { etcd.Close() })
	store := registry.NewStore(registry.Config{Storage: etcd.Store(), Catalogue: registry.NewCatalogue()})
	res := store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("configmaps"))
	create := func(name string) {
		t.Helper()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
		if _, err := store.Create(t.Context(), res, "default", cm, registry.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("gone")
	create("churn")

	gate := make(chan struct{})
	blocked := make(chan struct{})
	goneDeleted := make(chan struct{})
	var once bool
	h := func(obj runtime.Object, deleted bool) {
		cm := obj.(*corev1.ConfigMap)
		switch {
		case cm.Name == "block" && !once:
			once = true
			close(blocked)
			<-gate
		case cm.Name == "gone" && deleted:
			close(goneDeleted)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	loop := controller.NewLoop("test", store, slog.New(slog.NewTextHandler(io.Discard, nil)), nil, nil)
	go loop.Watch(ctx, res, h)

	// The handler blocks on "block"; then more batches than the hub buffers for one
	// watcher are committed, so the watcher is dropped before "gone" is deleted.
	create("block")
	<-blocked
	for i := range 2200 {
		if _, err := store.Update(t.Context(), res, "default", "churn", "", func(cur runtime.Object) (runtime.Object, error) {
			cm := cur.DeepCopyObject().(*corev1.ConfigMap)
			cm.Data = map[string]string{"i": strconv.Itoa(i)}
			return cm, nil
		}, registry.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.Delete(t.Context(), res, "default", "gone", metav1.DeleteOptions{}, registry.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	close(gate)
	select {
	case <-goneDeleted:
	case <-time.After(30 * time.Second):
		t.Fatal("the deletion committed while the watch was behind was never delivered")
	}
}
