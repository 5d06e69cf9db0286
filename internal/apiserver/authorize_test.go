package apiserver

import (
	"net/http"
	"net/http/httptest"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/quotad/quotad/internal/auth"
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
