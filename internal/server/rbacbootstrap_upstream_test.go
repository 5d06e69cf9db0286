package server

import (
	"os"
	"reflect"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// readPolicy reads one of upstream's bootstrap policy testdata files (v1.37.2, copied into
// testdata/bootstrappolicy as facts).
func readPolicy[T any](t *testing.T, file string) []T {
	t.Helper()
	b, err := os.ReadFile("testdata/bootstrappolicy/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Items []T }
	if err := yaml.Unmarshal(b, &list); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return list.Items
}

// samePolicy checks that ours holds every object of upstream's, equal field for field
// (TypeMeta aside), and nothing else but quotad's own objects (named quotad:…).
func samePolicy[T any](t *testing.T, what string, upstream, ours []T, name func(*T) string, clearType func(*T)) {
	t.Helper()
	byName := map[string]*T{}
	for i := range ours {
		byName[name(&ours[i])] = &ours[i]
	}
	for i := range upstream {
		up := &upstream[i]
		clearType(up)
		got, ok := byName[name(up)]
		if !ok {
			t.Errorf("%s %s is missing", what, name(up))
			continue
		}
		if !reflect.DeepEqual(*got, *up) {
			t.Errorf("%s %s differs from upstream's:\n got %+v\nwant %+v", what, name(up), *got, *up)
		}
		delete(byName, name(up))
	}
	for n := range byName {
		if !strings.HasPrefix(n, "quotad:") {
			t.Errorf("%s %s is not upstream's, nor named quotad:…", what, n)
		}
	}
}

// TestBootstrapPolicyMatchesUpstream: the roles and bindings quotad bootstraps are
// upstream's v1.37.2 bootstrap policy (its testdata) rule for rule and subject for subject,
// labels and annotations included, plus quotad's own (named quotad:…).
func TestBootstrapPolicyMatchesUpstream(t *testing.T) {
	crName := func(r *rbacv1.ClusterRole) string { return r.Name }
	crClear := func(r *rbacv1.ClusterRole) { r.TypeMeta = rbacv1.ClusterRole{}.TypeMeta }
	samePolicy(t, "ClusterRole", append(readPolicy[rbacv1.ClusterRole](t, "cluster-roles.yaml"), readPolicy[rbacv1.ClusterRole](t, "controller-roles.yaml")...),
		DefaultClusterRoles(), crName, crClear)
	crbName := func(b *rbacv1.ClusterRoleBinding) string { return b.Name }
	crbClear := func(b *rbacv1.ClusterRoleBinding) { b.TypeMeta = rbacv1.ClusterRoleBinding{}.TypeMeta }
	samePolicy(t, "ClusterRoleBinding", append(readPolicy[rbacv1.ClusterRoleBinding](t, "cluster-role-bindings.yaml"), readPolicy[rbacv1.ClusterRoleBinding](t, "controller-role-bindings.yaml")...),
		append(DefaultClusterRoleBindings(), joinClusterRoleBindings()...), crbName, crbClear)
	rName := func(r *rbacv1.Role) string { return r.Namespace + "/" + r.Name }
	samePolicy(t, "Role", readPolicy[rbacv1.Role](t, "namespace-roles.yaml"), upstreamRoles(), rName, func(r *rbacv1.Role) { r.TypeMeta = rbacv1.Role{}.TypeMeta })
	rbName := func(b *rbacv1.RoleBinding) string { return b.Namespace + "/" + b.Name }
	samePolicy(t, "RoleBinding", readPolicy[rbacv1.RoleBinding](t, "namespace-role-bindings.yaml"), upstreamRoleBindings(), rbName, func(b *rbacv1.RoleBinding) { b.TypeMeta = rbacv1.RoleBinding{}.TypeMeta })
}
