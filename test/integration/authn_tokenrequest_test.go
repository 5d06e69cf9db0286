package integration

import (
	"context"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestAuthnTokenRequestChecks: the TokenRequest subresource's refusals as upstream's
// (a pod of another ServiceAccount, a bound object's UID that is not its own, a body
// naming another ServiceAccount), a token bound to a Secret that ends with it, and tokens
// that outlive a restart (the signing key is kept in the data dir).
func TestAuthnTokenRequestChecks(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin := s.Client
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"builder", "other"} {
		if _, err := admin.CoreV1().ServiceAccounts("team-a").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.CoreV1().Pods("team-a").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{ServiceAccountName: "other", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	secret, err := admin.CoreV1().Secrets("team-a").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	request := func(name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
		return admin.CoreV1().ServiceAccounts("team-a").CreateToken(ctx, name, tr, metav1.CreateOptions{})
	}
	bound := func(kind, name string, uid string) *authenticationv1.TokenRequest {
		return &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: kind, APIVersion: "v1", Name: name, UID: k8stypes.UID(uid)}}}
	}
	cases := []struct {
		name string
		sa   string
		tr   *authenticationv1.TokenRequest
		want string
		is   func(error) bool
	}{
		{"pod of another service account", "builder", bound("Pod", "p", ""), `cannot bind token for serviceaccount "builder" to pod running with different serviceaccount name.`, apierrors.IsBadRequest},
		{"bound object's uid", "builder", bound("Secret", "s", "not-its-uid"), `Operation cannot be fulfilled on Secret "s": the UID in the bound object reference (not-its-uid) does not match the UID in record. The object might have been deleted and then recreated`, apierrors.IsConflict},
		{"missing bound object", "builder", bound("Secret", "nope", ""), `secrets "nope" not found`, apierrors.IsNotFound},
		{"body names another service account", "builder", &authenticationv1.TokenRequest{ObjectMeta: metav1.ObjectMeta{Name: "other"}},
			`TokenRequest.authentication.k8s.io "builder" is invalid: metadata.name: Invalid value: "other": must match the service account name if specified`, apierrors.IsInvalid},
	}
	for _, c := range cases {
		_, err := request(c.sa, c.tr)
		if err == nil || !c.is(err) || err.Error() != c.want {
			t.Errorf("%s: %v", c.name, err)
		}
	}

	// A token bound to the Secret works until the Secret goes.
	tr, err := request("builder", bound("Secret", "s", string(secret.UID)))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Name != "builder" || tr.Namespace != "team-a" {
		t.Errorf("answered metadata %+v", tr.ObjectMeta)
	}
	plain, err := request("builder", &authenticationv1.TokenRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if u, err := whoami(ctx, clientAs(t, s, tr.Status.Token)); err != nil || u.Username != "system:serviceaccount:team-a:builder" {
		t.Fatalf("secret-bound token: %+v %v", u, err)
	}
	if err := admin.CoreV1().Secrets("team-a").Delete(ctx, "s", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUnauthorized(t, ctx, clientAs(t, s, tr.Status.Token), "token bound to a deleted secret")

	// After a restart, the signing key and the index are back: the token still works.
	s2 := s.Restart(t)
	if u, err := whoami(ctx, clientAs(t, s2, plain.Status.Token)); err != nil || u.Username != "system:serviceaccount:team-a:builder" {
		t.Fatalf("token after a restart: %+v %v", u, err)
	}
}
