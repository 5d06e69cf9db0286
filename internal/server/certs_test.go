package server

import (
	"bytes"
	"crypto/x509"
	"testing"
)

// TestServingCertificateCoversTLSSANs: adding --tls-san names (a load balancer in front of
// the replicas) reissues the serving certificate to cover them, under the same CA and
// admin token; the same names again keep it.
func TestServingCertificateCoversTLSSANs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, err := loadOrCreateCredentials(dir, []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	hosts := []string{"127.0.0.1", "lb.example.com", "10.0.0.9"}
	second, err := loadOrCreateCredentials(dir, hosts)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.CAPEM, second.CAPEM) || first.AdminToken != second.AdminToken {
		t.Fatal("adding names changed the CA or the admin token")
	}
	leaf, err := x509.ParseCertificate(second.ServerCert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hosts {
		if err := leaf.VerifyHostname(h); err != nil {
			t.Errorf("serving certificate does not cover %s: %v", h, err)
		}
	}
	third, err := loadOrCreateCredentials(dir, hosts)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(third.ServerCert.Certificate[0], second.ServerCert.Certificate[0]) {
		t.Error("the same names reissued the serving certificate")
	}
}
