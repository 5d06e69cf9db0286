package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/registry/selector"
	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
)

// TestWatchRevisionTogether: objects committed by one transaction share a resourceVersion
// (a group commit's objects do). The registry marks every event of such a revision but the
// last one a watch sends MidRevision — after selector filtering — so that the HTTP edge
// writes a revision's events together and ends a watch only between revisions: a client
// resumes from the last resourceVersion it saw and would skip the rest of a revision split
// by a watch's end (its timeout, a backlog, shutdown). Over HTTP a client gets all of them.
func TestWatchRevisionTogether(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := edgeCtx(t)
	const ns = "together"
	mkNamespace(t, s, ns)
	res := s.Store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("configmaps"))
	st := s.Store.Storage()
	before, err := st.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// 1. Three config maps at one revision, written as one transaction.
	var cms []corev1.ConfigMap
	for _, n := range []string{"a", "b", "c"} {
		cms = append(cms, corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: ns, UID: types.UID("uid-" + n), Labels: map[string]string{"pick": fmt.Sprint(n != "c")}}})
	}
	committed := storeConfigMaps(t, ctx, st, res, cms...)
	// 2. The registry's events, with and without a selector leaving the last object out.
	tests := []struct {
		name     string
		selector string
		want     []bool // MidRevision of each event
	}{
		{"every object", "", []bool{true, true, false}},
		{"a selector leaving the last out", "pick=true", []bool{true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := labels.Parse(tt.selector)
			if err != nil {
				t.Fatal(err)
			}
			events, err := s.Store.Watch(ctx, res, ns, registry.WatchOptions{ResourceVersion: fmt.Sprint(before), Selector: selector.Selector{Label: sel}})
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range tt.want {
				ev := <-events
				m, err := apimeta.Accessor(ev.Object)
				if err != nil {
					t.Fatal(err)
				}
				if m.GetResourceVersion() != fmt.Sprint(committed) || ev.MidRevision != want {
					t.Errorf("event %d: %s %s at %s, MidRevision %v; want at %d, MidRevision %v", i, ev.Type, m.GetName(), m.GetResourceVersion(), ev.MidRevision, committed, want)
				}
			}
		})
	}
	// 3. Over HTTP: the three events, at the one resourceVersion.
	w, err := s.Client.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: fmt.Sprint(before)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for _, n := range []string{"a", "b", "c"} {
		ev := <-w.ResultChan()
		cm, ok := ev.Object.(*corev1.ConfigMap)
		if !ok || cm.Name != n || cm.ResourceVersion != fmt.Sprint(committed) {
			t.Fatalf("watch event %s %#v, want ADDED %s at %d", ev.Type, ev.Object, n, committed)
		}
	}
}

// storeConfigMaps writes cms straight to storage in one transaction, as the registry stores
// them (their JSON, with their kind), and returns the revision they share: objects that
// reach the watches together, without the registry's writes around them.
func storeConfigMaps(t *testing.T, ctx context.Context, st storage.Store, res *registry.Resource, cms ...corev1.ConfigMap) int64 {
	t.Helper()
	var ops []storage.Op
	for _, cm := range cms {
		cm.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
		b, err := json.Marshal(cm)
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, storage.Op{Type: storage.OpPut, Key: res.Key(cm.Namespace, cm.Name), Value: b})
	}
	r, err := st.Txn(ctx, storage.Txn{Ops: ops})
	if err != nil {
		t.Fatal(err)
	}
	return r.Revision
}
