package apiserver

import (
	"net/http"
	"net/http/httptest"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/auth/rbac"
)

// TestForbiddenTexts: the attributes of a request and upstream's 403 text for it, byte for
// byte, with the Status details kube-apiserver sends.
func TestForbiddenTexts(t *testing.T) {
	alice := auth.User{Name: "alice", Groups: []string{auth.AllAuthenticated}}
	cases := []struct {
		method, url string
		reason      string
		want        string
		kind, group string
		name        string
	}{
		{http.MethodPut, "/api/v1/namespaces/team-a/resourcequotas/compute", "",
			`resourcequotas "compute" is forbidden: User "alice" cannot update resource "resourcequotas" in API group "" in the namespace "team-a"`, "resourcequotas", "", "compute"},
		{http.MethodPut, "/api/v1/namespaces/team-a/resourcequotas/compute/status", "",
			`resourcequotas "compute" is forbidden: User "alice" cannot update resource "resourcequotas/status" in API group "" in the namespace "team-a"`, "resourcequotas", "", "compute"},
		{http.MethodPatch, "/api/v1/namespaces/team-a/resourcequotas/compute", "",
			`resourcequotas "compute" is forbidden: User "alice" cannot patch resource "resourcequotas" in API group "" in the namespace "team-a"`, "resourcequotas", "", "compute"},
		{http.MethodGet, "/api/v1/pods", "",
			`pods is forbidden: User "alice" cannot list resource "pods" in API group "" at the cluster scope`, "pods", "", ""},
		{http.MethodGet, "/api/v1/namespaces/team-b/pods?watch=true", "",
			`pods is forbidden: User "alice" cannot watch resource "pods" in API group "" in the namespace "team-b"`, "pods", "", ""},
		{http.MethodGet, "/api/v1/namespaces/team-b/pods?fieldSelector=metadata.name%3Dweb&watch=1", "",
			`pods "web" is forbidden: User "alice" cannot watch resource "pods" in API group "" in the namespace "team-b"`, "pods", "", "web"},
		{http.MethodGet, "/api/v1/namespaces/team-b/pods/web/log", "",
			`pods "web" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "team-b"`, "pods", "", "web"},
		{http.MethodPost, "/api/v1/namespaces/team-b/pods", "",
			`pods is forbidden: User "alice" cannot create resource "pods" in API group "" in the namespace "team-b"`, "pods", "", ""},
		{http.MethodDelete, "/apis/apps/v1/namespaces/team-b/deployments", "",
			`deployments.apps is forbidden: User "alice" cannot deletecollection resource "deployments" in API group "apps" in the namespace "team-b"`, "deployments", "apps", ""},
		{http.MethodDelete, "/apis/apps/v1/namespaces/team-b/deployments/web", "",
			`deployments.apps "web" is forbidden: User "alice" cannot delete resource "deployments" in API group "apps" in the namespace "team-b"`, "deployments", "apps", "web"},
		{http.MethodGet, "/api/v1/namespaces/team-b", "",
			`namespaces "team-b" is forbidden: User "alice" cannot get resource "namespaces" in API group "" in the namespace "team-b"`, "namespaces", "", "team-b"},
		{http.MethodPut, "/api/v1/namespaces/team-b/finalize", "",
			`namespaces "team-b" is forbidden: User "alice" cannot update resource "namespaces/finalize" in API group "" in the namespace "team-b"`, "namespaces", "", "team-b"},
		{http.MethodGet, "/api/v1/namespaces", "",
			`namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope`, "namespaces", "", ""},
		{http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", "",
			`clusterrolebindings.rbac.authorization.k8s.io is forbidden: User "alice" cannot create resource "clusterrolebindings" in API group "rbac.authorization.k8s.io" at the cluster scope`, "clusterrolebindings", "rbac.authorization.k8s.io", ""},
		{http.MethodGet, "/api/v1/namespaces/team-a/secrets/s", `RBAC: role.rbac.authorization.k8s.io "gone" not found`,
			`secrets "s" is forbidden: User "alice" cannot get resource "secrets" in API group "" in the namespace "team-a": RBAC: role.rbac.authorization.k8s.io "gone" not found`, "secrets", "", "s"},
		{http.MethodGet, "/metrics", "", `forbidden: User "alice" cannot get path "/metrics"`, "", "", ""},
		{http.MethodGet, "/apis", "", `forbidden: User "alice" cannot get path "/apis"`, "", "", ""},
		{http.MethodPost, "/api/v1", "", `forbidden: User "alice" cannot post path "/api/v1"`, "", "", ""},
	}
	for _, c := range cases {
		r := httptest.NewRequest(c.method, c.url, nil)
		info, isResource := parseAPIPath(r)
		err := forbidden(requestAttributes(r, info, isResource, alice), c.reason)
		var st *apierrors.StatusError
		if !apierrors.IsForbidden(err) || !asStatus(err, &st) {
			t.Fatalf("%s %s: %v is not a 403", c.method, c.url, err)
		}
		s := st.Status()
		if s.Message != c.want {
			t.Errorf("%s %s:\n got %s\nwant %s", c.method, c.url, s.Message, c.want)
		}
		if s.Details == nil || s.Details.Kind != c.kind || s.Details.Group != c.group || s.Details.Name != c.name {
			t.Errorf("%s %s: details %+v", c.method, c.url, s.Details)
		}
	}
}

func asStatus(err error, st **apierrors.StatusError) bool {
	s, ok := err.(*apierrors.StatusError)
	*st = s
	return ok
}

// TestImpersonationRequests: the headers kubectl --as, --as-group, --as-uid and
// Impersonate-Extra-* send, read as upstream reads them.
func TestImpersonationRequests(t *testing.T) {
	cases := []struct {
		name    string
		headers http.Header
		want    []impersonation
		err     bool
	}{
		{"none", http.Header{}, nil, false},
		{"user and groups", http.Header{"Impersonate-User": {"alice"}, "Impersonate-Group": {"team-a", "dev"}},
			[]impersonation{{kind: "User", name: "alice"}, {kind: "Group", name: "team-a"}, {kind: "Group", name: "dev"}}, false},
		{"service account", http.Header{"Impersonate-User": {"system:serviceaccount:team-a:builder"}},
			[]impersonation{{kind: "ServiceAccount", namespace: "team-a", name: "builder"}}, false},
		{"malformed service account is a user", http.Header{"Impersonate-User": {"system:serviceaccount:team-a"}},
			[]impersonation{{kind: "User", name: "system:serviceaccount:team-a"}}, false},
		{"extra key lowercased and unescaped", http.Header{"Impersonate-User": {"alice"}, "Impersonate-Extra-Example.com%2fscopes": {"a"}},
			[]impersonation{{kind: "User", name: "alice"}, {kind: "UserExtra", key: "example.com/scopes", name: "a"}}, false},
		{"uid", http.Header{"Impersonate-User": {"alice"}, "Impersonate-Uid": {"1234"}},
			[]impersonation{{kind: "User", name: "alice"}, {kind: "UID", name: "1234"}}, false},
		{"group without user", http.Header{"Impersonate-Group": {"team-a"}}, nil, true},
		{"uid without user", http.Header{"Impersonate-Uid": {"1"}}, nil, true},
	}
	for _, c := range cases {
		got, err := impersonationRequests(c.headers)
		if (err != nil) != c.err {
			t.Errorf("%s: err %v", c.name, err)
			continue
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
		}
	}
}

// FuzzAuthorizeRequest: any method, path, query and Impersonate-* headers give attributes,
// a 403 text and an impersonation answer without panicking; a refusal is always a 403 or
// upstream's 500 for parts without a user, and an allowed impersonation names a user.
func FuzzAuthorizeRequest(f *testing.F) {
	f.Add("GET", "/api/v1/namespaces/team-a/pods?fieldSelector=metadata.name%3Dweb&watch=1", "alice", "team-a", "Scopes", "view", "")
	f.Add("PUT", "/api/v1/namespaces/team-a/resourcequotas/compute/status", "system:serviceaccount:team-a:builder", "", "", "", "1")
	f.Add("DELETE", "/apis/apps/v1/namespaces/x/deployments", "", "g", "", "", "")
	f.Add("POST", "/api/v1/namespaces", "system:serviceaccount::", "system:masters", "a%2fb", "", "")
	f.Add("PATCH", "/api/v1/namespaces/a/finalize?fieldSelector=metadata.name%3D..", "system:anonymous", "", "%zz", "v", "u")
	authz := rbac.New()
	authz.Update(rbac.Objects{
		ClusterRoles: []*rbacv1.ClusterRole{{ObjectMeta: metav1.ObjectMeta{Name: "imp"}, Rules: []rbacv1.PolicyRule{
			{Verbs: []string{"impersonate"}, APIGroups: []string{""}, Resources: []string{"users", "groups"}},
		}}},
		ClusterRoleBindings: []*rbacv1.ClusterRoleBinding{{ObjectMeta: metav1.ObjectMeta{Name: "imp"},
			RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "imp"}, Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "bob"}}}},
	})
	s := &Server{cfg: Config{Authz: authz}}
	bob := auth.User{Name: "bob", Groups: []string{auth.AllAuthenticated}}
	f.Fuzz(func(t *testing.T, method, target, user, group, extraKey, extraValue, uid string) {
		r, err := http.NewRequest(method, "https://quotad"+target, nil)
		if err != nil {
			return
		}
		if user != "" {
			r.Header.Set("Impersonate-User", user)
		}
		if group != "" {
			r.Header.Set("Impersonate-Group", group)
		}
		if extraKey != "" {
			r.Header.Set("Impersonate-Extra-"+extraKey, extraValue)
		}
		if uid != "" {
			r.Header.Set("Impersonate-Uid", uid)
		}
		info, isResource := parseAPIPath(r)
		attrs := requestAttributes(r, info, isResource, bob)
		if err := forbidden(attrs, "reason"); !apierrors.IsForbidden(err) {
			t.Fatalf("forbidden(%+v) = %v", attrs, err)
		}
		w := httptest.NewRecorder()
		u, ok := s.impersonate(w, r, bob)
		switch {
		case ok && w.Code != http.StatusOK:
			t.Fatalf("allowed with an answer %d", w.Code)
		case ok && u.Name == "" && r.Header.Get("Impersonate-User") != "":
			t.Fatalf("impersonated nobody: %+v", u)
		case !ok && w.Code != http.StatusForbidden && w.Code != http.StatusInternalServerError:
			t.Fatalf("refused with %d %s", w.Code, w.Body)
		}
		s.allowed(httptest.NewRecorder(), r, requestAttributes(r, info, isResource, u))
	})
}
