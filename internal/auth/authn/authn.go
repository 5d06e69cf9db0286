package authn

import (
	"net/http"
	"slices"
	"strings"

	"github.com/quotad/quotad/internal/auth"
)

// Authenticator is the union of quotad's authenticators, in kube-apiserver's order: a
// client certificate, then a bearer token (static tokens, ServiceAccount tokens, then
// bootstrap tokens).
type Authenticator struct {
	// Tokens are the static tokens (nil: none).
	Tokens *TokenFile
	// ServiceAccounts verifies ServiceAccount tokens (nil: none).
	ServiceAccounts *ServiceAccounts
	// Bootstrap verifies bootstrap tokens (nil: none).
	Bootstrap *BootstrapTokens
}

// Authenticate implements apiserver.Authenticator. A request with no credential, or one
// that does not verify, is not authenticated.
func (a *Authenticator) Authenticate(r *http.Request) (auth.User, bool) {
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		// The TLS handshake verified the chain against quotad's CA.
		if u, ok := CertificateUser(r.TLS.PeerCertificates[0]); ok {
			return u, true
		}
	}
	tok, ok := BearerToken(r)
	if !ok {
		return auth.User{}, false
	}
	u, _, ok := a.AuthenticateToken(tok, nil)
	return u, ok
}

// AuthenticateToken authenticates a bearer token for one of audiences (nil: quotad's own),
// as TokenReview does; it also returns the audiences the token is good for among those
// asked (nil for tokens that are not audience-bound).
func (a *Authenticator) AuthenticateToken(tok string, audiences []string) (auth.User, []string, bool) {
	if tok == "" {
		return auth.User{}, nil, false
	}
	if a.Tokens != nil {
		if u, ok := a.Tokens.AuthenticateToken(tok); ok {
			return a.apiAudiencesOnly(u, audiences)
		}
	}
	if a.ServiceAccounts != nil {
		if u, matched, ok := a.ServiceAccounts.AuthenticateToken(tok, audiences); ok {
			return u, matched, true
		}
	}
	if a.Bootstrap != nil {
		if u, ok := a.Bootstrap.AuthenticateToken(tok); ok {
			return a.apiAudiencesOnly(u, audiences)
		}
	}
	return auth.User{}, nil, false
}

// apiAudiencesOnly answers for an audience-agnostic token (a static or bootstrap token)
// as upstream wraps such authenticators: good only for the API audiences.
func (a *Authenticator) apiAudiencesOnly(u auth.User, audiences []string) (auth.User, []string, bool) {
	if audiences == nil {
		return u, nil, true
	}
	api := []string{DefaultIssuer}
	if a.ServiceAccounts != nil {
		api = a.ServiceAccounts.apiAudiences
	}
	var matched []string
	for _, x := range audiences {
		if slices.Contains(api, x) {
			matched = append(matched, x)
		}
	}
	return u, matched, len(matched) > 0
}

// BearerToken returns the token of an "Authorization: Bearer <token>" header, as
// upstream's bearer token authenticator reads it: the scheme is case-insensitive, and an
// empty token is none.
func BearerToken(r *http.Request) (string, bool) {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	parts := strings.SplitN(h, " ", 3)
	if len(parts) < 2 || !strings.EqualFold(parts[0], "bearer") {
		return "", false
	}
	tok := parts[1]
	if tok == "" {
		return "", false
	}
	return tok, true
}
