package server

import (
	"crypto/subtle"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// tokenAuth authenticates bearer tokens: the admin token and those of a kube-style CSV file
// (token,user,uid[,"group1,group2"]).
type tokenAuth struct {
	tokens map[string]string
}

func newTokenAuth(adminToken, csvFile string) (*tokenAuth, error) {
	a := &tokenAuth{tokens: map[string]string{adminToken: "admin"}}
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
		a.tokens[rec[0]] = rec[1]
	}
	return a, nil
}

// Authenticate implements apiserver.Authenticator.
func (a *tokenAuth) Authenticate(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if !strings.HasPrefix(h, "Bearer ") {
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			return r.TLS.PeerCertificates[0].Subject.CommonName, true
		}
		return "", false
	}
	tok := strings.TrimSpace(h[len("Bearer "):])
	for t, user := range a.tokens {
		if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
			return user, true
		}
	}
	return "", false
}
