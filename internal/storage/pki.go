package storage

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/quotad/quotad/internal/pki"
)

// The embedded etcd's client listener is TLS that requires a client certificate signed by a
// CA of its own (not quotad's API CA, whose client certificates are API users). A single
// member's CA signs one serving and one client certificate when the PKI is created, and its
// key is then thrown away: nothing can sign another certificate the etcd trusts. A cluster
// member keeps the CA key (ca.key, 0600), shared by every member, to sign its own serving,
// peer and client certificates for its advertise address (clusterpki.go).

// pkiDirName is the PKI's directory under the data dir (mode 0700; keys 0600).
const pkiDirName = "etcd-pki"

// pkiRenewBefore is how long before a certificate expires the PKI is made again.
const pkiRenewBefore = 30 * 24 * time.Hour

// pkiValidity is how long the CA and certificates are valid.
const pkiValidity = 10 * 365 * 24 * time.Hour

// TLSFiles names the PEM files of one side of a TLS connection: the CA it trusts, its
// certificate and its key (kube-apiserver's --etcd-cafile, --etcd-certfile, --etcd-keyfile
// for a client).
type TLSFiles struct {
	CAFile, CertFile, KeyFile string
}

// embeddedPKI is where the embedded etcd's certificates are. peer and caKey are used in
// cluster mode only.
type embeddedPKI struct {
	server, peer, client TLSFiles
	caKey                string
}

func pkiFiles(dir string) embeddedPKI {
	pd := filepath.Join(dir, pkiDirName)
	ca := filepath.Join(pd, "ca.crt")
	return embeddedPKI{
		server: TLSFiles{CAFile: ca, CertFile: filepath.Join(pd, "server.crt"), KeyFile: filepath.Join(pd, "server.key")},
		peer:   TLSFiles{CAFile: ca, CertFile: filepath.Join(pd, "peer.crt"), KeyFile: filepath.Join(pd, "peer.key")},
		client: TLSFiles{CAFile: ca, CertFile: filepath.Join(pd, "client.crt"), KeyFile: filepath.Join(pd, "client.key")},
		caKey:  filepath.Join(pd, "ca.key"),
	}
}

// loadOrCreatePKI returns the PKI under dir, creating it when any part is missing, does not
// chain to the CA, or expires within pkiRenewBefore of now.
//  1. Make the directory private (also when it existed with a wider mode).
//  2. Keep the files when both certificates load and verify against the CA until well after now.
//  3. Otherwise make a new CA, sign a serving certificate for the loopback address and a
//     client certificate, write them (keys 0600), and forget the CA's key.
func loadOrCreatePKI(dir string, now time.Time) (embeddedPKI, error) {
	p := pkiFiles(dir)
	pd := filepath.Dir(p.server.CAFile)
	if err := os.MkdirAll(pd, 0o700); err != nil {
		return p, err
	}
	if err := os.Chmod(pd, 0o700); err != nil {
		return p, err
	}
	if p.valid(now.Add(pkiRenewBefore)) == nil {
		return p, nil
	}
	return p, p.create(now)
}

// valid checks that both certificates load, chain to the CA, and are valid at t.
func (p embeddedPKI) valid(t time.Time) error {
	caPEM, err := os.ReadFile(p.server.CAFile)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return errors.New("no CA certificate")
	}
	for _, f := range []struct {
		files TLSFiles
		usage x509.ExtKeyUsage
	}{{p.server, x509.ExtKeyUsageServerAuth}, {p.client, x509.ExtKeyUsageClientAuth}} {
		pair, err := tls.LoadX509KeyPair(f.files.CertFile, f.files.KeyFile)
		if err != nil {
			return err
		}
		leaf, err := x509.ParseCertificate(pair.Certificate[0])
		if err != nil {
			return err
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: t, KeyUsages: []x509.ExtKeyUsage{f.usage}}); err != nil {
			return err
		}
	}
	return nil
}

func (p embeddedPKI) create(now time.Time) error {
	ca, err := pki.NewAuthority("quotad-etcd-ca", now, now.Add(pkiValidity))
	if err != nil {
		return err
	}
	leaves := []struct {
		files TLSFiles
		tmpl  *x509.Certificate
	}{
		{p.server, &x509.Certificate{
			Subject: pkix.Name{CommonName: "quotad-etcd"},
			// etcd also dials its own client URL with the serving certificate.
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
			DNSNames:    []string{"localhost"},
		}},
		{p.client, &x509.Certificate{
			Subject:     pkix.Name{CommonName: "quotad"},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}},
	}
	for _, l := range leaves {
		l.tmpl.NotBefore, l.tmpl.NotAfter = now.Add(-time.Hour), now.Add(pkiValidity)
		certPEM, keyPEM, err := ca.Issue(l.tmpl)
		if err != nil {
			return err
		}
		if err := writePrivate(l.files.KeyFile, keyPEM); err != nil {
			return err
		}
		if err := writePrivate(l.files.CertFile, certPEM); err != nil {
			return err
		}
	}
	// The CA last: a crash before this leaves a PKI that fails valid and is made again. Its
	// key is never written: nothing else is ever signed by it.
	return writePrivate(p.server.CAFile, ca.CertPEM)
}

// writePrivate replaces path with data, mode 0600.
func writePrivate(path string, data []byte) error { return pki.WriteFile(path, data, 0o600) }

// EmbeddedClientTLS names the client files of the embedded etcd whose data dir is dir (what
// its ClientTLS returns), for tools such as etcdctl.
func EmbeddedClientTLS(dir string) TLSFiles { return pkiFiles(dir).client }
