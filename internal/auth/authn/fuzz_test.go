package authn

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FuzzBearerToken: whatever the Authorization header, authentication never panics and
// succeeds only for a credential that was issued (every other one is the edge's 401).
func FuzzBearerToken(f *testing.F) {
	key, err := LoadOrCreateKey(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	objs := objects{"serviceaccounts/ns/sa": "sa-uid", "pods/ns/p": "pod-uid"}
	sas, err := NewServiceAccounts(key, objs, nil)
	if err != nil {
		f.Fatal(err)
	}
	tokens, err := NewTokenFile("admin-token-0123456789", "")
	if err != nil {
		f.Fatal(err)
	}
	a := &Authenticator{Tokens: tokens, ServiceAccounts: sas}
	valid := map[string]bool{"admin-token-0123456789": true}
	for _, spec := range []TokenSpec{
		{Namespace: "ns", ServiceAccount: Ref{Name: "sa", UID: "sa-uid"}, Expiration: time.Hour},
		{Namespace: "ns", ServiceAccount: Ref{Name: "sa", UID: "sa-uid"}, Pod: &Ref{Name: "p", UID: "pod-uid"}, Expiration: time.Hour},
	} {
		tok, _, err := sas.Issue(spec)
		if err != nil {
			f.Fatal(err)
		}
		valid[tok] = true
		f.Add("Bearer " + tok)
		f.Add("Bearer " + tamper(tok))
		p := strings.Split(tok, ".")
		f.Add("Bearer eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + p[1] + ".")
		f.Add("Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + p[1] + "." + p[2])
		f.Add("Bearer " + p[0] + "." + p[1] + ".")
		f.Add("Bearer " + tok + "x")
	}
	// A token for a ServiceAccount that does not exist, signed by the right key.
	gone, _, _ := sas.Issue(TokenSpec{Namespace: "ns", ServiceAccount: Ref{Name: "gone", UID: "u"}, Expiration: time.Hour})
	f.Add("Bearer " + gone)
	for _, s := range []string{"", "Bearer", "Bearer ", "bearer admin-token-0123456789", "Bearer admin-token-012345678", "Basic Zm9vOmJhcg==", "Bearer eyJ..", "Bearer eyJ.eyJ.e", "Bearer \x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		r := httptest.NewRequest("GET", "/api", nil)
		r.Header["Authorization"] = []string{header}
		u, ok := a.Authenticate(r)
		if !ok {
			return
		}
		tok, _ := BearerToken(r)
		if !valid[tok] || u.Name == "" {
			t.Fatalf("authenticated %q as %+v", header, u)
		}
	})
}

// FuzzClientCertificate: a client certificate is accepted only when it verifies against
// quotad's CA for client authentication, as the TLS handshake checks it (the server's
// VerifyClientCertIfGiven): one signed by another CA, for server authentication only, or
// mangled is refused, and the edge answers 401 for lack of another credential; parsing
// and naming the user of any bytes never panics.
func FuzzClientCertificate(f *testing.F) {
	ca, caKey := newCA(f, "quotad-ca")
	other, otherKey := newCA(f, "quotad-ca")
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	good := newLeaf(f, ca, caKey, "alice", []string{"team-a"}, x509.ExtKeyUsageClientAuth)
	f.Add(good)
	f.Add(newLeaf(f, other, otherKey, "admin", []string{"system:masters"}, x509.ExtKeyUsageClientAuth))
	f.Add(newLeaf(f, ca, caKey, "alice", nil, x509.ExtKeyUsageServerAuth))
	f.Add(newLeaf(f, ca, caKey, "", []string{"system:masters"}, x509.ExtKeyUsageClientAuth))
	f.Add(ca.Raw)
	f.Add(good[:len(good)/2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, der []byte) {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return
		}
		_, named := CertificateUser(c)
		_, err = c.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, CurrentTime: time.Now()})
		// The CA's own certificate verifies, but presenting it takes the CA's key, which
		// only the data dir holds.
		if err == nil && named && !bytes.Equal(der, good) && !bytes.Equal(der, ca.Raw) {
			t.Fatalf("certificate %q of %v verified", c.Subject.CommonName, c.Issuer)
		}
	})
}

func newCA(tb testing.TB, cn string) (*x509.Certificate, *ecdsa.PrivateKey) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return c, key
}

func newLeaf(tb testing.TB, ca *x509.Certificate, caKey *ecdsa.PrivateKey, cn string, groups []string, usage x509.ExtKeyUsage) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn, Organization: groups},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		tb.Fatal(err)
	}
	return der
}
