package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/server/servertest"
)

// TestWatchNamespaceFromEarlierRevisions: a client watching its namespace from an earlier
// resourceVersion gets exactly its namespace's changes since, in order, whether the watch
// hub still holds them decoded, holds them only as stored (more than 512 events of every
// namespace came after), or no longer holds them at all (more than 512 revisions came
// after: a watch of its own). Another namespace's writes, however many, are not sent.
func TestWatchNamespaceFromEarlierRevisions(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := edgeCtx(t)
	mkNamespace(t, s, "mine")
	mkNamespace(t, s, "other")
	res := s.Store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("configmaps"))
	st := s.Store.Storage()
	// The hub of config maps runs while a cluster-wide watcher reads it.
	all, err := s.Store.Watch(ctx, res, "", registry.WatchOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for range all {
		}
	}()
	put := func(ns string, names ...string) {
		t.Helper()
		var cms []corev1.ConfigMap
		for _, n := range names {
			cms = append(cms, corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: ns, UID: types.UID(ns + "-" + n)}, Data: map[string]string{"v": n}})
		}
		storeConfigMaps(t, ctx, st, res, cms...)
	}
	start, err := st.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var mine []string
	for i := range 16 {
		mine = append(mine, fmt.Sprintf("m-%d", i))
	}
	put("mine", mine...)
	// check watches "mine" from start over HTTP and wants mine's objects, then ends it.
	check := func(stage string, want []string) {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		w, err := s.Client.CoreV1().ConfigMaps("mine").Watch(wctx, metav1.ListOptions{ResourceVersion: fmt.Sprint(start)})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		for _, n := range want {
			ev := <-w.ResultChan()
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if ev.Type != watch.Added || !ok || cm.Namespace != "mine" || cm.Name != n || cm.Data["v"] != n || string(cm.UID) != "mine-"+n {
				t.Fatalf("%s: watch event %s %#v, want mine/%s ADDED", stage, ev.Type, ev.Object, n)
			}
		}
	}
	// 1. Decoded in the hub.
	check("decoded", mine)
	// 2. 640 more events of another namespace in 40 revisions: mine's are held as stored.
	for i := range 40 {
		var names []string
		for j := range 16 {
			names = append(names, fmt.Sprintf("o-%d-%d", i, j))
		}
		put("other", names...)
	}
	mine = append(mine, "m-last")
	put("mine", "m-last")
	check("held as stored", mine)
	// 3. 700 revisions more: a watch of its own.
	for i := range 700 {
		put("other", fmt.Sprintf("p-%d", i))
	}
	mine = append(mine, "m-end")
	put("mine", "m-end")
	check("a watch of its own", mine)
}
