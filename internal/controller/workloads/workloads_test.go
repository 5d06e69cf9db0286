package workloads

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/quotad/quotad/internal/controller"
)

// TestPodsPrefix: upstream's generateName prefix of an owner's pods, cut to leave room for
// the random suffix.
func TestPodsPrefix(t *testing.T) {
	if p := podsPrefix("web"); p != "web-" {
		t.Errorf("prefix %q", p)
	}
	if p := podsPrefix(strings.Repeat("a", 300)); len(p) != maxGeneratedNameLength {
		t.Errorf("long prefix length %d", len(p))
	}
}

func readyPod(name string, ready bool, since time.Time) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "x"}}}
	p.Status.Phase = corev1.PodRunning
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.NewTime(since)}}
	return p
}

// viewsOf makes the views of pods, as a ReplicaSet's index holds them.
func viewsOf(pods []*corev1.Pod) []*controller.PodView {
	out := make([]*controller.PodView, len(pods))
	for i, p := range pods {
		out[i] = controller.ViewOf(p)
	}
	return out
}

func TestCalculateRSStatus(t *testing.T) {
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	three := int32(3)
	failure := appsv1.ReplicaSetCondition{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: "old"}
	cases := []struct {
		name         string
		minReady     int32
		pods         []*corev1.Pod
		existing     []appsv1.ReplicaSetCondition
		err          error
		ready, avail int32
		wantReason   string // "" means no ReplicaFailure condition
		wantMessage  string
	}{
		{"all ready", 0, []*corev1.Pod{readyPod("a", true, now), readyPod("b", true, now), readyPod("c", true, now)}, nil, nil, 3, 3, "", ""},
		{"minReadySeconds not yet", 10, []*corev1.Pod{readyPod("a", true, now.Add(-5*time.Second)), readyPod("b", true, now.Add(-time.Minute))}, nil, nil, 2, 1, "", ""},
		{"quota refusal while short", 0, []*corev1.Pod{readyPod("a", false, now)}, nil, errors.New(`pods "a" is forbidden: exceeded quota`), 0, 0, "FailedCreate", `pods "a" is forbidden: exceeded quota`},
		{"delete failure while over", 0, []*corev1.Pod{readyPod("a", false, now), readyPod("b", false, now), readyPod("c", false, now), readyPod("d", false, now)}, nil, errors.New("boom"), 0, 0, "FailedDelete", "boom"},
		{"existing failure kept", 0, nil, []appsv1.ReplicaSetCondition{failure}, errors.New("new"), 0, 0, "FailedCreate", "old"},
		{"recovered", 0, []*corev1.Pod{readyPod("a", true, now), readyPod("b", true, now), readyPod("c", true, now)}, []appsv1.ReplicaSetCondition{failure}, nil, 3, 3, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs := &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Replicas: &three, MinReadySeconds: tc.minReady,
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}}}}}
			rs.Status.Conditions = tc.existing
			st := calculateRSStatus(rs, viewsOf(tc.pods), tc.err, now)
			if st.Replicas != int32(len(tc.pods)) || st.FullyLabeledReplicas != int32(len(tc.pods)) || st.ReadyReplicas != tc.ready || st.AvailableReplicas != tc.avail {
				t.Errorf("status = %+v", st)
			}
			var got *appsv1.ReplicaSetCondition
			for i := range st.Conditions {
				if st.Conditions[i].Type == appsv1.ReplicaSetReplicaFailure {
					got = &st.Conditions[i]
				}
			}
			switch {
			case tc.wantReason == "" && got != nil:
				t.Errorf("unexpected condition %+v", got)
			case tc.wantReason != "" && (got == nil || got.Reason != tc.wantReason || got.Message != tc.wantMessage || got.Status != corev1.ConditionTrue):
				t.Errorf("condition = %+v, want %s %q", got, tc.wantReason, tc.wantMessage)
			}
		})
	}
}

func TestRollingUpdateArithmetic(t *testing.T) {
	pct := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	num := func(n int) *intstr.IntOrString { v := intstr.FromInt32(int32(n)); return &v }
	cases := []struct {
		replicas                  int32
		surge, unavailable        *intstr.IntOrString
		wantSurge, wantUnavailble int32
	}{
		{2, pct("25%"), pct("25%"), 1, 0},
		{4, pct("25%"), pct("25%"), 1, 1},
		{10, pct("25%"), pct("25%"), 3, 2},
		{1, num(0), num(0), 0, 1},
		{3, num(0), pct("1%"), 0, 1},
		{5, num(2), num(9), 2, 5},
	}
	for _, tc := range cases {
		d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: &tc.replicas, Strategy: appsv1.DeploymentStrategy{
			Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: tc.surge, MaxUnavailable: tc.unavailable}}}}
		if s, u := maxSurge(d), maxUnavailable(d); s != tc.wantSurge || u != tc.wantUnavailble {
			t.Errorf("replicas %d surge %v unavailable %v: got %d/%d, want %d/%d", tc.replicas, tc.surge, tc.unavailable, s, u, tc.wantSurge, tc.wantUnavailble)
		}
	}
	// newRSNewReplicas: 5 replicas, surge 25% (2): the new ReplicaSet grows by what the
	// surge allows and never past the replicas.
	five := int32(5)
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: &five, Strategy: appsv1.DeploymentStrategy{
		Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: pct("25%"), MaxUnavailable: pct("25%")}}}}
	rs := func(n int32) *appsv1.ReplicaSet { return &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Replicas: &n}} }
	for _, tc := range []struct{ old, cur, want int32 }{{5, 0, 2}, {4, 2, 3}, {0, 0, 5}, {3, 4, 4}} {
		newRS := rs(tc.cur)
		got, err := newRSNewReplicas(d, []*appsv1.ReplicaSet{rs(tc.old), newRS}, newRS)
		if err != nil || got != tc.want {
			t.Errorf("old %d new %d: newRSNewReplicas = %d (%v), want %d", tc.old, tc.cur, got, err, tc.want)
		}
	}
}

func TestComputeHash(t *testing.T) {
	tmpl := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "nginx"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}}}
	h := computeHash(tmpl, nil)
	if h != computeHash(tmpl.DeepCopy(), nil) {
		t.Fatal("hash must be stable")
	}
	one := int32(1)
	if h == computeHash(tmpl, &one) {
		t.Fatal("collision count must change the hash")
	}
	for _, r := range h {
		if !strings.ContainsRune("bcdfghjklmnpqrstvwxz2456789", r) {
			t.Fatalf("hash %q is not SafeEncodeString output", h)
		}
	}
	other := tmpl.DeepCopy()
	other.Spec.Containers[0].Image = "nginx:1.27"
	if h == computeHash(other, nil) {
		t.Fatal("template change must change the hash")
	}
}

// TestFullyLabeledReplicas: a claimed pod is fully labelled when it carries the template's
// labels; a selector asking exactly those labels needs no look at the pods, one asking
// fewer does.
func TestFullyLabeledReplicas(t *testing.T) {
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	two := int32(2)
	template := map[string]string{"app": "x", "tier": "web"}
	labelled, bare := readyPod("a", true, now), readyPod("b", true, now)
	labelled.Labels = map[string]string{"app": "x", "tier": "web", "extra": "1"}
	for _, tc := range []struct {
		selector map[string]string
		pods     []*corev1.Pod
		want     int32
	}{
		{template, []*corev1.Pod{labelled}, 1},
		{map[string]string{"app": "x"}, []*corev1.Pod{labelled, bare}, 1},
	} {
		rs := &appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: tc.selector},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: template}}}}
		if st := calculateRSStatus(rs, viewsOf(tc.pods), nil, now); st.FullyLabeledReplicas != tc.want || st.Replicas != int32(len(tc.pods)) {
			t.Errorf("selector %v: %d of %d pods fully labelled, want %d", tc.selector, st.FullyLabeledReplicas, st.Replicas, tc.want)
		}
	}
}

func TestSortPodsForDeletion(t *testing.T) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	pending := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pending"}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	notReady := readyPod("running-not-ready", false, now)
	readyNew := readyPod("ready-new", true, now)
	readyOld := readyPod("ready-old", true, now.Add(-time.Hour))
	assigned := readyPod("assigned", true, now.Add(-2*time.Hour))
	assigned.Spec.NodeName = "node"
	restarted := readyPod("ready-old-restarted", true, now.Add(-time.Hour))
	restarted.Status.ContainerStatuses = []corev1.ContainerStatus{{RestartCount: 1}, {RestartCount: 4}}
	newer := readyPod("ready-old-newer", true, now.Add(-time.Hour))
	newer.CreationTimestamp = metav1.NewTime(now)
	unknown := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "unknown"}, Status: corev1.PodStatus{Phase: corev1.PodUnknown}}
	pods := []*corev1.Pod{assigned, readyOld, newer, restarted, readyNew, unknown, notReady, pending}
	want := []string{"pending", "unknown", "running-not-ready", "ready-new", "ready-old-restarted", "ready-old-newer", "ready-old", "assigned"}
	// A ReplicaSet ranks its pods' views, a Job its pods: one order.
	views := viewsOf(pods)
	sortPodsForDeletion(pods)
	sortForDeletion(views, viewRank)
	var got, gotViews []string
	for i := range pods {
		got, gotViews = append(got, pods[i].Name), append(gotViews, views[i].Name)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(gotViews) != fmt.Sprint(want) {
		t.Errorf("deletion order = %v (pods), %v (views), want %v", got, gotViews, want)
	}
}

func TestSlowStartBatch(t *testing.T) {
	for _, tc := range []struct{ count, failAt, wantOK, wantCalls int }{
		{7, -1, 7, 7}, {7, 0, 0, 1}, {7, 2, 2, 3}, {7, 4, 6, 7}, {0, -1, 0, 0},
	} {
		calls := make(chan int, 100)
		ok, err := slowStartBatch(tc.count, 1, func(i int) error {
			calls <- i
			if i == tc.failAt {
				return errors.New("refused")
			}
			return nil
		})
		if ok != tc.wantOK || (tc.failAt >= 0) != (err != nil) || len(calls) != tc.wantCalls {
			t.Errorf("count %d failAt %d: ok %d err %v calls %d, want ok %d calls %d", tc.count, tc.failAt, ok, err, len(calls), tc.wantOK, tc.wantCalls)
		}
	}
}
