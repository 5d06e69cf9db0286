package pki

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestAuthorityIssues(t *testing.T) {
	now := time.Now()
	ca, err := NewAuthority("test-ca", now, now.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	crt, key := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	if err := WriteFile(crt, ca.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(key, ca.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadAuthority(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := loaded.Issue(&x509.Certificate{
		Subject:   pkix.Name{CommonName: "alice", Organization: []string{"team-a"}},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("issued certificate does not verify against its CA: %v", err)
	}
	if leaf.Subject.CommonName != "alice" || leaf.KeyUsage != x509.KeyUsageDigitalSignature || leaf.SerialNumber.Sign() <= 0 {
		t.Fatalf("leaf: %+v", leaf.Subject)
	}
	other, _ := NewAuthority("other", now, now.Add(time.Hour))
	pool2 := x509.NewCertPool()
	pool2.AddCert(other.Cert)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool2, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Fatal("verified against another CA")
	}
}

func TestWriteFileNarrowsMode(t *testing.T) {
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if fi.Mode().Perm() != 0o600 || string(b) != "new" {
		t.Fatalf("mode %v content %q", fi.Mode().Perm(), b)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
}
