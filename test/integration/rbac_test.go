package integration

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
)

// rbacServer starts quotad with token users: alice (group team-a), bob, prom (group
// system:monitoring).
func rbacServer(t testing.TB) *servertest.Server {
	t.Helper()
	return rbacServerWith(t)
}

// rbacServerWith is rbacServer with further options.
func rbacServerWith(t testing.TB, opts ...servertest.Option) *servertest.Server {
	t.Helper()
	csv := filepath.Join(t.TempDir(), "tokens.csv")
	lines := "alice-token,alice,1001,\"team-a\"\nbob-token,bob,1002\nprom-token,prom,1003,\"system:monitoring\"\n"
	if err := os.WriteFile(csv, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	return servertest.Start(t, append([]servertest.Option{func(c *server.Config) { c.TokenAuthFile = csv }}, opts...)...)
}

// configAs is the admin's client configuration with another bearer token.
func configAs(s *servertest.Server, token string) *rest.Config {
	cfg := rest.CopyConfig(s.Config)
	cfg.BearerToken = token
	return cfg
}

func clientFor(t *testing.T, cfg *rest.Config) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wantForbidden fails unless err is a 403 with exactly msg.
func wantForbidden(t *testing.T, what string, err error, msg string) {
	t.Helper()
	var st *apierrors.StatusError
	if !errors.As(err, &st) || st.ErrStatus.Code != http.StatusForbidden || st.ErrStatus.Reason != metav1.StatusReasonForbidden {
		t.Errorf("%s: %v, want a 403", what, err)
		return
	}
	if st.ErrStatus.Message != msg {
		t.Errorf("%s:\n got %s\nwant %s", what, st.ErrStatus.Message, msg)
	}
}

func rbacRule(verbs, groups, resources []string, names ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: groups, Resources: resources, ResourceNames: names}
}

func strs(s ...string) []string { return s }

// TestRBACTenant: alice, bound to a tenant role in team-a, creates pods up to the quota and
// is refused past it, cannot change the quota or its status, cannot read team-b or the
// cluster scope, gets only the ConfigMap her role names, and every refusal carries
// upstream's text. Her binding is written straight to storage: the index learns it from
// its watch.
func TestRBACTenant(t *testing.T) {
	t.Parallel()
	s := rbacServer(t)
	ctx := ctxT(t)
	admin := s.Client
	mkNamespace(t, s, "team-a")
	mkNamespace(t, s, "team-b")
	if _, err := admin.CoreV1().ResourceQuotas("team-a").Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "compute"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().ConfigMaps("team-a").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "tenant"},
		Rules: []rbacv1.PolicyRule{
			rbacRule(strs("*"), strs(""), strs("pods")),
			rbacRule(strs("get", "list", "watch"), strs(""), strs("resourcequotas", "resourcequotas/status")),
			rbacRule(strs("get", "list", "update", "create"), strs(""), strs("configmaps"), "settings"),
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	alice := clientFor(t, configAs(s, "alice-token"))

	// 1. Unbound, alice may do nothing.
	_, err := alice.CoreV1().Pods("team-a").List(ctx, metav1.ListOptions{})
	wantForbidden(t, "unbound list", err, `pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-a"`)

	// 2. The binding, written to etcd behind this replica's back, reaches the index by watch.
	rb := &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{Kind: "RoleBinding", APIVersion: "rbac.authorization.k8s.io/v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "alice-tenant", Namespace: "team-a", UID: types.UID("3f1c2a9e-0000-4000-8000-000000000001"), CreationTimestamp: metav1.Now()},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "tenant"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
	}
	value, err := json.Marshal(rb)
	if err != nil {
		t.Fatal(err)
	}
	res := s.Store.Catalogue().Get(rbacv1.SchemeGroupVersion.WithResource("rolebindings"))
	if _, err := s.Store.Storage().Txn(ctx, storage.Txn{Ops: []storage.Op{{Type: storage.OpPut, Key: res.Key("team-a", "alice-tenant"), Value: value}}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		_, err := alice.CoreV1().Pods("team-a").List(ctx, metav1.ListOptions{})
		return err == nil
	})

	// 3. Pods up to the quota, then quota's own refusal.
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	}
	for _, name := range []string{"p1", "p2"} {
		if _, err := alice.CoreV1().Pods("team-a").Create(ctx, pod(name), metav1.CreateOptions{}); err != nil {
			t.Fatalf("alice creates %s: %v", name, err)
		}
	}
	_, err = alice.CoreV1().Pods("team-a").Create(ctx, pod("p3"), metav1.CreateOptions{})
	wantForbidden(t, "past the quota", err, `pods "p3" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2`)

	// 4. The quota: readable, not writable, its status neither.
	q, err := alice.CoreV1().ResourceQuotas("team-a").Get(ctx, "compute", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("alice reads the quota: %v", err)
	}
	q.Spec.Hard[corev1.ResourcePods] = resource.MustParse("100")
	_, err = alice.CoreV1().ResourceQuotas("team-a").Update(ctx, q, metav1.UpdateOptions{})
	wantForbidden(t, "quota update", err, `resourcequotas "compute" is forbidden: User "alice" cannot update resource "resourcequotas" in API group "" in the namespace "team-a"`)
	q.Status.Used = corev1.ResourceList{}
	_, err = alice.CoreV1().ResourceQuotas("team-a").UpdateStatus(ctx, q, metav1.UpdateOptions{})
	wantForbidden(t, "quota status update", err, `resourcequotas "compute" is forbidden: User "alice" cannot update resource "resourcequotas/status" in API group "" in the namespace "team-a"`)
	_, err = alice.CoreV1().ResourceQuotas("team-a").Patch(ctx, "compute", types.MergePatchType, []byte(`{"spec":{"hard":{"pods":"100"}}}`), metav1.PatchOptions{})
	wantForbidden(t, "quota patch", err, `resourcequotas "compute" is forbidden: User "alice" cannot patch resource "resourcequotas" in API group "" in the namespace "team-a"`)
	_, err = alice.CoreV1().ResourceQuotas("team-a").Patch(ctx, "compute", types.MergePatchType, []byte(`{"status":{"used":{"pods":"0"}}}`), metav1.PatchOptions{}, "status")
	wantForbidden(t, "quota status patch", err, `resourcequotas "compute" is forbidden: User "alice" cannot patch resource "resourcequotas/status" in API group "" in the namespace "team-a"`)
	err = alice.CoreV1().ResourceQuotas("team-a").Delete(ctx, "compute", metav1.DeleteOptions{})
	wantForbidden(t, "quota delete", err, `resourcequotas "compute" is forbidden: User "alice" cannot delete resource "resourcequotas" in API group "" in the namespace "team-a"`)
	err = alice.CoreV1().ResourceQuotas("team-a").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	wantForbidden(t, "quota deletecollection", err, `resourcequotas is forbidden: User "alice" cannot deletecollection resource "resourcequotas" in API group "" in the namespace "team-a"`)
	_, err = alice.CoreV1().ResourceQuotas("team-a").Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "more"}}, metav1.CreateOptions{})
	wantForbidden(t, "quota create", err, `resourcequotas is forbidden: User "alice" cannot create resource "resourcequotas" in API group "" in the namespace "team-a"`)
	if q, err := admin.CoreV1().ResourceQuotas("team-a").Get(ctx, "compute", metav1.GetOptions{}); err != nil || q.Spec.Hard.Pods().Value() != 2 || q.Status.Used.Pods().Value() != 2 {
		t.Fatalf("the quota changed: %v %v", q, err)
	}

	// 5. Other namespaces and the cluster scope.
	_, err = alice.CoreV1().Pods("team-b").Get(ctx, "p1", metav1.GetOptions{})
	wantForbidden(t, "team-b get", err, `pods "p1" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "team-b"`)
	_, err = alice.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	wantForbidden(t, "cluster list", err, `pods is forbidden: User "alice" cannot list resource "pods" in API group "" at the cluster scope`)
	_, err = alice.CoreV1().Secrets("team-b").List(ctx, metav1.ListOptions{})
	wantForbidden(t, "team-b secrets", err, `secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "team-b"`)
	_, err = alice.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "alice-root"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
	}, metav1.CreateOptions{})
	wantForbidden(t, "cluster-admin for herself", err, `clusterrolebindings.rbac.authorization.k8s.io is forbidden: User "alice" cannot create resource "clusterrolebindings" in API group "rbac.authorization.k8s.io" at the cluster scope`)
	err = alice.CoreV1().RESTClient().Get().Namespace("team-a").Resource("pods").Name("p1").SubResource("log").Do(ctx).Error()
	wantForbidden(t, "pods/log", err, `pods "p1" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "team-a"`)

	// 6. resourceNames: the named ConfigMap only, never a create, never a list.
	if _, err := alice.CoreV1().ConfigMaps("team-a").Get(ctx, "settings", metav1.GetOptions{}); err != nil {
		t.Errorf("alice reads the named ConfigMap: %v", err)
	}
	_, err = alice.CoreV1().ConfigMaps("team-a").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
	wantForbidden(t, "other ConfigMap", err, `configmaps "kube-root-ca.crt" is forbidden: User "alice" cannot get resource "configmaps" in API group "" in the namespace "team-a"`)
	_, err = alice.CoreV1().ConfigMaps("team-a").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}}, metav1.CreateOptions{})
	wantForbidden(t, "create with a name", err, `configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "team-a"`)
	_, err = alice.CoreV1().ConfigMaps("team-a").List(ctx, metav1.ListOptions{})
	wantForbidden(t, "list named", err, `configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "team-a"`)
	if _, err := alice.CoreV1().ConfigMaps("team-a").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=settings"}); err != nil {
		t.Errorf("list by the name's field selector: %v", err)
	}

	// 7. A binding to a Role that does not exist is named in the reason.
	if _, err := admin.RbacV1().RoleBindings("team-a").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "alice-gone"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "gone"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = alice.CoreV1().Secrets("team-a").Get(ctx, "s", metav1.GetOptions{})
	wantForbidden(t, "missing role", err, `secrets "s" is forbidden: User "alice" cannot get resource "secrets" in API group "" in the namespace "team-a": RBAC: role.rbac.authorization.k8s.io "gone" not found`)

	// 8. deletecollection through the wildcard verb; the quota is credited.
	if err := alice.CoreV1().Pods("team-a").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatalf("alice deletes her pods: %v", err)
	}
	if _, err := alice.CoreV1().Pods("team-a").Create(ctx, pod("p3"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("after the deletes: %v", err)
	}

	// 9. Removing the binding takes the rights away.
	if err := admin.RbacV1().RoleBindings("team-a").Delete(ctx, "alice-tenant", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		_, err := alice.CoreV1().Pods("team-a").List(ctx, metav1.ListOptions{})
		return apierrors.IsForbidden(err)
	})
}

// TestRBACImpersonation: impersonation is the impersonate verb on users, groups and
// serviceaccounts; the impersonated user is then authorized as itself.
func TestRBACImpersonation(t *testing.T) {
	t.Parallel()
	s := rbacServer(t)
	ctx := ctxT(t)
	admin := s.Client
	mkNamespace(t, s, "team-a")
	for _, cr := range []*rbacv1.ClusterRole{
		{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"}, Rules: []rbacv1.PolicyRule{rbacRule(strs("get", "list"), strs(""), strs("pods"))}},
		{ObjectMeta: metav1.ObjectMeta{Name: "impersonate-alice"}, Rules: []rbacv1.PolicyRule{
			rbacRule(strs("impersonate"), strs(""), strs("users"), "alice"),
			rbacRule(strs("impersonate"), strs(""), strs("groups"), "team-a"),
		}},
	} {
		if _, err := admin.RbacV1().ClusterRoles().Create(ctx, cr, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.RbacV1().RoleBindings("team-a").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "readers"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "pod-reader"},
		Subjects: []rbacv1.Subject{
			{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"},
			{Kind: rbacv1.ServiceAccountKind, Name: "builder"},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	as := func(token, user string, groups ...string) kubernetes.Interface {
		cfg := configAs(s, token)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
		return clientFor(t, cfg)
	}

	// 1. system:masters may impersonate anyone; alice is then herself.
	if _, err := as(s.Token, "alice").CoreV1().Pods("team-a").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("admin as alice lists pods: %v", err)
	}
	_, err := as(s.Token, "alice").CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	wantForbidden(t, "admin as alice elsewhere", err, `pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"`)
	if _, err := as(s.Token, "system:serviceaccount:team-a:builder").CoreV1().Pods("team-a").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("admin as the ServiceAccount lists pods: %v", err)
	}
	err = as(s.Token, "system:serviceaccount:team-a:builder").CoreV1().Pods("team-a").Delete(ctx, "p", metav1.DeleteOptions{})
	wantForbidden(t, "the ServiceAccount deletes", err, `pods "p" is forbidden: User "system:serviceaccount:team-a:builder" cannot delete resource "pods" in API group "" in the namespace "team-a"`)

	// 2. bob may not impersonate until granted, and then only what he is granted.
	_, err = as("bob-token", "alice").CoreV1().Pods("team-a").List(ctx, metav1.ListOptions{})
	wantForbidden(t, "bob as alice", err, `users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope`)
	_, err = as("bob-token", "system:serviceaccount:team-a:builder").CoreV1().Pods("team-a").List(ctx, metav1.ListOptions{})
	wantForbidden(t, "bob as a ServiceAccount", err, `serviceaccounts "builder" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "team-a"`)
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bob-impersonates"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "impersonate-alice"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "bob"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := as("bob-token", "alice", "team-a").CoreV1().Pods("team-a").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("bob as alice in team-a: %v", err)
	}
	_, err = as("bob-token", "alice", "system:masters").CoreV1().Pods("team-a").List(ctx, metav1.ListOptions{})
	wantForbidden(t, "bob as a master", err, `groups "system:masters" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" at the cluster scope`)
	_, err = as("bob-token", "carol").CoreV1().Pods("team-a").List(ctx, metav1.ListOptions{})
	wantForbidden(t, "bob as carol", err, `users "carol" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope`)
	_, err = as("bob-token", "alice").CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	wantForbidden(t, "bob as alice elsewhere", err, `pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"`)

	// 3. Extras and uids are impersonated through userextras/<key> and uids.
	cfg := configAs(s, "bob-token")
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "alice", Extra: map[string][]string{"scopes": {"view"}}}
	_, err = clientFor(t, cfg).CoreV1().Pods("team-a").List(ctx, metav1.ListOptions{})
	wantForbidden(t, "bob sets an extra", err, `userextras.authentication.k8s.io "view" is forbidden: User "bob" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope`)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "alice", UID: "1234"}
	_, err = clientFor(t, cfg).CoreV1().Pods("team-a").List(ctx, metav1.ListOptions{})
	wantForbidden(t, "bob sets a uid", err, `uids.authentication.k8s.io "1234" is forbidden: User "bob" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope`)
	cfg = configAs(s, s.Token)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "alice", UID: "1234", Extra: map[string][]string{"scopes": {"view"}}}
	if _, err := clientFor(t, cfg).CoreV1().Pods("team-a").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("admin as alice with uid and extra: %v", err)
	}

	// 4. A group without a user is a bad request.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/v1/namespaces/team-a/pods", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Impersonate-Group", "team-a")
	req.Header.Set("Authorization", "Bearer bob-token")
	tr, err := rest.TransportFor(configAs(s, ""))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("group without user: %d", resp.StatusCode)
	}
}

// TestRBACPaths: non-resource URLs, /metrics among them, are allowed through
// ClusterRoleBindings (the default system:monitoring binding for /metrics), to
// system:masters, and refused to others with upstream's text.
func TestRBACPaths(t *testing.T) {
	t.Parallel()
	s := rbacServer(t)
	ctx := ctxT(t)
	client := func(token string) *http.Client {
		tr, err := rest.TransportFor(configAs(s, token))
		if err != nil {
			t.Fatal(err)
		}
		return &http.Client{Transport: tr}
	}
	alice, prom, admin := client("alice-token"), client("prom-token"), client(s.Token)
	for _, c := range []struct {
		client *http.Client
		path   string
		code   int
		body   string
	}{
		{alice, "/metrics", 403, `"message":"forbidden: User \"alice\" cannot get path \"/metrics\""`},
		{prom, "/metrics", 200, "# HELP"},
		{alice, "/no-such-path", 403, `"message":"forbidden: User \"alice\" cannot get path \"/no-such-path\""`},
		{admin, "/no-such-path", 404, `the server could not find the requested resource`},
		{admin, "/metrics", 200, "# HELP"},
	} {
		code, body := get(t, c.client, s.URL+c.path)
		if code != c.code || !strings.Contains(body, c.body) {
			t.Errorf("%s: %d %s, want %d with %s", c.path, code, body, c.code, c.body)
		}
	}
	// Without the default system:monitoring binding, the monitoring group is refused.
	if err := s.Client.RbacV1().ClusterRoleBindings().Delete(ctx, "system:monitoring", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		code, body := get(t, prom, s.URL+"/metrics")
		return code == http.StatusForbidden && strings.Contains(body, `"message":"forbidden: User \"prom\" cannot get path \"/metrics\""`)
	})
	if code, _ := get(t, alice, s.URL+"/metrics"); code != http.StatusForbidden {
		t.Errorf("alice: %d", code)
	}
}
