package server

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseJoinToken(t *testing.T) {
	t.Parallel()
	hash := strings.Repeat("ab", 32)
	tests := []struct {
		in      string
		want    joinToken
		wantErr bool
	}{
		{in: "K10" + hash + "::server:s3cret", want: joinToken{caHash: hash, secret: "s3cret"}},
		{in: " K10" + strings.ToUpper(hash) + "::server:s3cret\n", want: joinToken{caHash: hash, secret: "s3cret"}},
		{in: "K10" + hash + "::server:a:b", want: joinToken{caHash: hash, secret: "a:b"}},
		{in: "s3cret", wantErr: true},
		{in: "K10" + hash + "::node:s3cret", wantErr: true},
		{in: "K10" + hash + "::server:", wantErr: true},
		{in: "K10" + hash[:60] + "::server:s3cret", wantErr: true},
		{in: "K10" + strings.Repeat("zz", 32) + "::server:s3cret", wantErr: true},
		{in: "K11" + hash + "::server:s3cret", wantErr: true},
	}
	for _, tc := range tests {
		got, err := parseJoinToken(tc.in)
		if tc.wantErr {
			if !errors.Is(err, ErrBadJoinToken) {
				t.Errorf("parseJoinToken(%q) = %+v, %v; want ErrBadJoinToken", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseJoinToken(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if again, err := parseJoinToken(got.String()); err != nil || again != got {
			t.Errorf("round trip of %q: %+v, %v", got.String(), again, err)
		}
	}
}

// TestJoinTokenKept: the token is made once (0600, created reported only then), kept across
// calls, checked against the CA, compares secrets exactly, and ReadJoinToken reads it.
func TestJoinTokenKept(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	if _, err := ReadJoinToken(dir); err == nil || !strings.Contains(err.Error(), "--cluster-init") {
		t.Fatalf("ReadJoinToken without a token: %v", err)
	}
	first, created, err := loadOrCreateJoinToken(dir, ca)
	if err != nil || !created {
		t.Fatalf("first load: created %v, %v", created, err)
	}
	fi, err := os.Stat(filepath.Join(dir, joinTokenFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("join-token file: %v, %v", fi, err)
	}
	second, created, err := loadOrCreateJoinToken(dir, ca)
	if err != nil || second != first || created {
		t.Fatalf("second load = %+v (created %v), %v; want %+v", second, created, err, first)
	}
	if got, err := ReadJoinToken(dir); err != nil || got != first.String() {
		t.Fatalf("ReadJoinToken = %q, %v; want %q", got, err, first.String())
	}
	if !first.matchesCA(ca) || first.matchesCA(append([]byte("x"), ca...)) {
		t.Fatal("matchesCA")
	}
	if !first.secretMatches(first.secret) || first.secretMatches(first.secret+"x") || first.secretMatches("") {
		t.Fatal("secretMatches")
	}
	if _, _, err := loadOrCreateJoinToken(dir, []byte("another CA")); err == nil {
		t.Fatal("a token naming another CA was accepted")
	}
}
