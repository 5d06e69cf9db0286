package authn

import (
	"crypto/x509"

	"github.com/quotad/quotad/internal/auth"
)

// CertificateUser is the user of a client certificate the TLS handshake verified against
// quotad's CA, as upstream's x509 authenticator names it: user from the subject's
// CommonName, groups from its Organizations. A certificate without a CommonName names no
// user.
func CertificateUser(c *x509.Certificate) (auth.User, bool) {
	if c == nil || c.Subject.CommonName == "" {
		return auth.User{}, false
	}
	groups := make([]string, 0, len(c.Subject.Organization)+1)
	groups = append(groups, c.Subject.Organization...)
	return auth.User{Name: c.Subject.CommonName, Groups: append(groups, auth.AllAuthenticated)}, true
}
