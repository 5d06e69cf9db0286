package commit

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	qcore "github.com/quotad/quotad/internal/quota"
)

func TestDecisionQuotas(t *testing.T) {
	list := func(pairs ...string) corev1.ResourceList {
		out := corev1.ResourceList{}
		for i := 0; i+1 < len(pairs); i += 2 {
			out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
		}
		return out
	}
	quota := func(spec, hard, used corev1.ResourceList) corev1.ResourceQuota {
		q := corev1.ResourceQuota{}
		q.Name = "q"
		q.Spec.Hard, q.Status.Hard, q.Status.Used = spec, hard, used
		return q
	}
	cases := []struct {
		name string
		in   corev1.ResourceQuota
		want corev1.ResourceQuotaStatus
	}{
		{"settled is judged as stored",
			quota(list("pods", "1"), list("pods", "1"), list("pods", "1")),
			corev1.ResourceQuotaStatus{Hard: list("pods", "1"), Used: list("pods", "1")}},
		{"written hard is judged on spec.hard",
			quota(list("pods", "1", "cpu", "1"), list("pods", "5", "memory", "1Gi"), list("pods", "1", "cpu", "100m", "memory", "10Mi")),
			corev1.ResourceQuotaStatus{Hard: list("pods", "1", "cpu", "1"), Used: list("pods", "1", "cpu", "100m")}},
		{"written empty hard",
			quota(list("pods", "1"), nil, list("pods", "0")),
			corev1.ResourceQuotaStatus{Hard: list("pods", "1"), Used: list("pods", "0")}},
	}
	for _, c := range cases {
		in := []corev1.ResourceQuota{*c.in.DeepCopy()}
		got := DecisionQuotas(in)
		if !qcore.Equals(got[0].Status.Hard, c.want.Hard) || !qcore.Equals(got[0].Status.Used, c.want.Used) {
			t.Errorf("%s: got %s %s, want %s %s", c.name, ListString(got[0].Status.Hard), ListString(got[0].Status.Used), ListString(c.want.Hard), ListString(c.want.Used))
		}
		if !qcore.Equals(in[0].Status.Hard, c.in.Status.Hard) {
			t.Errorf("%s: the input changed", c.name)
		}
	}
}
