package workloads

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNodeShouldRun(t *testing.T) {
	node := func(labels map[string]string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	ds := func(mut func(*corev1.PodSpec)) *appsv1.DaemonSet {
		d := &appsv1.DaemonSet{}
		if mut != nil {
			mut(&d.Spec.Template.Spec)
		}
		return d
	}
	affinity := func(terms ...corev1.NodeSelectorTerm) func(*corev1.PodSpec) {
		return func(s *corev1.PodSpec) {
			s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
		}
	}
	expr := func(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}
	}
	tests := []struct {
		name                 string
		node                 *corev1.Node
		ds                   *appsv1.DaemonSet
		shouldRun, shouldCon bool
	}{
		{"plain", node(nil), ds(nil), true, true},
		{"nodeSelector matches", node(map[string]string{"a": "b"}), ds(func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"a": "b"} }), true, true},
		{"nodeSelector does not match", node(map[string]string{"a": "c"}), ds(func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{"a": "b"} }), false, false},
		{"other nodeName", node(nil), ds(func(s *corev1.PodSpec) { s.NodeName = "n2" }), false, false},
		{"affinity In", node(map[string]string{"zone": "x"}), ds(affinity(expr("zone", corev1.NodeSelectorOpIn, "x", "y"))), true, true},
		{"affinity terms are ORed", node(map[string]string{"zone": "x"}), ds(affinity(expr("zone", corev1.NodeSelectorOpIn, "y"), expr("zone", corev1.NodeSelectorOpExists))), true, true},
		{"affinity NotIn", node(map[string]string{"zone": "x"}), ds(affinity(expr("zone", corev1.NodeSelectorOpNotIn, "x"))), false, false},
		{"affinity Gt", node(map[string]string{"cpus": "8"}), ds(affinity(expr("cpus", corev1.NodeSelectorOpGt, "4"))), true, true},
		{"empty term matches nothing", node(nil), ds(affinity(corev1.NodeSelectorTerm{})), false, false},
		{"matchFields metadata.name", node(nil), ds(affinity(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}}}})), true, true},
		{"NoSchedule taint", node(nil, corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoSchedule}), ds(nil), false, true},
		{"NoExecute taint", node(nil, corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoExecute}), ds(nil), false, false},
		{"PreferNoSchedule taint", node(nil, corev1.Taint{Key: "k", Effect: corev1.TaintEffectPreferNoSchedule}), ds(nil), true, true},
		{"tolerated taint", node(nil, corev1.Taint{Key: "k", Value: "v", Effect: corev1.TaintEffectNoSchedule}),
			ds(func(s *corev1.PodSpec) {
				s.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpEqual, Value: "v", Effect: corev1.TaintEffectNoSchedule}}
			}), true, true},
		{"unschedulable taint tolerated by default", node(nil, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}), ds(nil), true, true},
		{"not-ready taint tolerated by default", node(nil, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}), ds(nil), true, true},
		{"network-unavailable only with hostNetwork", node(nil, corev1.Taint{Key: corev1.TaintNodeNetworkUnavailable, Effect: corev1.TaintEffectNoSchedule}), ds(nil), false, true},
		{"network-unavailable with hostNetwork", node(nil, corev1.Taint{Key: corev1.TaintNodeNetworkUnavailable, Effect: corev1.TaintEffectNoSchedule}), ds(func(s *corev1.PodSpec) { s.HostNetwork = true }), true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, cont := nodeShouldRun(tt.node, tt.ds)
			if run != tt.shouldRun || cont != tt.shouldCon {
				t.Errorf("nodeShouldRun = (%v, %v), want (%v, %v)", run, cont, tt.shouldRun, tt.shouldCon)
			}
		})
	}
}

func TestBindToNode(t *testing.T) {
	other := corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "a", Operator: corev1.NodeSelectorOpExists}}}
	for _, a := range []*corev1.Affinity{
		nil,
		{},
		{NodeAffinity: &corev1.NodeAffinity{}},
		{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{other}}}},
	} {
		got := bindToNode(a.DeepCopy(), "n1")
		p := &corev1.Pod{Spec: corev1.PodSpec{Affinity: got}}
		if targetNode(p) != "n1" || len(got.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) != 1 {
			t.Errorf("bindToNode(%+v) = %+v", a, got)
		}
	}
	if targetNode(&corev1.Pod{Spec: corev1.PodSpec{NodeName: "n2", Affinity: bindToNode(nil, "n1")}}) != "n2" {
		t.Error("spec.nodeName wins")
	}
}
