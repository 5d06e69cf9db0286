package server

import (
	"crypto/subtle"
	"encoding/csv"
	"fmt"
	"github.com/quotad/quotad/internal/auth"
	"io"
	"net/http"
	"os"
	"strings"
)

// tokenAuth authenticates bearer tokens: the admin token and those of a kube-style CSV file
// (token,user,uid[,"group1,group2"]).
type tokenAuth struct {
	tokens map[string]auth.User
}

func newTokenAuth(adminToken, csvFile string) (*tokenAuth, error) {
	a := &tokenAuth{tokens: map[string]auth.User{adminToken: {Name: "admin", Groups: []string{auth.SystemMasters, auth.AllAuthenticated}}}}
	if csvFile == "" {
		return a, nil
	}
	f, err := os.Open(csvFile)
	if err != nil {
		return nil, fmt.Errorf("--token-auth-file: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	for line := 1; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("--token-auth-file %s: %w", csvFile, err)
		}
		if len(rec) < 3 {
			return nil, fmt.Errorf("--token-auth-file %s: line %d: token, user and uid are required", csvFile, line)
		}
		if rec[0] == "" {
			return nil, fmt.Errorf("--token-auth-file %s: line %d: empty token", csvFile, line)
		}
		u := auth.User{Name: rec[1], UID: rec[2]}
		if len(rec) > 3 {
			for _, g := range strings.Split(rec[3], ",") {
				if g = strings.TrimSpace(g); g != "" {
					u.Groups = append(u.Groups, g)
				}
			}
		}
		u.Groups = append(u.Groups, auth.AllAuthenticated)
		a.tokens[rec[0]] = u
	}
	return a, nil
}

// Authenticate implements apiserver.Authenticator.
// A client certificate (verified against quotad's CA by the TLS handshake) names its user
// in CN and its groups in O, as upstream.
func (a *tokenAuth) Authenticate(r *http.Request) (auth.User, bool) {
	h := r.Header.Get("Authorization")
	if !strings.HasPrefix(h, "Bearer ") {
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			subj := r.TLS.PeerCertificates[0].Subject
			groups := append(append([]string(nil), subj.Organization...), auth.AllAuthenticated)
			return auth.User{Name: subj.CommonName, Groups: groups}, true
		}
		return auth.User{}, false
	}
	tok := strings.TrimSpace(h[len("Bearer "):])
	for t, user := range a.tokens {
		if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
			return user, true
		}
	}
	return auth.User{}, false
}
