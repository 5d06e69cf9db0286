package rbac

import (
	"fmt"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/auth"
)

func clusterRole(name string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
}

func role(ns, name string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
}

func roleBinding(ns, name, kind, roleName string, subjects ...rbacv1.Subject) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: roleName}, Subjects: subjects}
}

func clusterRoleBinding(name, roleName string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roleName}, Subjects: subjects}
}

func userSubject(n string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: n}
}
func groupSubject(n string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: n}
}
func saSubject(ns, n string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: n}
}

func rule(verbs, groups, resources []string, names ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources, ResourceNames: names}
}

func l(s ...string) []string { return s }

// fixture is a small cluster: alice admin-like in team-a through a RoleBinding to a
// ClusterRole, the team-a group reading pods there, a ServiceAccount editing configmaps, a
// monitoring group reading /metrics, a binding to a missing role.
func fixture() Objects {
	return Objects{
		ClusterRoles: []*rbacv1.ClusterRole{
			clusterRole("ns-admin", rule(l("*"), l("apps"), l("*")), rule(l("*"), l(""), l("pods", "pods/status")), rule(l("get", "list", "watch"), l(""), l("resourcequotas", "resourcequotas/status"))),
			clusterRole("pod-reader", rule(l("get", "list", "watch"), l(""), l("pods", "pods/log"))),
			clusterRole("ns-reader", rule(l("get"), l(""), l("namespaces"))),
			clusterRole("monitoring", rbacv1.PolicyRule{Verbs: l("get"), NonResourceURLs: l("/metrics")}),
			clusterRole("discovery", rbacv1.PolicyRule{Verbs: l("get"), NonResourceURLs: l("/api", "/api/*", "/apis", "/apis/*")}),
		},
		Roles: []*rbacv1.Role{
			role("team-a", "cm-editor", rule(l("get", "update", "create", "delete", "deletecollection"), l(""), l("configmaps"))),
			role("team-a", "one-secret", rule(l("get", "update"), l(""), l("secrets"), "token")),
			role("team-b", "cm-editor", rule(l("*"), l(""), l("configmaps"))),
		},
		RoleBindings: []*rbacv1.RoleBinding{
			roleBinding("team-a", "alice-admin", "ClusterRole", "ns-admin", userSubject("alice")),
			roleBinding("team-a", "readers", "ClusterRole", "pod-reader", groupSubject("team-a")),
			roleBinding("team-a", "sa-cm", "Role", "cm-editor", saSubject("", "builder")),
			roleBinding("team-a", "bob-secret", "Role", "one-secret", userSubject("bob")),
			roleBinding("team-a", "bob-missing", "Role", "gone", userSubject("bob")),
			// A RoleBinding in team-b cannot reach team-a's Role of the same name from team-b.
			roleBinding("team-b", "carol-cm", "Role", "cm-editor", userSubject("carol")),
		},
		ClusterRoleBindings: []*rbacv1.ClusterRoleBinding{
			clusterRoleBinding("monitoring", "monitoring", groupSubject("system:monitoring")),
			clusterRoleBinding("discovery", "discovery", groupSubject(auth.AllAuthenticated)),
			clusterRoleBinding("carol-ns", "ns-reader", userSubject("carol")),
			clusterRoleBinding("sa-no-ns", "ns-admin", saSubject("", "builder")),
			clusterRoleBinding("dave-missing", "gone", userSubject("dave")),
		},
	}
}

func TestAuthorize(t *testing.T) {
	a := New()
	a.Update(fixture())
	alice := auth.User{Name: "alice", Groups: l("team-a", auth.AllAuthenticated)}
	bob := auth.User{Name: "bob", Groups: l(auth.AllAuthenticated)}
	carol := auth.User{Name: "carol", Groups: l(auth.AllAuthenticated)}
	dave := auth.User{Name: "dave", Groups: l(auth.AllAuthenticated)}
	sa := auth.User{Name: "system:serviceaccount:team-a:builder", Groups: l(auth.AllServiceAccounts, "system:serviceaccounts:team-a", auth.AllAuthenticated)}
	otherSA := auth.User{Name: "system:serviceaccount:team-b:builder", Groups: l(auth.AllServiceAccounts, auth.AllAuthenticated)}
	teamMember := auth.User{Name: "erin", Groups: l("team-a", auth.AllAuthenticated)}
	admin := auth.User{Name: "root", Groups: l(auth.SystemMasters)}
	monitor := auth.User{Name: "prom", Groups: l("system:monitoring")}
	res := func(u auth.User, verb, ns, group, resource, sub, name string) auth.Attributes {
		return auth.Attributes{User: u, ResourceRequest: true, Verb: verb, Namespace: ns, APIGroup: group, APIVersion: "v1", Resource: resource, Subresource: sub, Name: name}
	}
	path := func(u auth.User, verb, p string) auth.Attributes {
		return auth.Attributes{User: u, Verb: verb, Path: p}
	}
	cases := []struct {
		name   string
		a      auth.Attributes
		want   auth.Decision
		reason string
	}{
		{"namespace role binding allows in its namespace", res(alice, "create", "team-a", "", "pods", "", ""), auth.Allow, `RBAC: allowed by RoleBinding "alice-admin/team-a" of ClusterRole "ns-admin" to User "alice"`},
		{"wildcard verbs", res(alice, "update", "team-a", "", "pods", "status", "p"), auth.Allow, `RBAC: allowed by RoleBinding "alice-admin/team-a" of ClusterRole "ns-admin" to User "alice"`},
		{"wildcard resources cover subresources", res(alice, "update", "team-a", "apps", "deployments", "scale", "d"), auth.Allow, `RBAC: allowed by RoleBinding "alice-admin/team-a" of ClusterRole "ns-admin" to User "alice"`},
		{"wildcard resources in a listed group", res(alice, "deletecollection", "team-a", "apps", "deployments", "", ""), auth.Allow, `RBAC: allowed by RoleBinding "alice-admin/team-a" of ClusterRole "ns-admin" to User "alice"`},
		{"group not listed", res(alice, "create", "team-a", "batch", "jobs", "", ""), auth.NoOpinion, ""},
		{"not in another namespace", res(alice, "get", "team-b", "", "pods", "", "p"), auth.NoOpinion, ""},
		{"not at cluster scope", res(alice, "list", "", "", "pods", "", ""), auth.NoOpinion, ""},
		{"group subject", res(teamMember, "get", "team-a", "", "pods", "log", "p"), auth.Allow, `RBAC: allowed by RoleBinding "readers/team-a" of ClusterRole "pod-reader" to Group "team-a"`},
		{"group subject, verb not granted", res(teamMember, "delete", "team-a", "", "pods", "", "p"), auth.NoOpinion, ""},
		{"group subject, subresource not granted", res(teamMember, "get", "team-a", "", "pods", "status", "p"), auth.NoOpinion, ""},
		{"service account subject defaults to the binding's namespace", res(sa, "update", "team-a", "", "configmaps", "", "c"), auth.Allow, `RBAC: allowed by RoleBinding "sa-cm/team-a" of Role "cm-editor" to ServiceAccount "builder/team-a"`},
		{"service account of another namespace", res(otherSA, "update", "team-a", "", "configmaps", "", "c"), auth.NoOpinion, ""},
		{"service account without namespace in a ClusterRoleBinding matches nobody", res(sa, "get", "team-b", "", "pods", "", "p"), auth.NoOpinion, ""},
		{"deletecollection granted", res(sa, "deletecollection", "team-a", "", "configmaps", "", ""), auth.Allow, `RBAC: allowed by RoleBinding "sa-cm/team-a" of Role "cm-editor" to ServiceAccount "builder/team-a"`},
		{"create-with-name is not a resourceNames match", res(bob, "create", "team-a", "", "secrets", "", ""), auth.NoOpinion, "RBAC: role.rbac.authorization.k8s.io \"gone\" not found"},
		{"resourceNames allow the name", res(bob, "get", "team-a", "", "secrets", "", "token"), auth.Allow, `RBAC: allowed by RoleBinding "bob-secret/team-a" of Role "one-secret" to User "bob"`},
		{"resourceNames refuse another name", res(bob, "get", "team-a", "", "secrets", "", "other"), auth.NoOpinion, "RBAC: role.rbac.authorization.k8s.io \"gone\" not found"},
		{"resourceNames refuse a list", res(bob, "list", "team-a", "", "secrets", "", ""), auth.NoOpinion, "RBAC: role.rbac.authorization.k8s.io \"gone\" not found"},
		{"missing role not reported outside its namespace", res(bob, "list", "team-b", "", "secrets", "", ""), auth.NoOpinion, ""},
		{"missing cluster role reported everywhere", res(dave, "get", "team-b", "", "pods", "", "p"), auth.NoOpinion, "RBAC: clusterrole.rbac.authorization.k8s.io \"gone\" not found"},
		{"a RoleBinding's Role is its namespace's", res(carol, "delete", "team-b", "", "configmaps", "", "c"), auth.Allow, `RBAC: allowed by RoleBinding "carol-cm/team-b" of Role "cm-editor" to User "carol"`},
		{"the same Role name elsewhere grants nothing", res(carol, "delete", "team-a", "", "configmaps", "", "c"), auth.NoOpinion, ""},
		{"cluster role binding allows a cluster-scoped resource", res(carol, "get", "", "", "namespaces", "", "team-a"), auth.Allow, `RBAC: allowed by ClusterRoleBinding "carol-ns" of ClusterRole "ns-reader" to User "carol"`},
		{"cluster role binding allows in every namespace", res(carol, "get", "team-a", "", "namespaces", "", "team-a"), auth.Allow, `RBAC: allowed by ClusterRoleBinding "carol-ns" of ClusterRole "ns-reader" to User "carol"`},
		{"quota read allowed", res(alice, "get", "team-a", "", "resourcequotas", "", "compute"), auth.Allow, `RBAC: allowed by RoleBinding "alice-admin/team-a" of ClusterRole "ns-admin" to User "alice"`},
		{"quota update refused", res(alice, "update", "team-a", "", "resourcequotas", "", "compute"), auth.NoOpinion, ""},
		{"quota status update refused", res(alice, "update", "team-a", "", "resourcequotas", "status", "compute"), auth.NoOpinion, ""},
		{"system:masters allowed anything", res(admin, "escalate", "", "rbac.authorization.k8s.io", "clusterroles", "", "x"), auth.Allow, ""},
		{"system:masters allowed any path", path(admin, "post", "/anything"), auth.Allow, ""},
		{"non-resource URL through a ClusterRoleBinding", path(monitor, "get", "/metrics"), auth.Allow, `RBAC: allowed by ClusterRoleBinding "monitoring" of ClusterRole "monitoring" to Group "system:monitoring"`},
		{"non-resource URL, other verb", path(monitor, "post", "/metrics"), auth.NoOpinion, ""},
		{"non-resource URL not granted", path(alice, "get", "/metrics"), auth.NoOpinion, ""},
		{"non-resource prefix", path(alice, "get", "/apis/apps/v1"), auth.Allow, `RBAC: allowed by ClusterRoleBinding "discovery" of ClusterRole "discovery" to Group "system:authenticated"`},
		{"non-resource URLs never through a RoleBinding", auth.Attributes{User: alice, Verb: "get", Path: "/healthz", Namespace: "team-a"}, auth.NoOpinion, ""},
		{"nobody", res(auth.User{Name: "mallory"}, "get", "team-a", "", "pods", "", "p"), auth.NoOpinion, ""},
	}
	for _, c := range cases {
		d, reason, err := a.Authorize(t.Context(), c.a)
		if err != nil || d != c.want || reason != c.reason {
			t.Errorf("%s: Authorize = %v, %q, %v; want %v, %q", c.name, d, reason, err, c.want, c.reason)
		}
	}
}

func TestAuthorizeReasonAggregates(t *testing.T) {
	a := New()
	a.Update(Objects{
		RoleBindings:        []*rbacv1.RoleBinding{roleBinding("ns", "b", "Role", "r1", userSubject("u"))},
		ClusterRoleBindings: []*rbacv1.ClusterRoleBinding{clusterRoleBinding("c", "c1", userSubject("u"), groupSubject("g"))},
	})
	_, reason, _ := a.Authorize(t.Context(), auth.Attributes{User: auth.User{Name: "u", Groups: l("g")}, ResourceRequest: true, Verb: "get", Namespace: "ns", Resource: "pods"})
	want := `RBAC: [clusterrole.rbac.authorization.k8s.io "c1" not found, role.rbac.authorization.k8s.io "r1" not found]`
	if reason != want {
		t.Errorf("reason = %q, want %q", reason, want)
	}
}

func TestRulesFor(t *testing.T) {
	a := New()
	a.Update(fixture())
	alice := auth.User{Name: "alice", Groups: l("team-a", auth.AllAuthenticated)}
	rules, incomplete, err := a.RulesFor(t.Context(), alice, "team-a")
	if err != nil || incomplete {
		t.Fatalf("RulesFor: %v, %v", incomplete, err)
	}
	var got []string
	for _, r := range rules {
		got = append(got, fmt.Sprint(r.Verbs, r.Resources, r.NonResourceURLs))
	}
	want := []string{
		"[get] [] [/api /api/* /apis /apis/*]",
		"[*] [*] []",
		"[*] [pods pods/status] []",
		"[get list watch] [resourcequotas resourcequotas/status] []",
		"[get list watch] [pods pods/log] []",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rules = %q, want %q", got, want)
	}
	rules, incomplete, err = a.RulesFor(t.Context(), alice, "team-b")
	if err != nil || incomplete || len(rules) != 1 {
		t.Errorf("team-b: %v, %v, %v", rules, incomplete, err)
	}
	bob := auth.User{Name: "bob"}
	rules, incomplete, err = a.RulesFor(t.Context(), bob, "team-a")
	if !incomplete || err == nil || err.Error() != `role.rbac.authorization.k8s.io "gone" not found` || len(rules) != 1 {
		t.Errorf("bob: %v, %v, %v", rules, incomplete, err)
	}
}

func TestUpdateReplacesPolicy(t *testing.T) {
	a := New()
	attrs := auth.Attributes{User: auth.User{Name: "alice"}, ResourceRequest: true, Verb: "get", Namespace: "team-a", Resource: "pods", Name: "p"}
	if d, _, _ := a.Authorize(t.Context(), attrs); d == auth.Allow {
		t.Fatal("an empty policy allows")
	}
	a.Update(fixture())
	if d, _, _ := a.Authorize(t.Context(), attrs); d != auth.Allow {
		t.Fatal("the binding is not seen")
	}
	a.Update(Objects{})
	if d, _, _ := a.Authorize(t.Context(), attrs); d == auth.Allow {
		t.Fatal("the removed binding still allows")
	}
}

// BenchmarkAuthorize measures one authorization of a non-admin user bound through a
// RoleBinding, among 100 RoleBindings and 20 ClusterRoles.
func BenchmarkAuthorize(b *testing.B) {
	var objs Objects
	for i := range 20 {
		objs.ClusterRoles = append(objs.ClusterRoles, clusterRole(fmt.Sprintf("role-%d", i),
			rule(l("get", "list", "watch"), l(""), l("configmaps", "secrets", "services")),
			rule(l("get", "list", "watch", "create", "update", "patch", "delete"), l("", "apps"), l("pods", "deployments", "replicasets"))))
	}
	for i := range 100 {
		objs.RoleBindings = append(objs.RoleBindings, roleBinding(fmt.Sprintf("ns-%d", i%10), fmt.Sprintf("rb-%d", i), "ClusterRole", fmt.Sprintf("role-%d", i%20),
			userSubject(fmt.Sprintf("user-%d", i)), groupSubject(fmt.Sprintf("group-%d", i%7))))
	}
	a := New()
	a.Update(objs)
	attrs := auth.Attributes{User: auth.User{Name: "user-42", Groups: l("group-3", auth.AllAuthenticated)}, ResourceRequest: true, Verb: "create", Namespace: "ns-2", APIVersion: "v1", Resource: "pods"}
	if d, _, _ := a.Authorize(b.Context(), attrs); d != auth.Allow {
		b.Fatal("not allowed")
	}
	b.ReportAllocs()
	for b.Loop() {
		a.Authorize(b.Context(), attrs)
	}
}
