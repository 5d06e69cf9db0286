package authn

import (
	"crypto/subtle"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/quotad/quotad/internal/auth"
)

// TokenFile authenticates static bearer tokens: the admin token (user "admin" in
// system:masters) and those of a kube-style CSV file (token,user,uid[,"group1,group2"]).
type TokenFile struct {
	tokens map[string]auth.User
}

// NewTokenFile reads csvFile ("" for none) and adds the admin token.
func NewTokenFile(adminToken, csvFile string) (*TokenFile, error) {
	a := &TokenFile{tokens: map[string]auth.User{adminToken: {Name: "admin", Groups: []string{auth.SystemMasters, auth.AllAuthenticated}}}}
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

// AuthenticateToken returns the user of a static token. Every token is compared in
// constant time.
func (a *TokenFile) AuthenticateToken(tok string) (auth.User, bool) {
	var found auth.User
	ok := false
	for t, user := range a.tokens {
		if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
			found, ok = user, true
		}
	}
	return found, ok
}
