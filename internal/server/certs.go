package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// credentials are the files quotad keeps in its data dir.
type credentials struct {
	CAPEM      []byte
	ServerCert tls.Certificate
	AdminToken string
}

// writeFileAtomic replaces path with data and the given mode, through a new temporary file
// in the same directory (never an existing one, whose wider mode would be kept).
func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func newSerial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}

func pemKey(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
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
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		tmpl := &x509.Certificate{
			SerialNumber: newSerial(), Subject: pkix.Name{CommonName: "quotad-ca"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(10, 0, 0),
			KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
			BasicConstraintsValid: true, IsCA: true,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			return nil, err
		}
		kp, err := pemKey(key)
		if err != nil {
			return nil, err
		}
		if err := writeFileAtomic(caKey, kp, 0o600); err != nil {
			return nil, err
		}
		if err := writeFileAtomic(caCrt, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
			return nil, err
		}
		_ = os.Remove(srvCrt)
	}
	caPair, err := tls.LoadX509KeyPair(caCrt, caKey)
	if err != nil {
		return nil, fmt.Errorf("loading CA from %s: %w", dir, err)
	}
	caCert, err := x509.ParseCertificate(caPair.Certificate[0])
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(caCrt)
	if err != nil {
		return nil, err
	}
	// 2. Serving certificate covering hosts.
	srv, err := tls.LoadX509KeyPair(srvCrt, srvKey)
	if err != nil || !covers(srv, hosts) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		tmpl := &x509.Certificate{
			SerialNumber: newSerial(), Subject: pkix.Name{CommonName: "quotad"},
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
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caPair.PrivateKey)
		if err != nil {
			return nil, err
		}
		kp, err := pemKey(key)
		if err != nil {
			return nil, err
		}
		if err := writeFileAtomic(srvKey, kp, 0o600); err != nil {
			return nil, err
		}
		if err := writeFileAtomic(srvCrt, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
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
	return &credentials{CAPEM: caPEM, ServerCert: srv, AdminToken: string(tok)}, nil
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
