package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/auth/authn"
)

type denyAll struct{}

func (denyAll) AuthorizePath(auth.User, string, string) bool { return false }

type allowAuthenticated struct{}

func (allowAuthenticated) AuthorizePath(auth.User, string, string) bool { return true }

// TestGuarded: /metrics and /debug/pprof/ answer anonymous requests with the API's 401
// Status and requests their authorizer denies with kube-apiserver's 403 for a
// non-resource path.
func TestGuarded(t *testing.T) {
	t.Parallel()
	tokens, err := authn.NewTokenFile("admin-token", "")
	if err != nil {
		t.Fatal(err)
	}
	auth := &authn.Authenticator{Tokens: tokens}
	const unauthorized = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`
	tests := []struct {
		name     string
		token    string
		authz    pathAuthorizer
		wantCode int
		wantBody string
	}{
		{"anonymous", "", allowAuthenticated{}, 401, unauthorized},
		{"unknown token", "nope", allowAuthenticated{}, 401, unauthorized},
		{"admin", "admin-token", allowAuthenticated{}, 200, "served"},
		{"admin denied", "admin-token", denyAll{}, 403,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: User \"admin\" cannot get path \"/metrics\"","reason":"Forbidden","details":{},"code":403}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := guarded(auth, tc.authz, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, "served")
			}))
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.wantCode || rec.Body.String() != tc.wantBody {
				t.Fatalf("%d %s\nwant %d %s", rec.Code, rec.Body.String(), tc.wantCode, tc.wantBody)
			}
		})
	}
}
