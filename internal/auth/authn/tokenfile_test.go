package authn

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/quotad/quotad/internal/auth"
)

func TestAuthenticatorUsers(t *testing.T) {
	csv := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(csv, []byte("alice-token,alice,1001,\"team-a,dev\"\nbob-token,bob,1002\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tf, err := NewTokenFile("admin-token", csv)
	if err != nil {
		t.Fatal(err)
	}
	a := &Authenticator{Tokens: tf}
	cases := []struct {
		name, header string
		cert         *x509.Certificate
		ok           bool
		user         string
		groups       []string
	}{
		{name: "admin", header: "Bearer admin-token", ok: true, user: "admin", groups: []string{auth.SystemMasters, auth.AllAuthenticated}},
		{name: "scheme is case-insensitive", header: "bearer admin-token", ok: true, user: "admin", groups: []string{auth.SystemMasters, auth.AllAuthenticated}},
		{name: "file user with groups", header: "Bearer alice-token", ok: true, user: "alice", groups: []string{"team-a", "dev", auth.AllAuthenticated}},
		{name: "file user without groups", header: "Bearer bob-token", ok: true, user: "bob", groups: []string{auth.AllAuthenticated}},
		{name: "unknown token", header: "Bearer nope"},
		{name: "prefix of a token", header: "Bearer admin"},
		{name: "empty token", header: "Bearer "},
		{name: "basic", header: "Basic YWRtaW46YWRtaW4="},
		{name: "anonymous"},
		{name: "client certificate", cert: &x509.Certificate{Subject: pkix.Name{CommonName: "carol", Organization: []string{"team-b"}}}, ok: true, user: "carol", groups: []string{"team-b", auth.AllAuthenticated}},
		{name: "client certificate without a common name", cert: &x509.Certificate{Subject: pkix.Name{Organization: []string{"team-b"}}}},
		{name: "certificate first", header: "Bearer admin-token", cert: &x509.Certificate{Subject: pkix.Name{CommonName: "carol"}}, ok: true, user: "carol", groups: []string{auth.AllAuthenticated}},
	}
	for _, c := range cases {
		r := httptest.NewRequest("GET", "/api", nil)
		if c.header != "" {
			r.Header.Set("Authorization", c.header)
		}
		if c.cert != nil {
			r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{c.cert}}
		}
		u, ok := a.Authenticate(r)
		if ok != c.ok || u.Name != c.user || !slices.Equal(u.Groups, c.groups) {
			t.Errorf("%s: got %+v %v, want %q %v %v", c.name, u, ok, c.user, c.groups, c.ok)
		}
	}
}
