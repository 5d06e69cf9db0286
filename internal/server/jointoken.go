package server

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// joinTokenFile is the join token's file under the data dir (0600).
const joinTokenFile = "join-token"

// joinToken is what a server joining a cluster presents, in k3s's format
// K10<sha256 hex of the API CA certificate PEM>::server:<secret>: the hash lets the joiner
// check the CA it is shown before trusting it, the secret authenticates it to the member
// that adds it.
type joinToken struct {
	caHash string
	secret string
}

// ErrBadJoinToken: a join token that is not in the K10<hash>::server:<secret> format.
var ErrBadJoinToken = errors.New("join token is not in the format K10<sha256 hex of the CA certificate>::server:<secret>")

// parseJoinToken reads a join token.
func parseJoinToken(s string) (joinToken, error) {
	s = strings.TrimSpace(s)
	rest, ok := strings.CutPrefix(s, "K10")
	if !ok {
		return joinToken{}, ErrBadJoinToken
	}
	hash, creds, ok := strings.Cut(rest, "::")
	if !ok || len(hash) != sha256.Size*2 {
		return joinToken{}, ErrBadJoinToken
	}
	if _, err := hex.DecodeString(hash); err != nil {
		return joinToken{}, ErrBadJoinToken
	}
	secret, ok := strings.CutPrefix(creds, "server:")
	if !ok || secret == "" {
		return joinToken{}, ErrBadJoinToken
	}
	return joinToken{caHash: strings.ToLower(hash), secret: secret}, nil
}

// String is the token in its K10 format.
func (t joinToken) String() string { return "K10" + t.caHash + "::server:" + t.secret }

// caHash is the hash a join token names for the CA certificate caPEM.
func caHash(caPEM []byte) string {
	sum := sha256.Sum256(caPEM)
	return hex.EncodeToString(sum[:])
}

// matchesCA reports whether caPEM is the CA the token names.
func (t joinToken) matchesCA(caPEM []byte) bool { return caHash(caPEM) == t.caHash }

// secretMatches compares a presented secret with the token's in constant time.
func (t joinToken) secretMatches(secret string) bool {
	return subtle.ConstantTimeCompare([]byte(secret), []byte(t.secret)) == 1
}

// loadOrCreateJoinToken returns the data dir's join token, making one for caPEM with a new
// random secret when there is none (created). A token kept from before stays, so restarts
// do not change it.
func loadOrCreateJoinToken(dir string, caPEM []byte) (t joinToken, created bool, err error) {
	p := filepath.Join(dir, joinTokenFile)
	b, err := os.ReadFile(p)
	if err == nil {
		t, err := parseJoinToken(string(b))
		if err != nil {
			return joinToken{}, false, fmt.Errorf("%s: %w", p, err)
		}
		if !t.matchesCA(caPEM) {
			return joinToken{}, false, fmt.Errorf("%s names another CA than %s", p, filepath.Join(dir, "ca.crt"))
		}
		return t, false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return joinToken{}, false, err
	}
	secret := make([]byte, 16)
	if _, err := rand.Read(secret); err != nil {
		return joinToken{}, false, err
	}
	t = joinToken{caHash: caHash(caPEM), secret: hex.EncodeToString(secret)}
	return t, true, writeJoinToken(dir, t)
}

// writeJoinToken writes t to the data dir (0600).
func writeJoinToken(dir string, t joinToken) error {
	return writeFileAtomic(filepath.Join(dir, joinTokenFile), []byte(t.String()+"\n"), 0o600)
}

// hasJoinToken reports whether the data dir has a join token: its embedded etcd is a
// cluster member, started with --cluster-init or --join before.
func hasJoinToken(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, joinTokenFile))
	return err == nil
}

// ReadJoinToken returns the join token of data dir dir (`quotad token`): the token other
// quotads join its embedded etcd cluster with.
func ReadJoinToken(dir string) (string, error) {
	p := filepath.Join(dir, joinTokenFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("data dir %s has no join token (%s): its embedded etcd is not a cluster member; start it once with --cluster-init", dir, p)
	}
	if err != nil {
		return "", err
	}
	t, err := parseJoinToken(string(b))
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return t.String(), nil
}
