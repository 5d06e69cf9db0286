package validation

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/quotad/quotad/internal/registry/defaults"
)

// benchPod is the load generator's pod as stored: defaulted, with the ServiceAccount token
// volume and mounts and the not-ready/unreachable tolerations admission adds.
func benchPod(b *testing.B) *corev1.Pod {
	var pod corev1.Pod
	body := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p-1","namespace":"bench"},"spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"10m","memory":"16Mi"},"limits":{"cpu":"10m","memory":"16Mi"}},
	"volumeMounts":[{"name":"kube-api-access-x1","readOnly":true,"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}]}],
	"serviceAccountName":"default",
	"tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],
	"volumes":[{"name":"kube-api-access-x1","projected":{"defaultMode":420,"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},{"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},{"downwardAPI":{"items":[{"path":"namespace","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"}}]}}]}}]}}`
	if err := json.Unmarshal([]byte(body), &pod); err != nil {
		b.Fatal(err)
	}
	defaults.Apply(&pod)
	return &pod
}

// BenchmarkPod measures validating the load generator's pod as stored, and its warnings
// (none).
func BenchmarkPod(b *testing.B) {
	pod := benchPod(b)
	for _, c := range []struct {
		name  string
		check func() int
	}{
		{"validate", func() int { return len(Validate(pod)) }},
		{"warnings", func() int { return len(PodWarnings(pod)) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if n := c.check(); n > 0 {
					b.Fatalf("%d errors or warnings", n)
				}
			}
		})
	}
}
