package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/admission/rbacescalation"
	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
)

// storedRules is a small RuleResolver over the Roles and bindings in the server's store:
// the rules of every role bound to the user cluster-wide and in the namespace.
type storedRules struct {
	store atomic.Pointer[registry.Store]
}

func (r *storedRules) RulesFor(ctx context.Context, u auth.User, ns string) ([]rbacv1.PolicyRule, bool, error) {
	st := r.store.Load()
	if st == nil {
		return nil, true, nil
	}
	res := func(name string) *registry.Resource {
		return st.Catalogue().Get(rbacv1.SchemeGroupVersion.WithResource(name))
	}
	bound := func(subjects []rbacv1.Subject, bindingNS string) bool {
		for _, s := range subjects {
			switch s.Kind {
			case rbacv1.UserKind:
				if s.Name == u.Name {
					return true
				}
			case rbacv1.GroupKind:
				if u.InGroup(s.Name) {
					return true
				}
			case rbacv1.ServiceAccountKind:
				sns := s.Namespace
				if sns == "" {
					sns = bindingNS
				}
				if u.Name == auth.ServiceAccountPrefix+sns+":"+s.Name {
					return true
				}
			}
		}
		return false
	}
	var rules []rbacv1.PolicyRule
	roleRules := func(ref rbacv1.RoleRef, ns string) error {
		kind, rns := "clusterroles", ""
		if ref.Kind == "Role" {
			kind, rns = "roles", ns
		}
		obj, err := st.Get(ctx, res(kind), rns, ref.Name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		switch o := obj.(type) {
		case *rbacv1.Role:
			rules = append(rules, o.Rules...)
		case *rbacv1.ClusterRole:
			rules = append(rules, o.Rules...)
		}
		return nil
	}
	crbs, _, err := st.ListObjects(ctx, res("clusterrolebindings"), "")
	if err != nil {
		return nil, true, err
	}
	for _, o := range crbs {
		if b := o.(*rbacv1.ClusterRoleBinding); bound(b.Subjects, "") {
			if err := roleRules(b.RoleRef, ""); err != nil {
				return nil, true, err
			}
		}
	}
	if ns != "" {
		rbs, _, err := st.ListObjects(ctx, res("rolebindings"), ns)
		if err != nil {
			return nil, true, err
		}
		for _, o := range rbs {
			if b := o.(*rbacv1.RoleBinding); bound(b.Subjects, ns) {
				if err := roleRules(b.RoleRef, ns); err != nil {
					return nil, true, err
				}
			}
		}
	}
	return rules, false, nil
}

// startTenants starts quotad with users alice (group team-a) and bob from a token file;
// with rules set, escalation checks resolve rules from the stored roles.
func startTenants(t *testing.T, rules *storedRules) (*servertest.Server, map[string]kubernetes.Interface) {
	t.Helper()
	csv := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(csv, []byte("alice-token,alice,1001,team-a\nbob-token,bob,1002\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := []servertest.Option{func(c *server.Config) { c.TokenAuthFile = csv }}
	if rules != nil {
		opts = append(opts, func(c *server.Config) { c.RuleResolver = rules })
	}
	s := servertest.Start(t, opts...)
	if rules != nil {
		rules.store.Store(s.Store)
	}
	clients := map[string]kubernetes.Interface{}
	for _, u := range []string{"alice", "bob"} {
		cfg := rest.CopyConfig(s.Config)
		cfg.BearerToken, cfg.BearerTokenFile = u+"-token", ""
		cfg.CertData, cfg.KeyData, cfg.CertFile, cfg.KeyFile = nil, nil, "", ""
		c, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		clients[u] = c
	}
	return s, clients
}

func rbacCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitFor polls cond on every change of the ClusterRoles until it holds or ctx ends.
func waitClusterRole(t *testing.T, ctx context.Context, c kubernetes.Interface, name string, cond func(*rbacv1.ClusterRole) bool) *rbacv1.ClusterRole {
	t.Helper()
	for {
		cr, err := c.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
		if err == nil && cond(cr) {
			return cr
		}
		w, werr := c.RbacV1().ClusterRoles().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: crRV(cr)})
		if werr != nil {
			t.Fatalf("clusterrole %s: %v (last get: %v)", name, werr, err)
		}
		select {
		case _, ok := <-w.ResultChan():
			w.Stop()
			if !ok && ctx.Err() != nil {
				t.Fatalf("clusterrole %s: condition never held: %+v", name, cr)
			}
		case <-ctx.Done():
			w.Stop()
			t.Fatalf("clusterrole %s: condition never held: %+v", name, cr)
		}
	}
}

func crRV(cr *rbacv1.ClusterRole) string {
	if cr == nil {
		return ""
	}
	return cr.ResourceVersion
}

func allows(rules []rbacv1.PolicyRule, verb, group, resource, sub string) bool {
	return auth.RulesAllow(rules, &auth.Attributes{ResourceRequest: true, Verb: verb, APIGroup: group, Resource: resource, Subresource: sub, Namespace: "team-a", Name: "x"})
}

// TestRBACKindsDefaultRoles: the default roles and bindings exist from the first start;
// admin, edit and view are aggregated (admin and edit read ResourceQuotas but do not change
// them); a default role edited by hand is restored at the next start unless annotated
// autoupdate=false.
func TestRBACKindsDefaultRoles(t *testing.T) {
	t.Parallel()
	ctx := rbacCtx(t)
	s := servertest.Start(t)
	c := s.Client

	for _, name := range []string{"cluster-admin", "system:basic-user", "system:discovery", "system:public-info-viewer", "system:monitoring"} {
		crb, err := c.RbacV1().ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{})
		if err != nil || crb.RoleRef.Name != name || len(crb.Subjects) == 0 {
			t.Fatalf("clusterrolebinding %s: %v %+v", name, err, crb)
		}
	}
	crb, _ := c.RbacV1().ClusterRoleBindings().Get(ctx, "cluster-admin", metav1.GetOptions{})
	if crb.Subjects[0] != (rbacv1.Subject{Kind: "Group", APIGroup: rbacv1.GroupName, Name: "system:masters"}) {
		t.Errorf("cluster-admin subjects: %+v", crb.Subjects)
	}
	piv, _ := c.RbacV1().ClusterRoleBindings().Get(ctx, "system:public-info-viewer", metav1.GetOptions{})
	if len(piv.Subjects) != 2 || piv.Subjects[1].Name != "system:unauthenticated" {
		t.Errorf("system:public-info-viewer subjects: %+v", piv.Subjects)
	}

	// The aggregated roles are complete before the server serves: no wait.
	for _, name := range []string{"view", "edit", "admin"} {
		cr, err := c.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
		if err != nil || !allows(cr.Rules, "watch", "", "resourcequotas", "") || (name != "view" && !allows(cr.Rules, "create", "", "pods", "")) {
			t.Errorf("%s right after start: %v %+v", name, err, cr)
		}
	}

	// admin ⊇ edit ⊇ view through aggregation; quotas are read-only for all three.
	for _, name := range []string{"view", "edit", "admin"} {
		cr := waitClusterRole(t, ctx, c, name, func(cr *rbacv1.ClusterRole) bool {
			return allows(cr.Rules, "get", "", "resourcequotas", "") && (name == "view" || allows(cr.Rules, "create", "", "pods", ""))
		})
		for _, verb := range []string{"create", "update", "patch", "delete"} {
			if allows(cr.Rules, verb, "", "resourcequotas", "") || allows(cr.Rules, verb, "", "resourcequotas", "status") {
				t.Errorf("%s may %s resourcequotas", name, verb)
			}
		}
		if cr.Labels["kubernetes.io/bootstrapping"] != "rbac-defaults" || cr.Annotations["rbac.authorization.kubernetes.io/autoupdate"] != "true" {
			t.Errorf("%s metadata: %v %v", name, cr.Labels, cr.Annotations)
		}
	}
	admin, _ := c.RbacV1().ClusterRoles().Get(ctx, "admin", metav1.GetOptions{})
	if !allows(admin.Rules, "create", rbacv1.GroupName, "rolebindings", "") {
		t.Error("admin cannot create rolebindings")
	}

	// Hand edits: system:basic-user loses its rules; system:discovery too, but it is
	// annotated autoupdate=false; the cluster-admin binding loses its subject.
	basic, _ := c.RbacV1().ClusterRoles().Get(ctx, "system:basic-user", metav1.GetOptions{})
	want := basic.Rules
	basic.Rules = nil
	if _, err := c.RbacV1().ClusterRoles().Update(ctx, basic, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	disc, _ := c.RbacV1().ClusterRoles().Get(ctx, "system:discovery", metav1.GetOptions{})
	disc.Rules = []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/version"}}}
	disc.Annotations["rbac.authorization.kubernetes.io/autoupdate"] = "false"
	if _, err := c.RbacV1().ClusterRoles().Update(ctx, disc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	crb.Subjects = []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "root"}}
	if _, err := c.RbacV1().ClusterRoleBindings().Update(ctx, crb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.RbacV1().ClusterRoles().Delete(ctx, "system:monitoring", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// A default binding re-created with another roleRef is replaced.
	if err := c.RbacV1().ClusterRoleBindings().Delete(ctx, "system:basic-user", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: meta("system:basic-user"),
		RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "cluster-admin"}, Subjects: []rbacv1.Subject{{Kind: "Group", Name: "system:authenticated"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	s = s.Restart(t)
	c = s.Client
	basic, err := c.RbacV1().ClusterRoles().Get(ctx, "system:basic-user", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Restored as upstream restores: the missing rules, one resource and verb each.
	if ok, missing := rbacescalation.Covers(basic.Rules, want); !ok || len(basic.Rules) != 3 {
		t.Errorf("system:basic-user not restored: %+v (missing %v)", basic.Rules, missing)
	}
	disc, _ = c.RbacV1().ClusterRoles().Get(ctx, "system:discovery", metav1.GetOptions{})
	if len(disc.Rules) != 1 || len(disc.Rules[0].NonResourceURLs) != 1 {
		t.Errorf("system:discovery (autoupdate=false) changed: %+v", disc.Rules)
	}
	crb, _ = c.RbacV1().ClusterRoleBindings().Get(ctx, "cluster-admin", metav1.GetOptions{})
	if len(crb.Subjects) != 2 || crb.Subjects[1].Name != "system:masters" {
		t.Errorf("cluster-admin binding subjects not restored (extra kept): %+v", crb.Subjects)
	}
	if _, err := c.RbacV1().ClusterRoles().Get(ctx, "system:monitoring", metav1.GetOptions{}); err != nil {
		t.Errorf("deleted system:monitoring not created again: %v", err)
	}
	if b, err := c.RbacV1().ClusterRoleBindings().Get(ctx, "system:basic-user", metav1.GetOptions{}); err != nil || b.RoleRef.Name != "system:basic-user" {
		t.Errorf("system:basic-user binding roleRef not restored: %v %+v", err, b)
	}
}

// TestRBACKindsAggregation: an aggregated ClusterRole picks up the rules of a ClusterRole
// labelled for it, through chains (a role aggregated to view reaches edit and admin), and
// drops them when that role goes.
func TestRBACKindsAggregation(t *testing.T) {
	t.Parallel()
	ctx := rbacCtx(t)
	s := servertest.Start(t)
	c := s.Client.RbacV1().ClusterRoles()

	agg := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "monitoring"},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"example.com/aggregate-to-monitoring": "true"}}}}}
	if _, err := c.Create(ctx, agg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	widgets := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "widgets-reader", Labels: map[string]string{
		"example.com/aggregate-to-monitoring": "true", "rbac.authorization.k8s.io/aggregate-to-view": "true"}},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{"example.com"}, Resources: []string{"widgets"}}}}
	if _, err := c.Create(ctx, widgets, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	has := func(cr *rbacv1.ClusterRole) bool { return allows(cr.Rules, "list", "example.com", "widgets", "") }
	got := waitClusterRole(t, ctx, s.Client, "monitoring", has)
	if len(got.Rules) != 1 {
		t.Errorf("monitoring rules: %+v", got.Rules)
	}
	for _, name := range []string{"view", "edit", "admin"} {
		waitClusterRole(t, ctx, s.Client, name, has)
	}
	if err := c.Delete(ctx, "widgets-reader", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClusterRole(t, ctx, s.Client, "monitoring", func(cr *rbacv1.ClusterRole) bool { return len(cr.Rules) == 0 })
	waitClusterRole(t, ctx, s.Client, "admin", func(cr *rbacv1.ClusterRole) bool { return !has(cr) })
}

// TestRBACKindsValidation: upstream's field errors for the RBAC kinds, and roleRef is
// immutable.
func TestRBACKindsValidation(t *testing.T) {
	t.Parallel()
	ctx := rbacCtx(t)
	s := servertest.Start(t)
	rb := s.Client.RbacV1()
	ns := "default"
	cases := []struct {
		name   string
		create func() error
		want   string
	}{
		{"rule without verbs", func() error {
			_, err := rb.Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: meta("r1"), Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}}}}, metav1.CreateOptions{})
			return err
		}, `Role.rbac.authorization.k8s.io "r1" is invalid: rules[0].verbs: Required value`},
		{"namespaced non-resource URL", func() error {
			_, err := rb.Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: meta("r2"), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}}}, metav1.CreateOptions{})
			return err
		}, `Role.rbac.authorization.k8s.io "r2" is invalid: rules[0].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs`},
		{"resources without groups", func() error {
			_, err := rb.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta("r3"), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, Resources: []string{"pods"}}}}, metav1.CreateOptions{})
			return err
		}, `ClusterRole.rbac.authorization.k8s.io "r3" is invalid: rules[0].apiGroups: Required value: resource rules must supply at least one api group`},
		{"name with a slash", func() error {
			_, err := rb.ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta("a/b")}, metav1.CreateOptions{})
			return err
		}, `may not contain '/'`},
		{"clusterrolebinding to a Role", func() error {
			_, err := rb.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: meta("b1"), RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "x"}}, metav1.CreateOptions{})
			return err
		}, `ClusterRoleBinding.rbac.authorization.k8s.io "b1" is invalid: roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"`},
		{"subject kind", func() error {
			_, err := rb.RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta("b2"), RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "x"},
				Subjects: []rbacv1.Subject{{Kind: "Robot", Name: "r"}}}, metav1.CreateOptions{})
			return err
		}, `RoleBinding.rbac.authorization.k8s.io "b2" is invalid: subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"`},
		{"cluster service account without namespace", func() error {
			_, err := rb.ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: meta("b3"), RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
				Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "sa"}}}, metav1.CreateOptions{})
			return err
		}, `ClusterRoleBinding.rbac.authorization.k8s.io "b3" is invalid: subjects[0].namespace: Required value`},
	}
	for _, c := range cases {
		err := c.create()
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want 422 containing %q", c.name, err, c.want)
		}
	}

	b, err := rb.RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta("viewers"), RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.RoleRef.APIGroup != rbacv1.GroupName || b.Subjects[0].APIGroup != rbacv1.GroupName {
		t.Errorf("defaults not applied: %+v %+v", b.RoleRef, b.Subjects)
	}
	b.RoleRef.Name = "edit"
	_, err = rb.RoleBindings(ns).Update(ctx, b, metav1.UpdateOptions{})
	want := `RoleBinding.rbac.authorization.k8s.io "viewers" is invalid: roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}: cannot change roleRef`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("roleRef change: got %v\nwant %s", err, want)
	}
}

// TestRBACKindsEscalation: a user creates roles and bindings only with permissions it
// holds, unless it may escalate or bind; with no rule resolver only system:masters writes
// RBAC objects.
func TestRBACKindsEscalation(t *testing.T) {
	t.Parallel()
	ctx := rbacCtx(t)
	rules := &storedRules{}
	s, users := startTenants(t, rules)
	admin, alice := s.Client, users["alice"]
	for _, ns := range []string{"team-a", "team-b"} {
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: meta(ns)}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.RbacV1().RoleBindings("team-a").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta("alice-admin"),
		RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "admin"}, Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitClusterRole(t, ctx, admin, "admin", func(cr *rbacv1.ClusterRole) bool { return allows(cr.Rules, "create", "", "pods", "") })

	// Within her rights: a Role reading pods, a binding of edit for bob.
	podReader := &rbacv1.Role{ObjectMeta: meta("pod-reader"), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}
	if _, err := alice.RbacV1().Roles("team-a").Create(ctx, podReader, metav1.CreateOptions{}); err != nil {
		t.Fatalf("alice creates a role she holds: %v", err)
	}
	if _, err := alice.RbacV1().RoleBindings("team-a").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta("bob-edit"),
		RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "edit"}, Subjects: []rbacv1.Subject{{Kind: "User", Name: "bob"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("alice binds edit: %v", err)
	}

	// Beyond them: changing quotas, the same role in team-b, cluster-admin.
	quotaWriter := &rbacv1.Role{ObjectMeta: meta("quota-writer"), Rules: []rbacv1.PolicyRule{{Verbs: []string{"update", "get"}, APIGroups: []string{""}, Resources: []string{"resourcequotas", "resourcequotas/status"}}}}
	_, err := alice.RbacV1().Roles("team-a").Create(ctx, quotaWriter, metav1.CreateOptions{})
	want := `roles.rbac.authorization.k8s.io "quota-writer" is forbidden: user "alice" (groups=["team-a" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["resourcequotas"], Verbs:["update"]}
{APIGroups:[""], Resources:["resourcequotas/status"], Verbs:["update"]}`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("quota writer role: got %v\nwant %s", err, want)
	}
	if _, err := alice.RbacV1().Roles("team-b").Create(ctx, podReader, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("role in team-b: %v", err)
	}
	_, err = alice.RbacV1().RoleBindings("team-a").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta("alice-root"),
		RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "cluster-admin"}, Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice"}}}, metav1.CreateOptions{})
	want = `rolebindings.rbac.authorization.k8s.io "alice-root" is forbidden: user "alice" (groups=["team-a" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:
{APIGroups:["*"], Resources:["*"], Verbs:["*"]}
{NonResourceURLs:["*"], Verbs:["*"]}`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("binding cluster-admin: got %v\nwant %s", err, want)
	}
	if _, err := alice.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: meta("alice-root"),
		RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "cluster-admin"}, Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice"}}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("clusterrolebinding to cluster-admin: %v", err)
	}
	// Growing her own role is escalation too.
	pr, _ := alice.RbacV1().Roles("team-a").Get(ctx, "pod-reader", metav1.GetOptions{})
	pr.Rules = append(pr.Rules, quotaWriter.Rules...)
	if _, err := alice.RbacV1().Roles("team-a").Update(ctx, pr, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("growing a role: %v", err)
	}
	// An aggregationRule needs every permission, even of a user who may create ClusterRoles.
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta("clusterrole-creator"), Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"create"}, APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: meta("alice-clusterrole-creator"),
		RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "clusterrole-creator"}, Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = alice.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: meta("gather"), AggregationRule: &rbacv1.AggregationRule{
		ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"x": "y"}}}}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.HasSuffix(err.Error(), "must have cluster-admin privileges to use the aggregationRule") {
		t.Errorf("aggregationRule: %v", err)
	}
	// A binding of a missing role is refused with the lookup's error.
	_, err = alice.RbacV1().RoleBindings("team-a").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta("ghost"),
		RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "ghost"}, Subjects: []rbacv1.Subject{{Kind: "User", Name: "bob"}}}, metav1.CreateOptions{})
	if want := `rolebindings.rbac.authorization.k8s.io "ghost" is forbidden: roles.rbac.authorization.k8s.io "ghost" not found`; err == nil || err.Error() != want {
		t.Errorf("binding a missing role: got %v, want %s", err, want)
	}

	// bind on cluster-admin and escalate on roles, granted by the admin, open both doors.
	if _, err := admin.RbacV1().Roles("team-a").Create(ctx, &rbacv1.Role{ObjectMeta: meta("rbac-powers"), Rules: []rbacv1.PolicyRule{
		{Verbs: []string{"bind"}, APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, ResourceNames: []string{"cluster-admin"}},
		{Verbs: []string{"escalate"}, APIGroups: []string{rbacv1.GroupName}, Resources: []string{"roles"}},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings("team-a").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta("alice-powers"),
		RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "rbac-powers"}, Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.RbacV1().Roles("team-a").Create(ctx, quotaWriter, metav1.CreateOptions{}); err != nil {
		t.Errorf("with escalate: %v", err)
	}
	if _, err := alice.RbacV1().RoleBindings("team-a").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta("alice-root"),
		RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "cluster-admin"}, Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice"}}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("with bind: %v", err)
	}
}

// TestRBACKindsEscalationAsWired: with no resolver configured, escalation prevention asks
// the RBAC authorizer: a tenant bound to admin in its namespace may create roles and
// bindings there, but not grant what admin lacks (changing quotas) nor bind cluster-admin.
func TestRBACKindsEscalationAsWired(t *testing.T) {
	t.Parallel()
	ctx := rbacCtx(t)
	s, users := startTenants(t, nil)
	admin, alice := s.Client, users["alice"]
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: meta("team-a")}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings("team-a").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta("alice-admin"),
		RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "admin"}, Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	podReader := &rbacv1.Role{ObjectMeta: meta("pod-reader"), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}}}
	if _, err := alice.RbacV1().Roles("team-a").Create(ctx, podReader, metav1.CreateOptions{}); err != nil {
		t.Fatalf("alice creates a role she holds: %v", err)
	}
	if _, err := alice.RbacV1().RoleBindings("team-a").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta("bob-view"),
		RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"}, Subjects: []rbacv1.Subject{{Kind: "User", Name: "bob"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("alice binds view: %v", err)
	}
	quotaWriter := &rbacv1.Role{ObjectMeta: meta("quota-writer"), Rules: []rbacv1.PolicyRule{{Verbs: []string{"patch"}, APIGroups: []string{""}, Resources: []string{"resourcequotas"}}}}
	_, err := alice.RbacV1().Roles("team-a").Create(ctx, quotaWriter, metav1.CreateOptions{})
	want := `roles.rbac.authorization.k8s.io "quota-writer" is forbidden: user "alice" (groups=["team-a" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["resourcequotas"], Verbs:["patch"]}`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("quota writer: got %v\nwant %s", err, want)
	}
	_, err = alice.RbacV1().RoleBindings("team-a").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta("alice-root"),
		RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "cluster-admin"}, Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice"}}}, metav1.CreateOptions{})
	want = `rolebindings.rbac.authorization.k8s.io "alice-root" is forbidden: user "alice" (groups=["team-a" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:
{APIGroups:["*"], Resources:["*"], Verbs:["*"]}
{NonResourceURLs:["*"], Verbs:["*"]}`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("binding cluster-admin: got %v\nwant %s", err, want)
	}
}
