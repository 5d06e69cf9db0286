package registry

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/quotad/quotad/internal/registry/codec"
)

// BenchmarkDecodePodBody measures decoding the load generator's pod create body.
func BenchmarkDecodePodBody(b *testing.B) {
	res := NewCatalogue().Get(corev1.SchemeGroupVersion.WithResource("pods"))
	body := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p-1"},"spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"10m","memory":"16Mi"},"limits":{"cpu":"10m","memory":"16Mi"}}}]}}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := codec.DecodeBody(res, body, "application/json", codec.FieldValidationStrict); err != nil {
			b.Fatal(err)
		}
	}
}
