package integration

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/server/servertest"
)

// BenchmarkStoreCreatePod measures the registry's create path (defaults, admission,
// validation, quota, group commit into etcd) without HTTP, with parallel writers in one
// namespace under a quota.
func BenchmarkStoreCreatePod(b *testing.B) {
	s := servertest.Start(b)
	ctx := context.Background()
	nsRes := s.Store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("namespaces"))
	if _, err := s.Store.Create(ctx, nsRes, "", &corev1.Namespace{ObjectMeta: metaName("bench")}, registry.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	qRes := s.Store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("resourcequotas"))
	q := &corev1.ResourceQuota{ObjectMeta: metaName("q"), Spec: corev1.ResourceQuotaSpec{Hard: rl("pods", "1000000", "requests.cpu", "100k", "requests.memory", "100Ti", "limits.cpu", "100k", "limits.memory", "100Ti")}}
	if _, err := s.Store.Create(ctx, qRes, "bench", q, registry.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	podRes := s.Store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("pods"))
	var n atomic.Int64
	b.SetParallelism(16)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			p := podWith(fmt.Sprintf("p-%d", n.Add(1)), rl("cpu", "10m", "memory", "16Mi"), rl("cpu", "10m", "memory", "16Mi"))
			if _, err := s.Store.Create(ctx, podRes, "bench", p, registry.WriteOptions{}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
