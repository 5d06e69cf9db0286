package review

import (
	"context"
	"errors"
	"slices"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/auth"
)

// allowPods is a hand-written Authorizer and RuleResolver: alice may get pods in team-a;
// anything about secrets is an evaluation error; "mallory" is denied outright.
type allowPods struct{}

func (allowPods) Authorize(_ context.Context, a auth.Attributes) (auth.Decision, string, error) {
	switch {
	case a.User.Name == "mallory":
		return auth.Deny, "denied by policy", nil
	case a.Resource == "secrets":
		return auth.NoOpinion, "", errors.New("secrets are out of reach")
	case a.User.Name == "alice" && a.Namespace == "team-a" && a.Verb == "get" && a.Resource == "pods":
		return auth.Allow, `RBAC: allowed by RoleBinding "a/team-a" of Role "r" to User "alice"`, nil
	}
	return auth.NoOpinion, "", nil
}

func (allowPods) RulesFor(_ context.Context, u auth.User, ns string) ([]rbacv1.PolicyRule, bool, error) {
	if u.Name != "alice" || ns != "team-a" {
		return nil, false, nil
	}
	return []rbacv1.PolicyRule{
		{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}},
		{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}},
	}, true, nil
}

func TestAccessReviews(t *testing.T) {
	alice := auth.User{Name: "alice", Groups: []string{"team-a", auth.AllAuthenticated}}
	master := auth.User{Name: "admin", Groups: []string{auth.SystemMasters, auth.AllAuthenticated}}
	pods := func(ns string) *authorizationv1.ResourceAttributes {
		return &authorizationv1.ResourceAttributes{Namespace: ns, Verb: "get", Resource: "pods"}
	}
	z := authorizationv1.GroupName
	cases := []struct {
		name     string
		with     bool // with allowPods configured
		user     auth.User
		resource string
		ns       string
		obj      runtime.Object
		err      string
		status   authorizationv1.SubjectAccessReviewStatus
	}{
		{name: "self: allowed", with: true, user: alice, resource: "selfsubjectaccessreviews", obj: &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: pods("team-a")}},
			status: authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: `RBAC: allowed by RoleBinding "a/team-a" of Role "r" to User "alice"`}},
		{name: "self: other namespace", with: true, user: alice, resource: "selfsubjectaccessreviews", obj: &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: pods("team-b")}}},
		{name: "self: evaluation error", with: true, user: alice, resource: "selfsubjectaccessreviews", obj: &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets"}}},
			status: authorizationv1.SubjectAccessReviewStatus{EvaluationError: "secrets are out of reach"}},
		{name: "self: no authorizer, not a master", user: alice, resource: "selfsubjectaccessreviews", obj: &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: pods("team-a")}}},
		{name: "self: no authorizer, master", user: master, resource: "selfsubjectaccessreviews", obj: &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}}},
			status: authorizationv1.SubjectAccessReviewStatus{Allowed: true}},
		{name: "self: neither attributes", user: alice, resource: "selfsubjectaccessreviews", obj: &authorizationv1.SelfSubjectAccessReview{},
			err: `.authorization.k8s.io "" is invalid: spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified`},
		{name: "self: both attributes", user: alice, resource: "selfsubjectaccessreviews", obj: &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: pods("a"), NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/x", Verb: "get"}}},
			err: `.authorization.k8s.io "" is invalid: spec: Invalid value: {"Path":"/x","Verb":"get"}: exactly one of nonResourceAttributes or resourceAttributes must be specified`},
		{name: "self: metadata", user: alice, resource: "selfsubjectaccessreviews", obj: &authorizationv1.SelfSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: pods("a")}},
			err: `.authorization.k8s.io "" is invalid: metadata: Invalid value: {"name":"x"}: must be empty`},
		{name: "subject: denied", with: true, user: master, resource: "subjectaccessreviews", obj: &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "mallory", ResourceAttributes: pods("team-a")}},
			status: authorizationv1.SubjectAccessReviewStatus{Denied: true, Reason: "denied by policy"}},
		{name: "subject: asks about the subject, not the caller", with: true, user: master, resource: "subjectaccessreviews", obj: &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: "bob", ResourceAttributes: pods("team-a")}}},
		{name: "subject: a master group", user: alice, resource: "subjectaccessreviews", obj: &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{Groups: []string{auth.SystemMasters}, ResourceAttributes: pods("team-a")}},
			status: authorizationv1.SubjectAccessReviewStatus{Allowed: true}},
		{name: "subject: no subject", user: master, resource: "subjectaccessreviews", obj: &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{ResourceAttributes: pods("team-a")}},
			err: `.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified`},
		{name: "local: allowed", with: true, user: master, resource: "localsubjectaccessreviews", ns: "team-a", obj: &authorizationv1.LocalSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a"}, Spec: authorizationv1.SubjectAccessReviewSpec{User: "alice", ResourceAttributes: pods("team-a")}},
			status: authorizationv1.SubjectAccessReviewStatus{Allowed: true, Reason: `RBAC: allowed by RoleBinding "a/team-a" of Role "r" to User "alice"`}},
		{name: "local: other namespace", user: master, resource: "localsubjectaccessreviews", ns: "team-a", obj: &authorizationv1.LocalSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a"}, Spec: authorizationv1.SubjectAccessReviewSpec{User: "alice", ResourceAttributes: pods("team-b")}},
			err: "spec.resourceAttributes.namespace must match namespace: team-a"},
		{name: "local: non-resource", user: master, resource: "localsubjectaccessreviews", ns: "team-a", obj: &authorizationv1.LocalSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a"}, Spec: authorizationv1.SubjectAccessReviewSpec{User: "alice", NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/x", Verb: "get"}}},
			err: `.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: {"Path":"/x","Verb":"get"}: disallowed on this kind of request`},
	}
	for _, c := range cases {
		rv := &Reviews{}
		if c.with {
			rv.Authorizer, rv.Rules = allowPods{}, allowPods{}
		}
		h := rv.Handlers()[schema.GroupResource{Group: z, Resource: c.resource}]
		out, err := h(auth.WithUser(context.Background(), c.user), c.ns, c.obj)
		if c.err != "" || err != nil {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			continue
		}
		var st authorizationv1.SubjectAccessReviewStatus
		switch o := out.(type) {
		case *authorizationv1.SelfSubjectAccessReview:
			st = o.Status
		case *authorizationv1.SubjectAccessReview:
			st = o.Status
		case *authorizationv1.LocalSubjectAccessReview:
			st = o.Status
		}
		if st != c.status {
			t.Errorf("%s: status %+v, want %+v", c.name, st, c.status)
		}
	}
}

func TestRulesReview(t *testing.T) {
	alice := auth.User{Name: "alice"}
	master := auth.User{Name: "admin", Groups: []string{auth.SystemMasters}}
	run := func(rv *Reviews, u auth.User, ns string) (*authorizationv1.SelfSubjectRulesReview, error) {
		h := rv.Handlers()[schema.GroupResource{Group: authorizationv1.GroupName, Resource: "selfsubjectrulesreviews"}]
		out, err := h(auth.WithUser(context.Background(), u), "", &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: ns}})
		if err != nil {
			return nil, err
		}
		return out.(*authorizationv1.SelfSubjectRulesReview), nil
	}
	r, err := run(&Reviews{Authorizer: allowPods{}, Rules: allowPods{}}, alice, "team-a")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Status.ResourceRules) != 1 || !slices.Equal(r.Status.ResourceRules[0].Resources, []string{"pods"}) ||
		len(r.Status.NonResourceRules) != 1 || !slices.Equal(r.Status.NonResourceRules[0].NonResourceURLs, []string{"/healthz"}) || !r.Status.Incomplete {
		t.Errorf("alice's rules: %+v", r.Status)
	}
	r, err = run(&Reviews{}, master, "team-a")
	if err != nil || len(r.Status.ResourceRules) != 1 || r.Status.ResourceRules[0].Verbs[0] != "*" || len(r.Status.NonResourceRules) != 1 {
		t.Errorf("a master without a resolver: %+v %v", r, err)
	}
	r, err = run(&Reviews{}, alice, "team-a")
	if err != nil || len(r.Status.ResourceRules) != 0 || r.Status.ResourceRules == nil {
		t.Errorf("alice without a resolver: %+v %v", r, err)
	}
	if _, err := run(&Reviews{}, alice, ""); err == nil || err.Error() != "no namespace on request" {
		t.Errorf("no namespace: %v", err)
	}
}

// tokens is a hand-written TokenAuthenticator knowing one token.
type tokens struct{}

func (tokens) AuthenticateToken(tok string, auds []string) (auth.User, []string, bool) {
	if tok != "good" {
		return auth.User{}, nil, false
	}
	return auth.User{Name: "sa", UID: "u", Groups: []string{"g"}, Extra: map[string][]string{"k": {"v"}}}, auds, true
}

func TestAuthenticationReviews(t *testing.T) {
	rv := &Reviews{Tokens: tokens{}, APIAudiences: []string{"api"}}
	h := rv.Handlers()
	tr := h[schema.GroupResource{Group: authenticationv1.GroupName, Resource: "tokenreviews"}]
	out, err := tr(context.Background(), "", &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: "good"}})
	if err != nil {
		t.Fatal(err)
	}
	st := out.(*authenticationv1.TokenReview).Status
	if !st.Authenticated || st.User.Username != "sa" || !slices.Equal(st.Audiences, []string{"api"}) || !slices.Equal(st.User.Extra["k"], []string{"v"}) {
		t.Errorf("good token: %+v", st)
	}
	out, err = tr(context.Background(), "", &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: "bad"}, Status: authenticationv1.TokenReviewStatus{Authenticated: true}})
	if err != nil || out.(*authenticationv1.TokenReview).Status.Authenticated {
		t.Errorf("bad token (claiming to be authenticated): %+v %v", out, err)
	}
	if _, err := tr(context.Background(), "", &authenticationv1.TokenReview{}); err == nil || err.Error() != "token is required for TokenReview in authentication" {
		t.Errorf("no token: %v", err)
	}
	if _, err := tr(context.Background(), "ns", &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: "good"}}); err == nil || err.Error() != "namespace is not allowed on this type: ns" {
		t.Errorf("namespaced: %v", err)
	}
	ssr := h[schema.GroupResource{Group: authenticationv1.GroupName, Resource: "selfsubjectreviews"}]
	out, err = ssr(auth.WithUser(context.Background(), auth.User{Name: "alice", Groups: []string{"team-a"}}), "", &authenticationv1.SelfSubjectReview{})
	if err != nil || out.(*authenticationv1.SelfSubjectReview).Status.UserInfo.Username != "alice" {
		t.Errorf("self subject review: %+v %v", out, err)
	}
}
