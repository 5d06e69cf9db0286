package authn

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/quotad/quotad/internal/auth"
)

// objects is a hand-written Objects: the UIDs of objects by resource/namespace/name.
type objects map[string]types.UID

func (o objects) UID(resource, ns, name string) (types.UID, bool) {
	uid, ok := o[resource+"/"+ns+"/"+name]
	return uid, ok
}

func TestKeyIsKeptPrivateAndReused(t *testing.T) {
	dir := t.TempDir()
	k1, err := LoadOrCreateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	k2, err := LoadOrCreateKey(dir)
	if err != nil || !k1.Equal(k2) {
		t.Fatalf("second load: %v, equal %v", err, k1.Equal(k2))
	}
	if err := os.WriteFile(filepath.Join(dir, KeyFile), []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateKey(dir); err == nil || !strings.Contains(err.Error(), "no PEM data") {
		t.Fatalf("junk key: %v", err)
	}
}

func TestServiceAccountTokens(t *testing.T) {
	key, err := LoadOrCreateKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	otherKey, err := LoadOrCreateKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(now)
	objs := objects{"serviceaccounts/team-a/default": "sa-uid", "pods/team-a/p": "pod-uid", "secrets/team-a/s": "secret-uid"}
	sas, err := NewServiceAccounts(key, objs, clk)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewServiceAccounts(otherKey, objs, clk)
	sa := Ref{Name: "default", UID: "sa-uid"}
	issue := func(s *ServiceAccounts, spec TokenSpec) string {
		t.Helper()
		if spec.Namespace == "" {
			spec.Namespace = "team-a"
		}
		if spec.ServiceAccount.Name == "" {
			spec.ServiceAccount = sa
		}
		if spec.Expiration == 0 {
			spec.Expiration = time.Hour
		}
		tok, exp, err := s.Issue(spec)
		if err != nil {
			t.Fatal(err)
		}
		if !exp.Equal(now.Add(spec.Expiration)) {
			t.Fatalf("expiry %v", exp)
		}
		return tok
	}
	plain := issue(sas, TokenSpec{})
	cases := []struct {
		name      string
		tok       string
		audiences []string
		at        time.Time
		ok        bool
		matched   []string
		extra     map[string][]string
	}{
		{name: "api audience", tok: plain, ok: true, matched: []string{DefaultIssuer}},
		{name: "asked audience", tok: issue(sas, TokenSpec{Audiences: []string{"vault"}}), audiences: []string{"other", "vault"}, ok: true, matched: []string{"vault"}},
		{name: "other audience is not quotad's", tok: issue(sas, TokenSpec{Audiences: []string{"vault"}})},
		{name: "expired", tok: plain, at: now.Add(time.Hour)},
		{name: "not yet valid", tok: plain, at: now.Add(-time.Minute)},
		{name: "other key", tok: issue(other, TokenSpec{})},
		{name: "tampered payload", tok: tamper(plain)},
		{name: "deleted service account", tok: issue(sas, TokenSpec{ServiceAccount: Ref{Name: "gone", UID: "x"}})},
		{name: "recreated service account", tok: issue(sas, TokenSpec{ServiceAccount: Ref{Name: "default", UID: "old-uid"}})},
		{name: "bound to a pod", tok: issue(sas, TokenSpec{Pod: &Ref{Name: "p", UID: "pod-uid"}}), ok: true, matched: []string{DefaultIssuer},
			extra: map[string][]string{ExtraPodName: {"p"}, ExtraPodUID: {"pod-uid"}}},
		{name: "bound to a deleted pod", tok: issue(sas, TokenSpec{Pod: &Ref{Name: "p", UID: "old"}})},
		{name: "bound to a secret", tok: issue(sas, TokenSpec{Secret: &Ref{Name: "s", UID: "secret-uid"}}), ok: true, matched: []string{DefaultIssuer}},
		{name: "bound to a deleted secret", tok: issue(sas, TokenSpec{Secret: &Ref{Name: "t", UID: "secret-uid"}})},
		{name: "not a jwt", tok: "abc"},
		{name: "none algorithm", tok: "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + strings.Split(plain, ".")[1] + "."},
	}
	for _, c := range cases {
		clk.SetTime(now)
		if !c.at.IsZero() {
			clk.SetTime(c.at)
		}
		u, matched, ok := sas.AuthenticateToken(c.tok, c.audiences)
		if ok != c.ok || !slices.Equal(matched, c.matched) {
			t.Errorf("%s: ok %v audiences %v, want %v %v", c.name, ok, matched, c.ok, c.matched)
			continue
		}
		if !ok {
			continue
		}
		want := []string{auth.AllServiceAccounts, "system:serviceaccounts:team-a", auth.AllAuthenticated}
		if u.Name != "system:serviceaccount:team-a:default" || u.UID != "sa-uid" || !slices.Equal(u.Groups, want) {
			t.Errorf("%s: user %+v", c.name, u)
		}
		for k, v := range c.extra {
			if !slices.Equal(u.Extra[k], v) {
				t.Errorf("%s: extra %s = %v, want %v", c.name, k, u.Extra[k], v)
			}
		}
		if id := u.Extra[ExtraCredentialID]; len(id) != 1 || !strings.HasPrefix(id[0], "JTI=") {
			t.Errorf("%s: credential id %v", c.name, id)
		}
	}
}

// TestVerifiedTokensStillChecked: a token whose signature was verified before is still
// checked for expiry and for its ServiceAccount on every use.
func TestVerifiedTokensStillChecked(t *testing.T) {
	key, err := LoadOrCreateKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakePassiveClock(time.Now())
	objs := objects{"serviceaccounts/ns/sa": "uid"}
	sas, err := NewServiceAccounts(key, objs, clk)
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := sas.Issue(TokenSpec{Namespace: "ns", ServiceAccount: Ref{Name: "sa", UID: "uid"}, Expiration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func()
		ok   bool
	}{
		{"first use", func() {}, true},
		{"seen", func() {}, true},
		{"service account deleted", func() { delete(objs, "serviceaccounts/ns/sa") }, false},
		{"service account back with its uid (a relist)", func() { objs["serviceaccounts/ns/sa"] = "uid" }, true},
		{"expired", func() { clk.SetTime(clk.Now().Add(time.Hour)) }, false},
	}
	for _, st := range steps {
		st.do()
		if _, _, ok := sas.AuthenticateToken(tok, nil); ok != st.ok {
			t.Errorf("%s: ok %v", st.name, ok)
		}
	}
	if len(sas.verified) != 1 {
		t.Errorf("%d verified tokens cached", len(sas.verified))
	}
}

// tamper changes the token's payload, keeping its signature.
func tamper(tok string) string {
	p := strings.Split(tok, ".")
	b := []byte(p[1])
	if b[5] == 'A' {
		b[5] = 'B'
	} else {
		b[5] = 'A'
	}
	return p[0] + "." + string(b) + "." + p[2]
}

// TestLoadKeyFile: --service-account-signing-key-file takes RSA and ECDSA P-256 keys in
// PKCS#1, SEC 1 and PKCS#8 PEM, and tokens signed with either verify; other keys are
// refused with a clear error.
func TestLoadKeyFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	ecDER, _ := x509.MarshalECPrivateKey(ecKey)
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(ecKey)
	p384DER, _ := x509.MarshalECPrivateKey(p384)
	good := map[string]string{
		"RS256":           write("rsa.pem", "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey)),
		"ES256":           write("ec.pem", "EC PRIVATE KEY", ecDER),
		"ES256 in PKCS#8": write("pkcs8.pem", "PRIVATE KEY", pkcs8),
	}
	for name, path := range good {
		key, err := LoadKeyFile(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sas, err := NewServiceAccounts(key, objects{"serviceaccounts/ns/sa": "uid"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		tok, _, err := sas.Issue(TokenSpec{Namespace: "ns", ServiceAccount: Ref{Name: "sa", UID: "uid"}, Expiration: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, ok := sas.AuthenticateToken(tok, nil); !ok || !strings.Contains(name, sas.method.Alg()) {
			t.Errorf("%s: token refused or signed with %s", name, sas.method.Alg())
		}
	}
	bad := map[string]string{
		write("p384.pem", "EC PRIVATE KEY", p384DER):    "only RSA and ECDSA P-256 keys are supported",
		write("cert.pem", "CERTIFICATE", []byte{1}):     `a PEM "CERTIFICATE" block is not a private key`,
		write("junk.pem", "RSA PRIVATE KEY", []byte{1}): "asn1: syntax error",
		filepath.Join(dir, "missing.pem"):               "no such file",
	}
	for path, want := range bad {
		if _, err := LoadKeyFile(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
}
