package pki

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
)

// Sign issues a certificate from tmpl for a public key the authority did not generate (a
// certificate signing request's), filling in a serial number, and returns it as PEM.
func (a *Authority) Sign(tmpl *x509.Certificate, pub crypto.PublicKey) ([]byte, error) {
	t := *tmpl
	t.SerialNumber = Serial()
	der, err := x509.CreateCertificate(rand.Reader, &t, a.Cert, pub, a.Key)
	if err != nil {
		return nil, err
	}
	return CertPEM(der), nil
}
