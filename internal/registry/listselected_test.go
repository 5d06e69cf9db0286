package registry_test

import (
	"context"
	"fmt"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/storage"
)

// TestListSelected: ListSelected decodes and returns exactly the pods whose stored labels
// and controller keep accepts, judged from their stored metadata as a full decode judges
// them: pods with and without labels, owned by the owner, by another, by a non-controller
// reference, and orphans.
func TestListSelected(t *testing.T) {
	t.Parallel()
	etcd, err := storage.StartEmbedded(context.Background(), t.TempDir(), nil, storage.WithUnsafeNoFsync(), storage.WithFastElection())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { etcd.Close() })
	store := registry.NewStore(registry.Config{Storage: etcd.Store(), Catalogue: registry.NewCatalogue()})
	res := store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("pods"))
	yes, no := true, false
	ref := func(uid string, controller *bool) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs-" + uid, UID: types.UID(uid), Controller: controller}}
	}
	pods := []struct {
		name   string
		labels map[string]string
		owners []metav1.OwnerReference
	}{
		{"mine", map[string]string{"app": "web"}, ref("rs-1", &yes)},
		{"mine-relabelled", map[string]string{"app": "other"}, ref("rs-1", &yes)},
		{"others", map[string]string{"app": "web"}, ref("rs-2", &yes)},
		{"orphan", map[string]string{"app": "web"}, nil},
		{"orphan-other", map[string]string{"app": "db"}, nil},
		{"orphan-nolabels", nil, nil},
		{"not-controller", map[string]string{"app": "web"}, ref("rs-1", &no)},
		{"nil-controller", map[string]string{"app": "web"}, ref("rs-3", nil)},
	}
	for _, p := range pods {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: "ns", Labels: p.labels, OwnerReferences: p.owners,
			Annotations: map[string]string{"a": "b"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
		if _, err := store.Create(t.Context(), res, "ns", pod, registry.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	keep := func(m registry.StoredMeta) bool {
		return m.Controller == "rs-1" || (m.Controller == "" && m.Labels["app"] == "web")
	}
	got, rev, err := store.ListSelected(t.Context(), res, "ns", keep)
	if err != nil || rev == 0 {
		t.Fatal(rev, err)
	}
	// The oracle: every pod decoded whole, judged on its decoded metadata.
	all, _, err := store.ListObjects(t.Context(), res, "ns")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, o := range all {
		p := o.(*corev1.Pod)
		m := registry.StoredMeta{Labels: p.Labels}
		if r := metav1.GetControllerOf(p); r != nil {
			m.Controller, m.Labels = r.UID, nil
		}
		if keep(m) {
			want = append(want, p.Name)
		}
	}
	if fmt.Sprint(names(got)) != fmt.Sprint(want) || len(want) != 5 {
		t.Fatalf("ListSelected = %v, want %v", names(got), want)
	}
	for _, o := range got {
		if p := o.(*corev1.Pod); p.Spec.Containers[0].Image != "nginx" || p.Annotations["a"] != "b" {
			t.Fatalf("pod %s not decoded whole: %+v", p.Name, p)
		}
	}
}

func names(objs []runtime.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.(*corev1.Pod).Name)
	}
	sort.Strings(out)
	return out
}

// BenchmarkListSelected: a ReplicaSet's read of its 30 pods in a namespace of 3,000, by
// ListSelected against decoding every pod (ListObjects).
//
//	go test ./internal/registry -run XXX -bench ListSelected
func BenchmarkListSelected(b *testing.B) {
	etcd, err := storage.StartEmbedded(context.Background(), b.TempDir(), nil, storage.WithUnsafeNoFsync(), storage.WithFastElection())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { etcd.Close() })
	store := registry.NewStore(registry.Config{Storage: etcd.Store(), Catalogue: registry.NewCatalogue()})
	res := store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("pods"))
	yes := true
	for i := range 3000 {
		owner := fmt.Sprintf("rs-%d", i%100)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", i), Namespace: "ns", Labels: map[string]string{"app": owner},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: owner, UID: types.UID(owner), Controller: &yes}}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10", Env: []corev1.EnvVar{{Name: "A", Value: "1"}},
				Ports: []corev1.ContainerPort{{ContainerPort: 80}}}}}}
		if _, err := store.Create(b.Context(), res, "ns", pod, registry.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	keep := func(m registry.StoredMeta) bool { return m.Controller == "rs-7" }
	b.Run("ListSelected", func(b *testing.B) {
		for b.Loop() {
			objs, _, err := store.ListSelected(b.Context(), res, "ns", keep)
			if err != nil || len(objs) != 30 {
				b.Fatal(len(objs), err)
			}
		}
	})
	b.Run("ListObjects", func(b *testing.B) {
		for b.Loop() {
			objs, _, err := store.ListObjects(b.Context(), res, "ns")
			if err != nil || len(objs) != 3000 {
				b.Fatal(len(objs), err)
			}
		}
	})
}
