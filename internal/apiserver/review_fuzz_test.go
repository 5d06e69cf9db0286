package apiserver_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/apiserver"
	"github.com/quotad/quotad/internal/auth/authn"
	"github.com/quotad/quotad/internal/auth/review"
	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/storage"
)

// oneServiceAccount is authn.Objects knowing ServiceAccount ns/sa.
type oneServiceAccount struct{}

func (oneServiceAccount) UID(resource, ns, name string) (types.UID, bool) {
	return "sa-uid", resource == "serviceaccounts" && ns == "ns" && name == "sa"
}

var reviewTargets = []string{
	"/apis/authentication.k8s.io/v1/tokenreviews",
	"/apis/authentication.k8s.io/v1/selfsubjectreviews",
	"/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
	"/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
	"/apis/authorization.k8s.io/v1/subjectaccessreviews",
	"/apis/authorization.k8s.io/v1/namespaces/ns/localsubjectaccessreviews",
	"/api/v1/namespaces/ns/serviceaccounts/sa/token",
}

// FuzzReviewsAndCredentials sends arbitrary credentials and bodies to the review
// resources and the token subresource through the edge with quotad's authenticators: no
// request panics or fails with a 5xx, and every credential that was not issued is a 401.
func FuzzReviewsAndCredentials(f *testing.F) {
	ctx, cancel := context.WithCancel(context.Background())
	f.Cleanup(cancel)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	etcd, err := storage.StartEmbedded(ctx, f.TempDir(), logger, storage.WithUnsafeNoFsync(), storage.WithFastElection())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { etcd.Close() })
	store := registry.NewStore(registry.Config{Storage: etcd.Store(), Catalogue: registry.NewCatalogue(), Logger: logger})
	key, err := authn.LoadOrCreateKey(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	sas, err := authn.NewServiceAccounts(key, oneServiceAccount{}, nil)
	if err != nil {
		f.Fatal(err)
	}
	tokens, err := authn.NewTokenFile("admin-token", "")
	if err != nil {
		f.Fatal(err)
	}
	a := &authn.Authenticator{Tokens: tokens, ServiceAccounts: sas}
	rv := &review.Reviews{Tokens: a, APIAudiences: sas.APIAudiences()}
	handlers := map[schema.GroupResource]apiserver.Review{}
	for gr, h := range rv.Handlers() {
		handlers[gr] = apiserver.Review(h)
	}
	h := apiserver.New(apiserver.Config{Store: store, Logger: logger, Auth: a, Reviews: handlers})
	saToken, _, err := sas.Issue(authn.TokenSpec{Namespace: "ns", ServiceAccount: authn.Ref{Name: "sa", UID: "sa-uid"}, Expiration: time.Hour})
	if err != nil {
		f.Fatal(err)
	}
	valid := map[string]bool{"admin-token": true, saToken: true}
	for i := range reviewTargets {
		for _, body := range []string{
			`{"spec":{"token":"admin-token"}}`, `{"spec":{"token":"` + saToken + `","audiences":["x"]}}`,
			`{"spec":{"resourceAttributes":{"namespace":"ns","verb":"get","resource":"pods"}}}`,
			`{"spec":{"nonResourceAttributes":{"path":"/x","verb":"get"},"resourceAttributes":{}}}`,
			`{"metadata":{"namespace":"ns"},"spec":{"user":"u","resourceAttributes":{"namespace":"ns"}}}`,
			`{"spec":{"namespace":"ns"}}`, `{"spec":{"expirationSeconds":600,"boundObjectRef":{"kind":"Pod","name":"p"}}}`,
			`{"metadata":{"namespace":"other"}}`, "{", "", "null", `{"spec":null}`, `{"status":{"allowed":true}}`,
		} {
			for _, cred := range []string{"Bearer admin-token", "Bearer " + saToken, "Bearer " + saToken[:len(saToken)-2], "", "Bearer x.y.z", "Basic YTpi"} {
				f.Add(uint8(i), cred, []byte(body))
			}
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, cred string, body []byte) {
		path := reviewTargets[int(which)%len(reviewTargets)]
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header["Authorization"] = []string{cred}
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 || rec.Code < 200 {
			t.Fatalf("POST %s as %q with %q: %d %s", path, cred, body, rec.Code, rec.Body)
		}
		if tok, _ := authn.BearerToken(req); !valid[tok] && rec.Code != http.StatusUnauthorized {
			t.Fatalf("POST %s as %q: %d %s", path, cred, rec.Code, rec.Body)
		}
	})
}
