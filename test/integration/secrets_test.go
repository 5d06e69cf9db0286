package integration

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestSecretStringData: stringData is write-only, as upstream: on create, update and
// patch its entries go into data (replacing theirs), and it is never stored or returned.
func TestSecretStringData(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	secrets := s.Client.CoreV1().Secrets("default")
	created, err := secrets.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "s"},
		Data:       map[string][]byte{"a": []byte("from data"), "b": []byte("kept")},
		StringData: map[string]string{"a": "from stringData", "c": "new"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, got *corev1.Secret, want map[string]string) {
		t.Helper()
		if got.StringData != nil || len(got.Data) != len(want) {
			t.Fatalf("%s: data %q, stringData %q; want data %q", what, got.Data, got.StringData, want)
		}
		for k, v := range want {
			if string(got.Data[k]) != v {
				t.Fatalf("%s: data[%s] = %q, want %q", what, k, got.Data[k], v)
			}
		}
	}
	want := map[string]string{"a": "from stringData", "b": "kept", "c": "new"}
	check("created", created, want)
	got, err := secrets.Get(ctx, "s", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check("read back", got, want)
	got.StringData = map[string]string{"b": "updated"}
	updated, err := secrets.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want["b"] = "updated"
	check("updated", updated, want)
	patched, err := secrets.Patch(ctx, "s", types.MergePatchType, []byte(`{"stringData":{"d":"patched"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want["d"] = "patched"
	check("patched", patched, want)
}
