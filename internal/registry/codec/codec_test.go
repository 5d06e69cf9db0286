package codec

import (
	"bytes"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestVersionedJSON: the stored JSON with a resourceVersion spliced in decodes to the
// object with that resourceVersion, written in pieces or as one slice alike.
func TestVersionedJSON(t *testing.T) {
	for _, p := range []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"a": "b"}}},
		{},
	} {
		stored, err := EncodeForStorage(p, corev1.SchemeGroupVersion.WithKind("Pod"))
		if err != nil {
			t.Fatal(err)
		}
		v, ok := NewVersionedJSON(stored, "42")
		if !ok || v.IsZero() {
			t.Fatalf("%s: not spliced", stored)
		}
		got := v.Bytes()
		var written bytes.Buffer
		if n, err := v.WriteTo(&written); err != nil || n != int64(len(got)) || !bytes.Equal(written.Bytes(), got) || v.Len() != len(got) {
			t.Fatalf("WriteTo wrote %d bytes %s (%v), Len %d; Bytes gives %s", n, written.Bytes(), err, v.Len(), got)
		}
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
	if v, ok := NewVersionedJSON([]byte(`{"kind":"X"}`), "1"); ok || !v.IsZero() {
		t.Error("JSON without metadata must not be spliced")
	}
}
