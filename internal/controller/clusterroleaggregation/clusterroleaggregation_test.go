package clusterroleaggregation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAggregate(t *testing.T) {
	read := rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	write := rbacv1.PolicyRule{Verbs: []string{"create"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	urls := rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics"}}
	role := func(name string, labels map[string]string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: rules}
	}
	agg := role("agg", map[string]string{"a": "true"}, urls) // matches its own selector: skipped
	agg.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
		{MatchLabels: map[string]string{"a": "true"}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "b", Operator: metav1.LabelSelectorOpExists}}},
	}}
	roles := []*rbacv1.ClusterRole{ // sorted by name, as the controller passes them
		agg,
		role("one", map[string]string{"a": "true"}, write, read),
		role("three", map[string]string{"c": "x"}, urls),
		role("two", map[string]string{"a": "true", "b": ""}, read, urls),
	}
	want := []rbacv1.PolicyRule{write, read, urls}
	if got := Aggregate(agg, roles); !cmp.Equal(got, want) {
		t.Errorf("Aggregate: %s", cmp.Diff(want, got))
	}
	none := role("none", nil)
	none.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"z": "z"}}}}
	if got := Aggregate(none, roles); got == nil || len(got) != 0 {
		t.Errorf("no match: %#v, want an empty list", got)
	}
}
