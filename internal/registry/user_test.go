package registry_test

import (
	"context"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/storage"
)

// seenUsers records the user of every admission call.
type seenUsers struct {
	mu    sync.Mutex
	users []string
}

func (s *seenUsers) record(a *admission.Attributes) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users = append(s.users, string(a.Operation)+" "+a.User.Name)
}

func (s *seenUsers) Admit(_ context.Context, a *admission.Attributes) error { s.record(a); return nil }
func (s *seenUsers) Validate(_ context.Context, a *admission.Attributes) error {
	s.record(a)
	return nil
}

// TestAdmissionSeesTheUser: admission attributes carry the requesting user from the
// request's context on create, update and delete; in-process writes carry none.
func TestAdmissionSeesTheUser(t *testing.T) {
	etcd, err := storage.StartEmbedded(context.Background(), t.TempDir(), nil, storage.WithUnsafeNoFsync(), storage.WithFastElection())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { etcd.Close() })
	seen := &seenUsers{}
	store := registry.NewStore(registry.Config{Storage: etcd.Store(), Catalogue: registry.NewCatalogue(), Admission: seen})
	res := store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("configmaps"))
	ctx := auth.WithUser(t.Context(), auth.User{Name: "alice", Groups: []string{"team-a"}})
	if _, err := store.Create(ctx, res, "default", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default"}}, registry.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Update(ctx, res, "default", "c", "", func(cur runtime.Object) (runtime.Object, error) {
		cm := cur.DeepCopyObject().(*corev1.ConfigMap)
		cm.Data = map[string]string{"a": "b"}
		return cm, nil
	}, registry.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Delete(ctx, res, "default", "c", metav1.DeleteOptions{}, registry.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Create(t.Context(), res, "default", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "default"}}, registry.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"CREATE alice", "CREATE alice", "UPDATE alice", "UPDATE alice", "DELETE alice", "DELETE alice", "CREATE ", "CREATE "}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if len(seen.users) != len(want) {
		t.Fatalf("admission saw %q, want %q", seen.users, want)
	}
	for i := range want {
		if seen.users[i] != want[i] {
			t.Fatalf("admission saw %q, want %q", seen.users, want)
		}
	}
}
