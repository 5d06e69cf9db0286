package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/quotad/quotad/internal/auth/authn"
	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
)

// clientAs returns a clientset presenting a bearer token.
func clientAs(t *testing.T, s *servertest.Server, token string) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(s.Config)
	cfg.BearerToken = token
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func whoami(ctx context.Context, c kubernetes.Interface) (authenticationv1.UserInfo, error) {
	r, err := c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	return r.Status.UserInfo, nil
}

// TestAuthnServiceAccountTokens: a token from the TokenRequest subresource authenticates
// as its ServiceAccount with upstream's groups, TokenReview agrees, and the token stops
// working once the ServiceAccount is deleted; an expired token and a bound token whose
// pod is gone get 401.
func TestAuthnServiceAccountTokens(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin := s.Client
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa, err := admin.CoreV1().ServiceAccounts("team-a").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	exp := int64(1200)
	tr, err := admin.CoreV1().ServiceAccounts("team-a").CreateToken(ctx, "builder", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Status.Token == "" || time.Until(tr.Status.ExpirationTimestamp.Time) > 20*time.Minute+time.Minute || !slices.Equal(tr.Spec.Audiences, []string{authn.DefaultIssuer}) {
		t.Fatalf("token request answered %+v", tr)
	}

	// 1. The token authenticates as the ServiceAccount.
	wantGroups := []string{"system:serviceaccounts", "system:serviceaccounts:team-a", "system:authenticated"}
	u, err := whoami(ctx, clientAs(t, s, tr.Status.Token))
	if err != nil {
		t.Fatal(err)
	}
	if u.Username != "system:serviceaccount:team-a:builder" || u.UID != string(sa.UID) || !slices.Equal(u.Groups, wantGroups) {
		t.Fatalf("whoami as the service account: %+v", u)
	}

	// 2. TokenReview agrees, and refuses garbage and other audiences.
	rev, err := admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tr.Status.Token}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rev.Status.Authenticated || rev.Status.User.Username != u.Username || !slices.Equal(rev.Status.User.Groups, wantGroups) || !slices.Equal(rev.Status.Audiences, []string{authn.DefaultIssuer}) {
		t.Fatalf("token review: %+v", rev.Status)
	}
	for _, spec := range []authenticationv1.TokenReviewSpec{{Token: "garbage"}, {Token: tr.Status.Token, Audiences: []string{"vault"}}} {
		rev, err := admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: spec}, metav1.CreateOptions{})
		if err != nil || rev.Status.Authenticated {
			t.Fatalf("token review of %+v: %+v %v", spec, rev, err)
		}
	}
	_, err = admin.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{}, metav1.CreateOptions{})
	if !apierrors.IsBadRequest(err) || err.Error() != "token is required for TokenReview in authentication" {
		t.Fatalf("token review without a token: %v", err)
	}

	// 3. Bad requests for tokens.
	short := int64(60)
	_, err = admin.CoreV1().ServiceAccounts("team-a").CreateToken(ctx, "builder", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &short}}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || err.Error() != `TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes` {
		t.Fatalf("short token: %v", err)
	}
	_, err = admin.CoreV1().ServiceAccounts("team-a").CreateToken(ctx, "nobody", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) || err.Error() != `serviceaccounts "nobody" not found` {
		t.Fatalf("token of a missing service account: %v", err)
	}

	// 4. A token bound to a pod works while the pod exists.
	pod, err := admin.CoreV1().Pods("team-a").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{ServiceAccountName: "builder", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bound, err := admin.CoreV1().ServiceAccounts("team-a").CreateToken(ctx, "builder", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p", UID: pod.UID}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bu, err := whoami(ctx, clientAs(t, s, bound.Status.Token))
	if err != nil || !slices.Equal(bu.Extra[authn.ExtraPodName], []string{"p"}) || !slices.Equal(bu.Extra[authn.ExtraPodUID], []string{string(pod.UID)}) {
		t.Fatalf("bound token: %+v %v", bu, err)
	}
	_, err = admin.CoreV1().ServiceAccounts("team-a").CreateToken(ctx, "builder", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "ConfigMap", APIVersion: "v1", Name: "p"}}}, metav1.CreateOptions{})
	if !apierrors.IsBadRequest(err) || err.Error() != "cannot bind token to object of type /v1, Kind=ConfigMap" {
		t.Fatalf("token bound to a config map: %v", err)
	}
	if err := admin.CoreV1().Pods("team-a").Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUnauthorized(t, ctx, clientAs(t, s, bound.Status.Token), "token bound to a deleted pod")
	// A pod created again under the same name is another pod (another UID): the token
	// stays refused.
	again, err := admin.CoreV1().Pods("team-a").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{ServiceAccountName: "builder", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{})
	if err != nil || again.UID == pod.UID {
		t.Fatalf("pod created again: %v (UID %s, was %s)", err, again.UID, pod.UID)
	}
	if _, err := whoami(ctx, clientAs(t, s, bound.Status.Token)); !apierrors.IsUnauthorized(err) {
		t.Fatalf("token bound to a deleted pod, its name taken again: %v", err)
	}

	// 5. An expired token, signed with the server's own key, is refused.
	key, err := authn.LoadOrCreateKey(s.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	past, err := authn.NewServiceAccounts(key, nil, clocktesting.NewFakePassiveClock(time.Now().Add(-2*time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	expired, _, err := past.Issue(authn.TokenSpec{Namespace: "team-a", ServiceAccount: authn.Ref{Name: "builder", UID: sa.UID}, Expiration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := whoami(ctx, clientAs(t, s, expired)); !apierrors.IsUnauthorized(err) {
		t.Fatalf("expired token: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(s.DataDir, authn.KeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("signing key: %v %v", fi, err)
	}

	// 6. Deleting the ServiceAccount ends its tokens.
	if err := admin.CoreV1().ServiceAccounts("team-a").Delete(ctx, "builder", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUnauthorized(t, ctx, clientAs(t, s, tr.Status.Token), "token of a deleted service account")
	// Recreated under the same name, it is another ServiceAccount: the old token stays dead.
	if _, err := admin.CoreV1().ServiceAccounts("team-a").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := whoami(ctx, clientAs(t, s, tr.Status.Token)); !apierrors.IsUnauthorized(err) {
		t.Fatalf("token of a recreated service account: %v", err)
	}
}

// waitUnauthorized waits until a client's requests get 401 (the token index learns of
// deletions through its watch).
func waitUnauthorized(t *testing.T, ctx context.Context, c kubernetes.Interface, what string) {
	t.Helper()
	for {
		_, err := whoami(ctx, c)
		if apierrors.IsUnauthorized(err) {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("%s: still answered %v", what, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestAuthnAnonymousAndReviews: anonymous requests get 401 but for the health paths and
// /version; the review resources are create-only in discovery and 405 otherwise; the
// self reviews answer for the caller.
func TestAuthnAnonymousAndReviews(t *testing.T) {
	t.Parallel()
	csv := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(csv, []byte("alice-token,alice,1001,team-a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := servertest.Start(t, func(c *server.Config) { c.TokenAuthFile = csv })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hc, err := rest.HTTPClientFor(&rest.Config{TLSClientConfig: rest.TLSClientConfig{CAData: s.CAPEM}})
	if err != nil {
		t.Fatal(err)
	}
	get := func(method, path, token string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, method, s.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	const unauthorized = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`
	for _, p := range []string{"/api", "/api/v1/namespaces", "/apis", "/openapi/v2", "/metrics", "/apis/authentication.k8s.io/v1/selfsubjectreviews"} {
		if code, body := get("GET", p, ""); code != 401 || body != unauthorized {
			t.Errorf("anonymous GET %s: %d %s", p, code, body)
		}
	}
	for _, p := range []string{"/healthz", "/livez", "/readyz", "/version"} {
		if code, body := get("GET", p, ""); code != 200 {
			t.Errorf("anonymous GET %s: %d %s", p, code, body)
		}
	}
	// A credential that does not verify is a 401 everywhere, the open paths included; a
	// good one is served there.
	for _, p := range []string{"/healthz", "/livez", "/readyz", "/version"} {
		if code, body := get("GET", p, "wrong"); code != 401 || body != unauthorized {
			t.Errorf("GET %s with a bad token: %d %s", p, code, body)
		}
		if code, body := get("GET", p, s.Token); code != 200 {
			t.Errorf("GET %s as the admin: %d %s", p, code, body)
		}
	}
	const notAllowed = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server does not allow this method on the requested resource","reason":"MethodNotAllowed","details":{},"code":405}`
	for _, p := range []string{"/apis/authentication.k8s.io/v1/tokenreviews", "/apis/authorization.k8s.io/v1/subjectaccessreviews/x", "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews"} {
		if code, body := get("GET", p, s.Token); code != 405 || body != notAllowed {
			t.Errorf("GET %s: %d %s", p, code, body)
		}
	}

	// Discovery lists the reviews with verb create only, and serviceaccounts/token.
	rl, err := s.Client.Discovery().ServerResourcesForGroupVersion("authorization.k8s.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rl.APIResources {
		names = append(names, r.Name)
		if !slices.Equal(r.Verbs, []string{"create"}) {
			t.Errorf("%s verbs %v", r.Name, r.Verbs)
		}
	}
	if !slices.Equal(names, []string{"localsubjectaccessreviews", "selfsubjectaccessreviews", "selfsubjectrulesreviews", "subjectaccessreviews"}) {
		t.Errorf("authorization.k8s.io/v1 resources %v", names)
	}
	core, err := s.Client.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range core.APIResources {
		if r.Name == "serviceaccounts/token" {
			found = r.Kind == "TokenRequest" && r.Group == "authentication.k8s.io" && slices.Equal(r.Verbs, []string{"create"})
		}
	}
	if !found {
		t.Error("discovery lacks serviceaccounts/token")
	}

	// Self reviews.
	alice := clientAs(t, s, "alice-token")
	u, err := whoami(ctx, alice)
	if err != nil || u.Username != "alice" || u.UID != "1001" || !slices.Equal(u.Groups, []string{"team-a", "system:authenticated"}) {
		t.Fatalf("alice whoami: %+v %v", u, err)
	}
	u, err = whoami(ctx, s.Client)
	if err != nil || u.Username != "admin" || !slices.Equal(u.Groups, []string{"system:masters", "system:authenticated"}) {
		t.Fatalf("admin whoami: %+v %v", u, err)
	}
	can := func(c kubernetes.Interface, verb, resource string) bool {
		t.Helper()
		r, err := c.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "team-a", Verb: verb, Resource: resource}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status.Allowed
	}
	if !can(s.Client, "update", "resourcequotas") {
		t.Error("admin may not update quotas")
	}
	if can(alice, "update", "resourcequotas") {
		t.Error("alice, bound to nothing, may update quotas")
	}
	_, err = s.Client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || err.Error() != `.authorization.k8s.io "" is invalid: spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified` {
		t.Errorf("empty self subject access review: %v", err)
	}
	_, err = s.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}}}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.user: Invalid value: "": at least one of user or group must be specified`) {
		t.Errorf("subject access review without a subject: %v", err)
	}
	sar, err := s.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		Groups: []string{"system:masters"}, NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}}}, metav1.CreateOptions{})
	if err != nil || !sar.Status.Allowed {
		t.Errorf("subject access review of a master: %+v %v", sar, err)
	}
	lsar, err := s.Client.AuthorizationV1().LocalSubjectAccessReviews("team-a").Create(ctx, &authorizationv1.LocalSubjectAccessReview{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a"},
		Spec:       authorizationv1.SubjectAccessReviewSpec{User: "alice", ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "team-b", Verb: "get", Resource: "pods"}}}, metav1.CreateOptions{})
	if !apierrors.IsBadRequest(err) || err.Error() != "spec.resourceAttributes.namespace must match namespace: team-a" {
		t.Errorf("local subject access review of another namespace: %+v %v", lsar, err)
	}
	rules, err := s.Client.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "team-a"}}, metav1.CreateOptions{})
	if err != nil || len(rules.Status.ResourceRules) == 0 {
		t.Fatalf("admin rules review: %+v %v", rules, err)
	}
	b, _ := json.Marshal(rules.Status.ResourceRules)
	if !strings.Contains(string(b), `"verbs":["*"]`) {
		t.Errorf("admin rules: %s", b)
	}
}
