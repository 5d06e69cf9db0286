package server

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestWriteKubeconfig: the admin kubeconfig is written when missing, and otherwise only
// when quotad's server URL, CA or admin token changed, then changing only those.
func TestWriteKubeconfig(t *testing.T) {
	t.Parallel()
	const url, token = "https://127.0.0.1:6443", "tok"
	ca := []byte("-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n")
	fresh := func() *clientcmdapi.Config {
		c := clientcmdapi.NewConfig()
		c.Clusters["quotad"] = &clientcmdapi.Cluster{Server: url, CertificateAuthorityData: ca}
		c.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: token}
		c.Contexts["quotad"] = &clientcmdapi.Context{Cluster: "quotad", AuthInfo: "admin", Namespace: "default"}
		c.CurrentContext = "quotad"
		return c
	}
	// edited is what a user makes of a fresh kubeconfig: another namespace, another
	// cluster, user and context, made current.
	edited := func() *clientcmdapi.Config {
		c := fresh()
		c.Contexts["quotad"].Namespace = "team"
		c.Clusters["prod"] = &clientcmdapi.Cluster{Server: "https://prod.example:6443"}
		c.AuthInfos["me"] = &clientcmdapi.AuthInfo{Token: "mine"}
		c.Contexts["prod"] = &clientcmdapi.Context{Cluster: "prod", AuthInfo: "me", Namespace: "apps"}
		c.CurrentContext = "prod"
		return c
	}
	tests := []struct {
		name    string
		before  *clientcmdapi.Config // nil: no file
		raw     string               // file content when before is nil and raw is set
		want    func() *clientcmdapi.Config
		written bool
	}{
		{"no file", nil, "", fresh, true},
		{"up to date", fresh(), "", fresh, false},
		{"edited by the user", edited(), "", edited, false},
		{"another port", with(edited(), func(c *clientcmdapi.Config) { c.Clusters["quotad"].Server = "https://127.0.0.1:7443" }), "", edited, true},
		{"another token", with(edited(), func(c *clientcmdapi.Config) { c.AuthInfos["admin"].Token = "old" }), "", edited, true},
		{"another CA", with(edited(), func(c *clientcmdapi.Config) { c.Clusters["quotad"].CertificateAuthorityData = []byte("old") }), "", edited, true},
		{"a CA file instead of data", with(edited(), func(c *clientcmdapi.Config) {
			c.Clusters["quotad"].CertificateAuthorityData, c.Clusters["quotad"].CertificateAuthority = nil, "/some/ca.crt"
		}), "", edited, true},
		{"quotad's entries deleted", with(edited(), func(c *clientcmdapi.Config) {
			delete(c.Clusters, "quotad")
			delete(c.AuthInfos, "admin")
		}), "", edited, true},
		{"empty file", nil, " ", fresh, true},
		{"a file that does not parse", nil, "clusters: [", fresh, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "admin.kubeconfig")
			switch {
			case tc.before != nil:
				if err := clientcmd.WriteToFile(*tc.before, path); err != nil {
					t.Fatal(err)
				}
			case tc.raw != "":
				if err := os.WriteFile(path, []byte(tc.raw), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			old, _ := os.Stat(path)
			if err := writeKubeconfig(path, url, ca, token); err != nil {
				t.Fatal(err)
			}
			now, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if written := old == nil || !os.SameFile(old, now); written != tc.written {
				t.Errorf("written = %v, want %v", written, tc.written)
			}
			if now.Mode().Perm() != 0o600 {
				t.Errorf("mode %#o, want 0600", now.Mode().Perm())
			}
			got, err := clientcmd.LoadFromFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want()
			clearOrigins(got)
			if !equality.Semantic.DeepEqual(got, want) {
				t.Errorf("kubeconfig\n%s\nwant\n%s", mustWrite(t, got), mustWrite(t, want))
			}
			if tc.raw == "clusters: [" {
				if b, err := os.ReadFile(path + ".invalid"); err != nil || string(b) != tc.raw {
					t.Errorf("the file that did not parse was not kept: %q, %v", b, err)
				}
			}
		})
	}
}

func with(c *clientcmdapi.Config, edit func(*clientcmdapi.Config)) *clientcmdapi.Config {
	edit(c)
	return c
}

// clearOrigins drops the LocationOfOrigin fields loading sets.
func clearOrigins(c *clientcmdapi.Config) {
	for _, x := range c.Clusters {
		x.LocationOfOrigin = ""
	}
	for _, x := range c.AuthInfos {
		x.LocationOfOrigin = ""
	}
	for _, x := range c.Contexts {
		x.LocationOfOrigin = ""
	}
}

func mustWrite(t *testing.T, c *clientcmdapi.Config) string {
	t.Helper()
	b, err := clientcmd.Write(*c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
