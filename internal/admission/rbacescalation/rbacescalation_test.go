package rbacescalation

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/auth"
)

func r(verbs []string, groups []string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources}
}

func TestCovers(t *testing.T) {
	core := []string{""}
	cases := []struct {
		name    string
		owner   []rbacv1.PolicyRule
		servant []rbacv1.PolicyRule
		missing string
	}{
		{"exact", []rbacv1.PolicyRule{r([]string{"get", "list"}, core, "pods")}, []rbacv1.PolicyRule{r([]string{"get"}, core, "pods")}, ""},
		{"star verbs groups resources", []rbacv1.PolicyRule{r([]string{"*"}, []string{"*"}, "*")}, []rbacv1.PolicyRule{r([]string{"delete"}, []string{"apps"}, "deployments/scale")}, ""},
		{"servant star needs owner star", []rbacv1.PolicyRule{r([]string{"get", "list"}, core, "pods")}, []rbacv1.PolicyRule{r([]string{"*"}, core, "pods")},
			`{APIGroups:[""], Resources:["pods"], Verbs:["*"]}`},
		{"*/sub covers subresources", []rbacv1.PolicyRule{r([]string{"get"}, core, "*/status")}, []rbacv1.PolicyRule{r([]string{"get"}, core, "pods/status")}, ""},
		{"resource is not its subresource", []rbacv1.PolicyRule{r([]string{"update"}, core, "resourcequotas")}, []rbacv1.PolicyRule{r([]string{"update"}, core, "resourcequotas/status")},
			`{APIGroups:[""], Resources:["resourcequotas/status"], Verbs:["update"]}`},
		{"names narrow", []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: core, Resources: []string{"secrets"}, ResourceNames: []string{"a"}}},
			[]rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: core, Resources: []string{"secrets"}, ResourceNames: []string{"a", "b"}}},
			`{APIGroups:[""], Resources:["secrets"], ResourceNames:["b"], Verbs:["get"]}`},
		{"named owner does not cover all names", []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: core, Resources: []string{"secrets"}, ResourceNames: []string{"a"}}},
			[]rbacv1.PolicyRule{r([]string{"get"}, core, "secrets")}, `{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`},
		{"URL prefix", []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/*"}}},
			[]rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/apps", "/healthz"}}}, `{NonResourceURLs:["/healthz"], Verbs:["get"]}`},
		{"missing verbs compacted and sorted", nil, []rbacv1.PolicyRule{r([]string{"update", "patch"}, core, "resourcequotas", "configmaps")},
			"{APIGroups:[\"\"], Resources:[\"configmaps\"], Verbs:[\"update\" \"patch\"]}\n{APIGroups:[\"\"], Resources:[\"resourcequotas\"], Verbs:[\"update\" \"patch\"]}"},
	}
	for _, c := range cases {
		ok, missing := Covers(c.owner, c.servant)
		if ok != (c.missing == "") || missingText(missing) != c.missing {
			t.Errorf("%s: Covers = %v,\n%s\nwant\n%s", c.name, ok, missingText(missing), c.missing)
		}
	}
}

// rolesResolver grants each user the rules listed for it, in every namespace.
type rolesResolver map[string][]rbacv1.PolicyRule

func (m rolesResolver) RulesFor(_ context.Context, u auth.User, _ string) ([]rbacv1.PolicyRule, bool, error) {
	return m[u.Name], false, nil
}

// roleReader serves stored roles by name.
type roleReader map[string]runtime.Object

func (m roleReader) Get(_ context.Context, gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error) {
	if o, ok := m[gvr.Resource+"/"+ns+"/"+name]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (m roleReader) List(context.Context, schema.GroupVersionResource, string) ([]runtime.Object, error) {
	return nil, nil
}

func TestValidate(t *testing.T) {
	pods := r([]string{"get", "list"}, []string{""}, "pods")
	quotas := r([]string{"update"}, []string{""}, "resourcequotas")
	c := &Checker{
		Resolver: rolesResolver{
			"alice":    {pods},
			"escalate": {pods, r([]string{"escalate"}, []string{rbacv1.GroupName}, "roles")},
			"binder":   {{Verbs: []string{"bind"}, APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, ResourceNames: []string{"quota-admin"}}},
		},
		Reader: roleReader{
			"clusterroles//quota-admin": &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "quota-admin"}, Rules: []rbacv1.PolicyRule{quotas}},
			"roles/team-a/pod-reader":   &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"}, Rules: []rbacv1.PolicyRule{pods}},
		},
	}
	rolesGVR := rbacv1.SchemeGroupVersion.WithResource("roles")
	bindingsGVR := rbacv1.SchemeGroupVersion.WithResource("rolebindings")
	role := func(rules ...rbacv1.PolicyRule) *admission.Attributes {
		return &admission.Attributes{Operation: admission.Create, Resource: rolesGVR, Namespace: "team-a", Name: "r",
			Object: &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "team-a"}, Rules: rules}}
	}
	binding := func(kind, name string) *admission.Attributes {
		return &admission.Attributes{Operation: admission.Create, Resource: bindingsGVR, Namespace: "team-a", Name: "b",
			Object: &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "team-a"}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: name}}}
	}
	user := func(name string, groups ...string) context.Context {
		return auth.WithUser(context.Background(), auth.User{Name: name, Groups: groups})
	}
	cases := []struct {
		name string
		ctx  context.Context
		a    *admission.Attributes
		want string // "" allowed
	}{
		{"held rules", user("alice"), role(pods), ""},
		{"unheld rules", user("alice", "team-a", auth.AllAuthenticated), role(pods, quotas),
			"roles.rbac.authorization.k8s.io \"r\" is forbidden: user \"alice\" (groups=[\"team-a\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"resourcequotas\"], Verbs:[\"update\"]}"},
		{"escalate", user("escalate"), role(quotas), ""},
		{"masters bypass", user("root", auth.SystemMasters), role(quotas), ""},
		{"in-process bypass", context.Background(), role(quotas), ""},
		{"binding of held role", user("alice"), binding("Role", "pod-reader"), ""},
		{"binding of unheld role", user("alice"), binding("ClusterRole", "quota-admin"),
			"rolebindings.rbac.authorization.k8s.io \"b\" is forbidden: user \"alice\" (groups=[]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"resourcequotas\"], Verbs:[\"update\"]}"},
		{"bind", user("binder"), binding("ClusterRole", "quota-admin"), ""},
		{"bind is per name", user("binder"), binding("Role", "pod-reader"), "rolebindings.rbac.authorization.k8s.io \"b\" is forbidden: user \"binder\" (groups=[]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"get\" \"list\"]}"},
		{"missing role", user("alice"), binding("Role", "ghost"), `rolebindings.rbac.authorization.k8s.io "b" is forbidden: roles.rbac.authorization.k8s.io "ghost" not found`},
		{"no resolver: nothing held", user("alice"), role(), ""},
	}
	for _, tc := range cases {
		err := c.Validate(tc.ctx, tc.a)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (!apierrors.IsForbidden(err) || err.Error() != tc.want):
			t.Errorf("%s:\n got %v\nwant %s", tc.name, err, tc.want)
		}
	}

	// Without a resolver only system:masters grants anything.
	none := &Checker{}
	if err := none.Validate(user("alice"), role(pods)); !apierrors.IsForbidden(err) {
		t.Errorf("no resolver: %v", err)
	}
	// Updates that only touch finalizers are not checked; deletes never are.
	upd := role(quotas)
	upd.Operation = admission.Update
	old := upd.Object.DeepCopyObject().(*rbacv1.Role)
	upd.Object.(*rbacv1.Role).Finalizers = []string{"example.com/hold"}
	upd.OldObject = old
	if err := c.Validate(user("alice"), upd); err != nil {
		t.Errorf("finalizer-only update: %v", err)
	}
	// Typed nil objects and a nil old object are not a panic.
	if err := c.Validate(user("alice"), &admission.Attributes{Operation: admission.Create, Resource: rolesGVR, Object: (*rbacv1.Role)(nil)}); err != nil {
		t.Errorf("nil role: %v", err)
	}
	nilOld := role(pods)
	nilOld.Operation, nilOld.OldObject = admission.Update, (*rbacv1.Role)(nil)
	if err := c.Validate(user("alice"), nilOld); err != nil {
		t.Errorf("nil old role: %v", err)
	}
	del := role(quotas)
	del.Operation = admission.Delete
	if err := c.Validate(user("alice"), del); err != nil {
		t.Errorf("delete: %v", err)
	}
}
