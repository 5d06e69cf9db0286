package storage

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/quotad/quotad/internal/pki"
)

// loadOrCreateClusterPKI returns the PKI of a cluster member under dir, its serving and peer
// certificates valid for hosts (and the loopback address).
//  1. Make the directory private (also when it existed with a wider mode).
//  2. Load the CA with its key. When there is none (the first member of a new cluster, or a
//     single member's PKI, whose key was discarded, becoming the first member of a cluster),
//     make a new CA and keep its key. A joiner's CA was written by WriteClusterCA before.
//  3. Issue each certificate that is missing, does not chain to the CA, expires within
//     pkiRenewBefore of now, or does not cover hosts.
func loadOrCreateClusterPKI(dir string, hosts []string, now time.Time) (embeddedPKI, error) {
	p := pkiFiles(dir)
	pd := filepath.Dir(p.server.CAFile)
	if err := os.MkdirAll(pd, 0o700); err != nil {
		return p, err
	}
	if err := os.Chmod(pd, 0o700); err != nil {
		return p, err
	}
	ca, err := pki.LoadAuthority(p.server.CAFile, p.caKey)
	if err != nil {
		if ca, err = pki.NewAuthority("quotad-etcd-ca", now, now.Add(pkiValidity)); err != nil {
			return p, err
		}
		// The key first: a crash in between leaves a certificate without its key, which
		// fails to load and is made again.
		if err := writePrivate(p.caKey, ca.KeyPEM); err != nil {
			return p, err
		}
		if err := writePrivate(p.server.CAFile, ca.CertPEM); err != nil {
			return p, err
		}
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	sans := append([]string{"127.0.0.1", "localhost"}, hosts...)
	both := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	leaves := []struct {
		files TLSFiles
		cn    string
		usage []x509.ExtKeyUsage
		hosts []string
	}{
		// etcd also dials its own client URL with the serving certificate, and a peer
		// presents its peer certificate as a client: both need both usages.
		{p.server, "quotad-etcd", both, sans},
		{p.peer, "quotad-etcd-peer", both, sans},
		{p.client, "quotad", []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, nil},
	}
	for _, l := range leaves {
		if leafValid(l.files, pool, now.Add(pkiRenewBefore), l.usage[0], l.hosts) == nil {
			continue
		}
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: l.cn},
			ExtKeyUsage: l.usage,
			NotBefore:   now.Add(-time.Hour), NotAfter: now.Add(pkiValidity),
		}
		for _, h := range l.hosts {
			if ip := net.ParseIP(h); ip != nil {
				if !slices.ContainsFunc(tmpl.IPAddresses, ip.Equal) {
					tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
				}
			} else if h != "" && !slices.Contains(tmpl.DNSNames, h) {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
		certPEM, keyPEM, err := ca.Issue(tmpl)
		if err != nil {
			return p, err
		}
		if err := writePrivate(l.files.KeyFile, keyPEM); err != nil {
			return p, err
		}
		if err := writePrivate(l.files.CertFile, certPEM); err != nil {
			return p, err
		}
	}
	return p, nil
}

// leafValid checks that a certificate loads with its key, chains to pool for usage at t,
// and is valid for every host.
func leafValid(f TLSFiles, pool *x509.CertPool, t time.Time, usage x509.ExtKeyUsage, hosts []string) error {
	pair, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
	if err != nil {
		return err
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return err
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: t, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
		return err
	}
	for _, h := range hosts {
		if err := leaf.VerifyHostname(h); err != nil {
			return err
		}
	}
	return nil
}

// ReadClusterCA returns the certificate and key (PEM) of the etcd CA of a cluster member
// whose data dir is dir, for a member that adds another (the joiner signs its own
// certificates with them).
func ReadClusterCA(dir string) (certPEM, keyPEM []byte, err error) {
	p := pkiFiles(dir)
	if certPEM, err = os.ReadFile(p.server.CAFile); err != nil {
		return nil, nil, fmt.Errorf("etcd CA: %w", err)
	}
	if keyPEM, err = os.ReadFile(p.caKey); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, fmt.Errorf("etcd CA: %s has no CA key: the embedded etcd does not run as a cluster member", dir)
		}
		return nil, nil, fmt.Errorf("etcd CA: %w", err)
	}
	return certPEM, keyPEM, nil
}

// WriteClusterCA writes the etcd CA a joining member received (both files 0600, the
// directory 0700) before StartEmbedded signs the member's certificates with it.
func WriteClusterCA(dir string, certPEM, keyPEM []byte) error {
	p := pkiFiles(dir)
	if err := os.MkdirAll(filepath.Dir(p.caKey), 0o700); err != nil {
		return err
	}
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return fmt.Errorf("etcd CA: %w", err)
	}
	if err := writePrivate(p.caKey, keyPEM); err != nil {
		return err
	}
	return writePrivate(p.server.CAFile, certPEM)
}
