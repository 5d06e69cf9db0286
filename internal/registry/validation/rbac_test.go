package validation

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/registry/defaults"
)

// TestRBAC: upstream's field errors for Roles, ClusterRoles and bindings (after the rbac/v1
// defaults), one per case, word for word.
func TestRBAC(t *testing.T) {
	read := rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	role := func(rules ...rbacv1.PolicyRule) *rbacv1.Role {
		return &rbacv1.Role{ObjectMeta: meta("r"), Rules: rules}
	}
	cluster := func(rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Rules: rules}
	}
	rb := func(ref rbacv1.RoleRef, subjects ...rbacv1.Subject) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{ObjectMeta: meta("b"), RoleRef: ref, Subjects: subjects}
	}
	crb := func(ref rbacv1.RoleRef, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
		return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}, RoleRef: ref, Subjects: subjects}
	}
	view := rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"}
	user := rbacv1.Subject{Kind: "User", Name: "alice"}
	aggregated := cluster()
	aggregated.AggregationRule = &rbacv1.AggregationRule{}
	badSelector := cluster()
	badSelector.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}}}

	cases := []struct {
		name string
		obj  runtime.Object
		want []string
	}{
		{"valid role", role(read), nil},
		{"valid binding", rb(view, user), nil},
		{"rule without verbs", role(rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}}),
			[]string{"rules[0].verbs: Required value"}},
		{"rule without groups and resources", cluster(rbacv1.PolicyRule{Verbs: []string{"get"}}),
			[]string{"rules[0].apiGroups: Required value: resource rules must supply at least one api group",
				"rules[0].resources: Required value: resource rules must supply at least one resource"}},
		{"namespaced URL", role(rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}),
			[]string{`rules[0].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs`}},
		{"URL and resources", cluster(rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/x"}, Resources: []string{"pods"}}),
			[]string{`rules[0].nonResourceURLs: Invalid value: ["/x"]: rules cannot apply to both regular resources and non-resource URLs`}},
		{"cluster URL", cluster(rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}), nil},
		{"name with a slash", &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "a/b"}},
			[]string{`metadata.name: Invalid value: "a/b": may not contain '/'`}},
		{"name ..", &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ".."}},
			[]string{`metadata.name: Invalid value: "..": may not be '..'`}},
		{"colons are fine", &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "system:basic-user"}}, nil},
		{"aggregation without selectors", aggregated,
			[]string{"aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil"}},
		{"aggregation bad selector", badSelector,
			[]string{`aggregationRule.clusterRoleSelectors[0].matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator`,
				`aggregationRule.clusterRoleSelectors[0]: Invalid value: null: invalid label selector.`}},
		{"roleRef kind", rb(rbacv1.RoleRef{Kind: "Secret", Name: "x"}),
			[]string{`roleRef.kind: Unsupported value: "Secret": supported values: "Role", "ClusterRole"`}},
		{"roleRef group", rb(rbacv1.RoleRef{APIGroup: "example.com", Kind: "Role", Name: "x"}),
			[]string{`roleRef.apiGroup: Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"`}},
		{"roleRef name", rb(rbacv1.RoleRef{Kind: "Role"}), []string{"roleRef.name: Required value"}},
		{"clusterrolebinding to a Role", crb(rbacv1.RoleRef{Kind: "Role", Name: "x"}),
			[]string{`roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"`}},
		{"subject kind", rb(view, rbacv1.Subject{Kind: "Robot", Name: "r"}),
			[]string{`subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"`}},
		{"subject name", rb(view, rbacv1.Subject{Kind: "User"}), []string{"subjects[0].name: Required value"}},
		{"user apiGroup", rb(view, rbacv1.Subject{Kind: "User", Name: "a", APIGroup: "v1"}),
			[]string{`subjects[0].apiGroup: Unsupported value: "v1": supported values: "rbac.authorization.k8s.io"`}},
		{"service account apiGroup", rb(view, rbacv1.Subject{Kind: "ServiceAccount", Name: "a", APIGroup: "rbac.authorization.k8s.io"}),
			[]string{`subjects[0].apiGroup: Unsupported value: "rbac.authorization.k8s.io": supported values: ""`}},
		{"service account name", rb(view, rbacv1.Subject{Kind: "ServiceAccount", Name: "A_b"}),
			[]string{`subjects[0].name: Invalid value: "A_b": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`}},
		{"namespaced service account", rb(view, rbacv1.Subject{Kind: "ServiceAccount", Name: "sa"}), nil},
		{"cluster service account", crb(view, rbacv1.Subject{Kind: "ServiceAccount", Name: "sa"}),
			[]string{"subjects[0].namespace: Required value"}},
	}
	for _, c := range cases {
		defaults.Apply(c.obj)
		errs := Validate(c.obj)
		var got []string
		for _, e := range errs {
			got = append(got, e.Error())
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s:\n got %s\nwant %s", c.name, got[i], c.want[i])
			}
		}
	}
}

// TestRBACRoleRefImmutable: a binding's roleRef cannot change; its subjects can.
func TestRBACRoleRefImmutable(t *testing.T) {
	old := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns", ResourceVersion: "1"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}}
	n := old.DeepCopy()
	n.Subjects = []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "bob"}}
	if errs := ValidateUpdate(n, old); len(errs) != 0 {
		t.Errorf("subjects change: %v", errs)
	}
	n.RoleRef.Name = "edit"
	errs := ValidateUpdate(n, old)
	want := `roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}: cannot change roleRef`
	if len(errs) != 1 || errs[0].Error() != want {
		t.Errorf("roleRef change: %v, want %s", errs, want)
	}
	oc := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", ResourceVersion: "1"}, RoleRef: old.RoleRef}
	nc := oc.DeepCopy()
	nc.RoleRef.Name = "admin"
	if errs := ValidateUpdate(nc, oc); len(errs) != 1 || errs[0].Detail != "cannot change roleRef" {
		t.Errorf("clusterrolebinding roleRef change: %v", errs)
	}
}
