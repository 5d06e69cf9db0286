package quota_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/evaluator"
)

func benchPod(name string) *corev1.Pod {
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Image: "nginx", Resources: corev1.ResourceRequirements{Requests: rl, Limits: rl.DeepCopy()},
		}}},
	}
}

func benchQuotas(n int) []corev1.ResourceQuota {
	var out []corev1.ResourceQuota
	for i := 0; i < n; i++ {
		hard := corev1.ResourceList{
			corev1.ResourcePods: resource.MustParse("100000"), corev1.ResourceRequestsCPU: resource.MustParse("1000"),
			corev1.ResourceRequestsMemory: resource.MustParse("1Ti"), corev1.ResourceLimitsCPU: resource.MustParse("1000"),
			corev1.ResourceLimitsMemory: resource.MustParse("1Ti"),
		}
		used := corev1.ResourceList{}
		for k := range hard {
			used[k] = resource.MustParse("0")
		}
		out = append(out, corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("q%d", i), Namespace: "bench"},
			Spec:       corev1.ResourceQuotaSpec{Hard: hard},
			Status:     corev1.ResourceQuotaStatus{Hard: hard.DeepCopy(), Used: used},
		})
	}
	return out
}

// BenchmarkCheckRequestPodCreate measures one pod create evaluated against 1 and 5 quotas
// (the CheckRequest of every create on quotad's hot path).
func BenchmarkCheckRequestPodCreate(b *testing.B) {
	reg := evaluator.NewRegistry()
	for _, n := range []int{1, 5} {
		b.Run(fmt.Sprintf("quotas=%d", n), func(b *testing.B) {
			quotas := benchQuotas(n)
			pod := benchPod("p")
			req := quota.Request{Operation: quota.Create, Resource: schema.GroupResource{Resource: "pods"}, Name: "p", Object: pod}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				changed, err := quota.CheckRequest(quotas, req, reg, nil)
				if err != nil || len(changed) != n {
					b.Fatalf("changed %d, err %v", len(changed), err)
				}
			}
		})
	}
}

// BenchmarkCheckPreparedPodCreate measures the part of a pod create's decision a namespace's
// batch runs (Prepared.Check), the usage having been prepared in the writer's goroutine.
func BenchmarkCheckPreparedPodCreate(b *testing.B) {
	reg := evaluator.NewRegistry()
	quotas := benchQuotas(1)
	req := quota.Request{Operation: quota.Create, Resource: schema.GroupResource{Resource: "pods"}, Name: "p", Object: benchPod("p")}
	p, err := quota.Prepare(req, reg, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if changed, err := p.Check(quotas); err != nil || len(changed) != 1 {
			b.Fatalf("changed %d, err %v", len(changed), err)
		}
	}
}

// BenchmarkCheckRequestPodDelete measures the credit of a deleted pod.
func BenchmarkCheckRequestPodDelete(b *testing.B) {
	reg := evaluator.NewRegistry()
	quotas := benchQuotas(1)
	quotas[0].Status.Used[corev1.ResourcePods] = resource.MustParse("1")
	quotas[0].Status.Used[corev1.ResourceRequestsCPU] = resource.MustParse("10m")
	req := quota.Request{Operation: quota.Delete, Resource: schema.GroupResource{Resource: "pods"}, Name: "p", OldObject: benchPod("p")}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := quota.CheckRequest(quotas, req, reg, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckRequestHugeHard measures a pod create against a quota stored before
// quantities were bounded, hard pods 1e10000000 (written straight to etcd): it must cost
// what a normal quota costs (Quantity.Cmp alone took 1.7 s on it).
func BenchmarkCheckRequestHugeHard(b *testing.B) {
	reg := evaluator.NewRegistry()
	quotas := benchQuotas(1)
	quotas[0].Status.Hard[corev1.ResourcePods] = resource.MustParse("1e10000000")
	quotas[0].Spec.Hard[corev1.ResourcePods] = resource.MustParse("1e10000000")
	req := quota.Request{Operation: quota.Create, Resource: schema.GroupResource{Resource: "pods"}, Name: "p", Object: benchPod("p")}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if changed, err := quota.CheckRequest(quotas, req, reg, nil); err != nil || len(changed) != 1 {
			b.Fatalf("changed %d, err %v", len(changed), err)
		}
	}
}

// BenchmarkCheckPreparedAnnotated measures Prepared.Check against a quota with quotad's
// annotations (Warn mode and a threshold the pod's charge stays under): the cost of
// parsing them once per Check.
func BenchmarkCheckPreparedAnnotated(b *testing.B) {
	reg := evaluator.NewRegistry()
	quotas := benchQuotas(1)
	quotas[0].Annotations = map[string]string{quota.EnforcementAnnotation: "Warn", quota.WarnAtAnnotation: "80%,requests.cpu=90%"}
	req := quota.Request{Operation: quota.Create, Resource: schema.GroupResource{Resource: "pods"}, Name: "p", Object: benchPod("p")}
	p, err := quota.Prepare(req, reg, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if changed, err := p.Check(quotas); err != nil || len(changed) != 1 || len(p.Findings()) != 0 {
			b.Fatalf("changed %d, err %v, findings %v", len(changed), err, p.Findings())
		}
	}
}
