package policy_test

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/admission/policy"
)

func TestMatches(t *testing.T) {
	pods := corev1.SchemeGroupVersion.WithResource("pods")
	rule := func(ops []admissionregistrationv1.OperationType, groups, versions, resources []string, names ...string) admissionregistrationv1.NamedRuleWithOperations {
		return admissionregistrationv1.NamedRuleWithOperations{ResourceNames: names, RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: ops, Rule: admissionregistrationv1.Rule{APIGroups: groups, APIVersions: versions, Resources: resources}}}
	}
	all := []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll}
	create := []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
	core, v1, star := []string{""}, []string{"v1"}, []string{"*"}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"app": "web"}}}
	oldPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"app": "old"}}}
	attrs := func(op admission.Operation, gvr schema.GroupVersionResource, sub, ns, name string) *admission.Attributes {
		a := &admission.Attributes{Operation: op, Resource: gvr, Subresource: sub, Namespace: ns, Name: name, Object: pod}
		if op == admission.Update {
			a.OldObject = oldPod
		}
		return a
	}
	nsLabels := map[string]string{"env": "prod"}
	tests := []struct {
		name string
		m    *admissionregistrationv1.MatchResources
		a    *admission.Attributes
		want bool
	}{
		{"nil matches everything", nil, attrs(admission.Create, pods, "", "ns", "p"), true},
		{"no rules match every resource", &admissionregistrationv1.MatchResources{}, attrs(admission.Delete, pods, "", "ns", "p"), true},
		{"exact rule", &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(create, core, v1, []string{"pods"})}}, attrs(admission.Create, pods, "", "ns", "p"), true},
		{"other operation", &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(create, core, v1, []string{"pods"})}}, attrs(admission.Update, pods, "", "ns", "p"), false},
		{"other group", &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(all, []string{"apps"}, v1, []string{"pods"})}}, attrs(admission.Create, pods, "", "ns", "p"), false},
		{"* is every main resource", &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(all, star, star, star)}}, attrs(admission.Create, pods, "", "ns", "p"), true},
		{"* is not a subresource", &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(all, star, star, star)}}, attrs(admission.Update, pods, "status", "ns", "p"), false},
		{"*/* is every subresource", &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(all, star, star, []string{"*/*"})}}, attrs(admission.Update, pods, "status", "ns", "p"), true},
		{"pods/status", &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(all, core, v1, []string{"pods/status"})}}, attrs(admission.Update, pods, "status", "ns", "p"), true},
		{"pods/status is not pods", &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(all, core, v1, []string{"pods/status"})}}, attrs(admission.Update, pods, "", "ns", "p"), false},
		{"pods/* includes pods", &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(all, core, v1, []string{"pods/*"})}}, attrs(admission.Update, pods, "", "ns", "p"), true},
		{"*/scale", &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(all, star, star, []string{"*/scale"})}}, attrs(admission.Update, pods, "scale", "ns", "p"), true},
		{"resourceNames", &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(all, core, v1, []string{"pods"}, "q")}}, attrs(admission.Create, pods, "", "ns", "p"), false},
		{"resourceNames and generateName", &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(all, core, v1, []string{"pods"}, "p")}}, attrs(admission.Create, pods, "", "ns", ""), false},
		{"excluded", &admissionregistrationv1.MatchResources{ExcludeResourceRules: []admissionregistrationv1.NamedRuleWithOperations{rule(all, core, v1, []string{"pods"})}}, attrs(admission.Create, pods, "", "ns", "p"), false},
		{"Cluster scope", &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{func() admissionregistrationv1.NamedRuleWithOperations {
			r := rule(all, star, star, star)
			r.Scope = ptr.To(admissionregistrationv1.ClusterScope)
			return r
		}()}}, attrs(admission.Create, pods, "", "ns", "p"), false},
		{"namespace selector", &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, attrs(admission.Create, pods, "", "ns", "p"), true},
		{"namespace selector not matching", &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}}, attrs(admission.Create, pods, "", "ns", "p"), false},
		{"namespace selector, cluster-scoped request", &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}}, attrs(admission.Create, corev1.SchemeGroupVersion.WithResource("nodes"), "", "", "n"), true},
		{"object selector, new labels", &admissionregistrationv1.MatchResources{ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}, attrs(admission.Create, pods, "", "ns", "p"), true},
		{"object selector, old labels", &admissionregistrationv1.MatchResources{ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "old"}}}, attrs(admission.Update, pods, "", "ns", "p"), true},
		{"object selector not matching", &admissionregistrationv1.MatchResources{ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}, attrs(admission.Update, pods, "", "ns", "p"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := policy.Matches(tt.m, policy.Request{Attr: tt.a, NamespaceLabels: func() (map[string]string, error) { return nsLabels, nil }})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Matches = %v, want %v", got, tt.want)
			}
		})
	}
}
