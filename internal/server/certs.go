package server

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/quotad/quotad/internal/pki"
)

// credentials are the files quotad keeps in its data dir.
type credentials struct {
	CAPEM      []byte
	ServerCert tls.Certificate
	AdminToken string
}

// writeFileAtomic replaces path with data and mode (pki.WriteFile).
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	return pki.WriteFile(path, data, mode)
}

// loadOrCreateCredentials reads the CA, serving certificate and admin token from dir,
// creating any that are missing. The serving certificate is regenerated when it does not
// cover host.
func loadOrCreateCredentials(dir string, hosts []string) (*credentials, error) {
	caCrt, caKey := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	srvCrt, srvKey := filepath.Join(dir, "apiserver.crt"), filepath.Join(dir, "apiserver.key")
	tokFile := filepath.Join(dir, "admin.token")
	// 1. CA.
	if _, err := os.Stat(caCrt); errors.Is(err, os.ErrNotExist) {
		ca, err := pki.NewAuthority("quotad-ca", time.Now(), time.Now().AddDate(10, 0, 0))
		if err != nil {
			return nil, err
		}
		if err := writeFileAtomic(caKey, ca.KeyPEM, 0o600); err != nil {
			return nil, err
		}
		if err := writeFileAtomic(caCrt, ca.CertPEM, 0o644); err != nil {
			return nil, err
		}
		_ = os.Remove(srvCrt)
	}
	ca, err := pki.LoadAuthority(caCrt, caKey)
	if err != nil {
		return nil, fmt.Errorf("loading CA from %s: %w", dir, err)
	}
	// 2. Serving certificate covering hosts.
	srv, err := tls.LoadX509KeyPair(srvCrt, srvKey)
	if err != nil || !covers(srv, hosts) {
		tmpl := &x509.Certificate{
			Subject:   pkix.Name{CommonName: "quotad"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(5, 0, 0),
			KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		}
		for _, h := range hosts {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else if h != "" {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
		certPEM, keyPEM, err := ca.Issue(tmpl)
		if err != nil {
			return nil, err
		}
		if err := writeFileAtomic(srvKey, keyPEM, 0o600); err != nil {
			return nil, err
		}
		if err := writeFileAtomic(srvCrt, certPEM, 0o644); err != nil {
			return nil, err
		}
		if srv, err = tls.LoadX509KeyPair(srvCrt, srvKey); err != nil {
			return nil, err
		}
	}
	// 3. Admin token.
	tok, err := os.ReadFile(tokFile)
	if err != nil || len(tok) == 0 {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		tok = []byte(hex.EncodeToString(b))
		if err := writeFileAtomic(tokFile, tok, 0o600); err != nil {
			return nil, err
		}
	}
	return &credentials{CAPEM: ca.CertPEM, ServerCert: srv, AdminToken: string(tok)}, nil
}

// covers reports whether the certificate is valid for every host and not about to expire.
func covers(c tls.Certificate, hosts []string) bool {
	if len(c.Certificate) == 0 {
		return false
	}
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil || time.Until(leaf.NotAfter) < 24*time.Hour {
		return false
	}
	for _, h := range hosts {
		if h == "" {
			continue
		}
		if err := leaf.VerifyHostname(h); err != nil {
			return false
		}
	}
	return true
}
