package validation

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/quotad/quotad/internal/registry/defaults"
)

// BenchmarkValidatePod measures validating the load generator's pod, defaulted as stored.
func BenchmarkValidatePod(b *testing.B) {
	var pod corev1.Pod
	body := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p-1","namespace":"bench"},"spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"10m","memory":"16Mi"},"limits":{"cpu":"10m","memory":"16Mi"}}}]}}`
	if err := json.Unmarshal([]byte(body), &pod); err != nil {
		b.Fatal(err)
	}
	defaults.Apply(&pod)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if errs := Validate(&pod); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
