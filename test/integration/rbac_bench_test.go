package integration

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// BenchmarkRBACPodCreates measures pod creates over HTTP with client-go at 32 concurrent
// clients (16 per core on the 2-core machines), as the admin (system:masters) and as a
// tenant bound through a RoleBinding, with 100 RoleBindings and 20 ClusterRoles present:
// authorization is from the watch-kept index, so the two rates should be alike (compare
// the pods/s of the two sub-benchmarks of one run).
func BenchmarkRBACPodCreates(b *testing.B) {
	s := rbacServer(b)
	ctx := b.Context()
	for i := range 10 {
		if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-%d", i)}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 20 {
		if _, err := s.Client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-role-%d", i)},
			Rules: []rbacv1.PolicyRule{
				rbacRule(strs("get", "list", "watch"), strs(""), strs("configmaps", "secrets", "services")),
				rbacRule(strs("get", "list", "watch", "create", "update", "patch", "delete"), strs("", "apps"), strs("pods", "deployments", "replicasets")),
			},
		}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 100 {
		user := fmt.Sprintf("user-%d", i)
		if i == 42 {
			user = "alice"
		}
		if _, err := s.Client.RbacV1().RoleBindings(fmt.Sprintf("bench-%d", i%10)).Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("rb-%d", i)},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: fmt.Sprintf("bench-role-%d", i%20)},
			Subjects: []rbacv1.Subject{
				{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user},
				{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: fmt.Sprintf("group-%d", i%7)},
			},
		}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	tenant, err := kubernetes.NewForConfig(configAs(s, "alice-token"))
	if err != nil {
		b.Fatal(err)
	}
	var n atomic.Int64
	// Untimed warm-up (connections, etcd, caches) at the same concurrency, so the first
	// sub-benchmark is not charged for it.
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				for _, c := range []kubernetes.Interface{s.Client, tenant} {
					p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", n.Add(1))}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
					if _, err := c.CoreV1().Pods("bench-2").Create(ctx, p, metav1.CreateOptions{}); err != nil {
						b.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	for _, c := range []struct {
		name   string
		client kubernetes.Interface
	}{{"admin", s.Client}, {"tenant", tenant}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetParallelism(16)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", n.Add(1))}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
					if _, err := c.client.CoreV1().Pods("bench-2").Create(ctx, p, metav1.CreateOptions{}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pods/s")
		})
	}
}
