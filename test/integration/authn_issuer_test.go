package integration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
)

type authnWarnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *authnWarnings) HandleWarningHeader(_ int, _ string, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
}

// TestAuthnIssuerAndAudiences: --service-account-issuer, --api-audiences and
// --service-account-max-token-expiration shape the tokens issued and accepted, as
// kube-apiserver's flags do.
func TestAuthnIssuerAndAudiences(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t, func(c *server.Config) {
		c.ServiceAccountIssuer = "https://quotad.example"
		c.APIAudiences = []string{"quotad", "other"}
		c.ServiceAccountMaxTokenExpiration = time.Hour
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := s.Client.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var w authnWarnings
	cfg := rest.CopyConfig(s.Config)
	cfg.WarningHandler = &w
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	exp := int64(7200)
	tr, err := c.CoreV1().ServiceAccounts("default").CreateToken(ctx, "robot", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *tr.Spec.ExpirationSeconds != 3600 || !slices.Equal(w.msgs, []string{"requested expiration of 7200 seconds shortened to 3600 seconds"}) || !slices.Equal(tr.Spec.Audiences, []string{"quotad", "other"}) {
		t.Fatalf("token request: %+v, authnWarnings %v", tr.Spec, w.msgs)
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.Split(tr.Status.Token, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		Iss string   `json:"iss"`
		Aud []string `json:"aud"`
		Exp int64    `json:"exp"`
		Iat int64    `json:"iat"`
		K8s struct {
			Namespace      string `json:"namespace"`
			ServiceAccount struct {
				Name string `json:"name"`
			} `json:"serviceaccount"`
		} `json:"kubernetes.io"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	if claims.Iss != "https://quotad.example" || !slices.Equal(claims.Aud, []string{"quotad", "other"}) || claims.Exp-claims.Iat != 3600 ||
		claims.K8s.Namespace != "default" || claims.K8s.ServiceAccount.Name != "robot" {
		t.Fatalf("claims %s", payload)
	}
	if u, err := whoami(ctx, clientAs(t, s, tr.Status.Token)); err != nil || u.Username != "system:serviceaccount:default:robot" {
		t.Fatalf("whoami: %+v %v", u, err)
	}
	rev, err := s.Client.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tr.Status.Token}}, metav1.CreateOptions{})
	if err != nil || !rev.Status.Authenticated || !slices.Equal(rev.Status.Audiences, []string{"quotad", "other"}) {
		t.Fatalf("token review: %+v %v", rev, err)
	}
	// A token for an audience that is not the API's is good for TokenReview of that
	// audience only.
	vault, err := c.CoreV1().ServiceAccounts("default").CreateToken(ctx, "robot", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: []string{"vault"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := whoami(ctx, clientAs(t, s, vault.Status.Token)); err == nil {
		t.Fatal("a token for vault authenticated to quotad")
	}
	rev, err = s.Client.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: vault.Status.Token, Audiences: []string{"vault"}}}, metav1.CreateOptions{})
	if err != nil || !rev.Status.Authenticated || !slices.Equal(rev.Status.Audiences, []string{"vault"}) {
		t.Fatalf("token review for vault: %+v %v", rev, err)
	}
}
