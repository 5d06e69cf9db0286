package auth

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

func TestRuleAllows(t *testing.T) {
	res := func(verb, group, resource, sub, name string) *Attributes {
		return &Attributes{ResourceRequest: true, Verb: verb, APIGroup: group, Resource: resource, Subresource: sub, Name: name, Namespace: "team-a"}
	}
	path := func(verb, p string) *Attributes { return &Attributes{Verb: verb, Path: p} }
	pods := rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	cases := []struct {
		name string
		rule rbacv1.PolicyRule
		a    *Attributes
		want bool
	}{
		{"verb and resource", pods, res("get", "", "pods", "", "p"), true},
		{"other verb", pods, res("delete", "", "pods", "", "p"), false},
		{"other group", pods, res("get", "apps", "pods", "", "p"), false},
		{"subresource needs its own entry", pods, res("get", "", "pods", "status", "p"), false},
		{"resource/subresource", rbacv1.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{""}, Resources: []string{"resourcequotas/status"}}, res("update", "", "resourcequotas", "status", "q"), true},
		{"resource/subresource is not the resource", rbacv1.PolicyRule{Verbs: []string{"update"}, APIGroups: []string{""}, Resources: []string{"resourcequotas/status"}}, res("update", "", "resourcequotas", "", "q"), false},
		{"*/subresource", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"*/scale"}}, res("get", "apps", "deployments", "scale", "d"), true},
		{"wildcards", rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}, res("deletecollection", "batch", "jobs", "", ""), true},
		{"* resource covers subresources", rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"*"}}, res("update", "", "pods", "status", "p"), true},
		{"resourceNames match", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}}, res("get", "", "configmaps", "", "a"), true},
		{"resourceNames other name", rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}}, res("get", "", "configmaps", "", "b"), false},
		{"resourceNames never allow a list", rbacv1.PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}}, res("list", "", "configmaps", "", ""), false},
		{"resource rule is not a path rule", pods, path("get", "/api"), false},
		{"path exact", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics"}}, path("get", "/metrics"), true},
		{"path prefix", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/*"}}, path("get", "/apis/apps/v1"), true},
		{"path prefix other", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/*"}}, path("get", "/api/v1"), false},
		{"path any", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"*"}}, path("get", "/healthz"), true},
		{"path rule is not a resource rule", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"*"}}, res("get", "", "pods", "", "p"), false},
	}
	for _, c := range cases {
		if got := RuleAllows(&c.rule, c.a); got != c.want {
			t.Errorf("%s: RuleAllows = %v, want %v", c.name, got, c.want)
		}
	}
	if !RulesAllow([]rbacv1.PolicyRule{{Verbs: []string{"list"}}, pods}, res("list", "", "pods", "", "")) {
		t.Error("RulesAllow: the second rule allows")
	}
}

func TestUserContext(t *testing.T) {
	if _, ok := UserFrom(t.Context()); ok {
		t.Fatal("a bare context carries no user")
	}
	u := User{Name: "alice", Groups: []string{"team-a", AllAuthenticated}}
	got, ok := UserFrom(WithUser(t.Context(), u))
	if !ok || got.Name != "alice" || !got.InGroup("team-a") || got.InGroup(SystemMasters) {
		t.Fatalf("UserFrom = %+v, %v", got, ok)
	}
	if !SystemUser().InGroup(SystemMasters) {
		t.Fatal("the system user is a master")
	}
}
