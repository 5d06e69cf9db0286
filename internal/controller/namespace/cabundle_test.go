package namespace

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"strings"
	"testing"
	"time"

	"github.com/quotad/quotad/internal/pki"
)

// TestCABundle: two replicas with CAs of their own converge on a bundle of both instead of
// rewriting each other's; junk, leaf and expired certificates are dropped; a bundle that
// already holds this replica's CA is left as it is.
func TestCABundle(t *testing.T) {
	now := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	ca := func(cn string, notAfter time.Time) *pki.Authority {
		a, err := pki.NewAuthority(cn, now.Add(-2*time.Hour), notAfter)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a, b := ca("a", now.AddDate(1, 0, 0)), ca("b", now.AddDate(1, 0, 0))
	old := ca("old", now.Add(-time.Minute))
	leafPEM, _, err := a.Issue(pkiLeaf())
	if err != nil {
		t.Fatal(err)
	}
	// A publishes; B adds itself; A then finds itself and changes nothing; so does B.
	s1 := caBundle("", a.CertPEM, now)
	s2 := caBundle(s1, b.CertPEM, now)
	if s2 == s1 || !strings.Contains(s2, string(a.CertPEM)) || !strings.Contains(s2, string(b.CertPEM)) {
		t.Fatalf("B did not add itself:\n%s", s2)
	}
	if s3 := caBundle(s2, a.CertPEM, now); s3 != s2 {
		t.Errorf("A rewrote a bundle holding it:\n%s", s3)
	}
	if s4 := caBundle(s2, b.CertPEM, now); s4 != s2 {
		t.Errorf("B rewrote a bundle holding it")
	}
	// Tampering is undone: junk, a leaf and an expired CA go; duplicates collapse.
	tampered := "junk\n" + string(leafPEM) + string(old.CertPEM) + string(a.CertPEM) + string(a.CertPEM)
	if got := caBundle(tampered, a.CertPEM, now); got != string(a.CertPEM) {
		t.Errorf("tampered bundle restored to:\n%s", got)
	}
	if got := caBundle("not a certificate", a.CertPEM, now); got != string(a.CertPEM) {
		t.Errorf("junk restored to:\n%s", got)
	}
}

func pkiLeaf() *x509.Certificate {
	return &x509.Certificate{SerialNumber: pki.Serial(), Subject: pkix.Name{CommonName: "leaf"},
		NotBefore: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
}
