package codec

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestWithResourceVersion: the stored JSON with a resourceVersion spliced in decodes to the
// object with that resourceVersion.
func TestWithResourceVersion(t *testing.T) {
	for _, p := range []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"a": "b"}}},
		{},
	} {
		stored, err := EncodeForStorage(p, corev1.SchemeGroupVersion.WithKind("Pod"))
		if err != nil {
			t.Fatal(err)
		}
		got := WithResourceVersion(stored, "42")
		var back corev1.Pod
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%s: %v", got, err)
		}
		want := p.DeepCopy()
		want.ResourceVersion = "42"
		want.APIVersion, want.Kind = "v1", "Pod"
		if back.ResourceVersion != "42" || back.Name != want.Name || back.Namespace != want.Namespace || back.Kind != "Pod" {
			t.Errorf("spliced %s decodes to %+v", got, back.ObjectMeta)
		}
	}
	if WithResourceVersion([]byte(`{"kind":"X"}`), "1") != nil {
		t.Error("JSON without metadata must not be spliced")
	}
}
