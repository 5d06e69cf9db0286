package integration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestPriorityClassWalkthrough: the documentation's priority-class quotas, end to end
// through the Priority plugin (class → spec.priority) and ResourceQuota (PriorityClass scope).
func TestPriorityClassWalkthrough(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	for name, value := range map[string]int32{"high": 1000000, "medium": 1000, "low": 10} {
		if _, err := s.Client.SchedulingV1().PriorityClasses().Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	hard := map[string]map[string]string{
		"high":   {"cpu": "1000", "memory": "200Gi", "pods": "10"},
		"medium": {"cpu": "10", "memory": "20Gi", "pods": "10"},
		"low":    {"cpu": "5", "memory": "10Gi", "pods": "10"},
	}
	for class, h := range hard {
		q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "pods-" + class}, Spec: corev1.ResourceQuotaSpec{
			Hard: rl("cpu", h["cpu"], "memory", h["memory"], "pods", h["pods"]),
			ScopeSelector: &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{
				ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{class},
			}}},
		}}
		if _, err := s.Client.CoreV1().ResourceQuotas("default").Create(ctx, q, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p := podWith("high-priority", rl("cpu", "500m", "memory", "10Gi"), rl("cpu", "500m", "memory", "10Gi"))
	p.Spec.PriorityClassName = "high"
	created, err := s.Client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Spec.Priority == nil || *created.Spec.Priority != 1000000 {
		t.Errorf("spec.priority = %v, want 1000000", created.Spec.Priority)
	}
	expectUsed(t, s, "default", "pods-high", map[string]string{"cpu": "500m", "memory": "10Gi", "pods": "1"})
	expectUsed(t, s, "default", "pods-medium", map[string]string{"cpu": "0", "memory": "0", "pods": "0"})
	expectUsed(t, s, "default", "pods-low", map[string]string{"cpu": "0", "memory": "0", "pods": "0"})
	// An unknown class is refused by Priority before quota sees it.
	bad := podWith("nope", nil, nil)
	bad.Spec.PriorityClassName = "unknown"
	_, err = s.Client.CoreV1().Pods("default").Create(ctx, bad, metav1.CreateOptions{})
	expectForbidden(t, err, `pods "nope" is forbidden: no PriorityClass with name unknown was found`)
}

// TestLimitRangeMinAndRatio: LimitRanger's minimum and ratio refusals.
func TestLimitRangeMinAndRatio(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "lr")
	_, err := s.Client.CoreV1().LimitRanges("lr").Create(ctx, &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Name: "bounds"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer, Min: rl("memory", "10Mi"), MaxLimitRequestRatio: rl("cpu", "2"),
		}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Client.CoreV1().Pods("lr").Create(ctx, podWith("small", rl("cpu", "100m", "memory", "5Mi"), rl("cpu", "100m", "memory", "5Mi")), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "small" is forbidden: minimum memory usage per Container is 10Mi, but request is 5Mi`)
	_, err = s.Client.CoreV1().Pods("lr").Create(ctx, podWith("ratio", rl("cpu", "100m", "memory", "20Mi"), rl("cpu", "1", "memory", "20Mi")), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "ratio" is forbidden: cpu max limit to request ratio per Container is 2, but provided ratio is 10.000000`)
}
