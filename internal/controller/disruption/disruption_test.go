package disruption

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func pod(name string, ready bool, owner string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"app": "web"}}}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
	if owner != "" {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: owner, UID: types.UID(owner), Controller: &yes}}
	}
	return p
}

func TestCompute(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	one, pct, maxOne := intstr.FromInt32(1), intstr.FromString("50%"), intstr.FromInt32(1)
	scale := func(string, metav1.OwnerReference) (int32, bool, error) { return 4, true, nil }
	cases := []struct {
		name      string
		spec      policyv1.PodDisruptionBudgetSpec
		disrupted map[string]metav1.Time
		pods      []*corev1.Pod
		// want: expected, desired, healthy, allowed
		want    [4]int32
		recheck time.Duration
		cond    metav1.ConditionStatus
	}{
		{"min 1 of 2 ready", policyv1.PodDisruptionBudgetSpec{MinAvailable: &one}, nil,
			[]*corev1.Pod{pod("a", true, ""), pod("b", true, "")}, [4]int32{2, 1, 2, 1}, 0, metav1.ConditionTrue},
		{"min 1 of 1 ready", policyv1.PodDisruptionBudgetSpec{MinAvailable: &one}, nil,
			[]*corev1.Pod{pod("a", true, ""), pod("b", false, "")}, [4]int32{2, 1, 1, 0}, 0, metav1.ConditionFalse},
		{"no pods", policyv1.PodDisruptionBudgetSpec{MinAvailable: &one}, nil, nil, [4]int32{0, 1, 0, 0}, 0, metav1.ConditionFalse},
		{"50% of a 4-replica controller", policyv1.PodDisruptionBudgetSpec{MinAvailable: &pct}, nil,
			[]*corev1.Pod{pod("a", true, "rs"), pod("b", true, "rs"), pod("c", true, "rs")}, [4]int32{4, 2, 3, 1}, 0, metav1.ConditionTrue},
		{"maxUnavailable 1 of 4", policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &maxOne}, nil,
			[]*corev1.Pod{pod("a", true, "rs"), pod("b", true, "rs"), pod("c", true, "rs"), pod("d", true, "rs")}, [4]int32{4, 3, 4, 1}, 0, metav1.ConditionTrue},
		{"recently disrupted pod not healthy", policyv1.PodDisruptionBudgetSpec{MinAvailable: &one},
			map[string]metav1.Time{"a": metav1.NewTime(now.Add(-time.Minute)), "gone": metav1.NewTime(now)},
			[]*corev1.Pod{pod("a", true, ""), pod("b", true, "")}, [4]int32{2, 1, 1, 0}, time.Minute, metav1.ConditionFalse},
		{"expired disruption", policyv1.PodDisruptionBudgetSpec{MinAvailable: &one},
			map[string]metav1.Time{"a": metav1.NewTime(now.Add(-3 * time.Minute))},
			[]*corev1.Pod{pod("a", true, ""), pod("b", true, "")}, [4]int32{2, 1, 2, 1}, 0, metav1.ConditionTrue},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "pdb", Namespace: "ns", Generation: 3}, Spec: tc.spec}
			pdb.Status.DisruptedPods = tc.disrupted
			st, recheck, err := Compute(pdb, tc.pods, scale, now)
			if err != nil {
				t.Fatal(err)
			}
			got := [4]int32{st.ExpectedPods, st.DesiredHealthy, st.CurrentHealthy, st.DisruptionsAllowed}
			if got != tc.want || recheck != tc.recheck || st.ObservedGeneration != 3 {
				t.Errorf("got %v recheck %v gen %d, want %v recheck %v", got, recheck, st.ObservedGeneration, tc.want, tc.recheck)
			}
			if len(st.Conditions) != 1 || st.Conditions[0].Type != policyv1.DisruptionAllowedCondition || st.Conditions[0].Status != tc.cond {
				t.Errorf("conditions %+v, want DisruptionAllowed %s", st.Conditions, tc.cond)
			}
		})
	}
}

func TestSelects(t *testing.T) {
	p := pod("a", true, "")
	for _, tc := range []struct {
		sel  *metav1.LabelSelector
		want bool
	}{{nil, false}, {&metav1.LabelSelector{}, true}, {&metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, true}, {&metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, false}} {
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns"}, Spec: policyv1.PodDisruptionBudgetSpec{Selector: tc.sel}}
		if got := Selects(pdb, p); got != tc.want {
			t.Errorf("selector %v: %v, want %v", tc.sel, got, tc.want)
		}
	}
}
