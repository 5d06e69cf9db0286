package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestKubeconfigCommandErrors: `quotad kubeconfig` refuses a missing --user, stray
// arguments and a data dir without quotad's CA, with the usage on stderr and exit 1.
func TestKubeconfigCommandErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"kubeconfig", "--data-dir", dir}, "Error: --user is required\n"},
		{[]string{"kubeconfig", "--user", "alice", "extra"}, "Error: unexpected argument \"extra\"\n"},
		{[]string{"kubeconfig", "--user", "alice", "--expiration", "soon"}, "Error: invalid argument \"soon\" for \"--expiration\" flag"},
		{[]string{"kubeconfig", "--user", "alice", "--data-dir", dir}, "Error: reading quotad's CA in " + dir + " (start quotad with this --data-dir once first)"},
		{[]string{"kubeconfig", "--user", "alice", "--data-dir", dir, "--expiration", "-1h"}, "Error: --expiration must be positive, not -1h0m0s\n"},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		if code := run(c.args, &out, &errOut); code != 1 || out.Len() != 0 || !strings.HasPrefix(errOut.String(), c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", c.args, code, out.String(), errOut.String())
		}
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"kubeconfig", "--help"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "quotad kubeconfig --user NAME") || !strings.Contains(out.String(), "--group stringArray") {
		t.Errorf("--help: exit %d %q %q", code, out.String(), errOut.String())
	}
}

// TestServiceAccountFlags: the ServiceAccount token flags fill the config.
func TestServiceAccountFlags(t *testing.T) {
	o := newOptions()
	if err := o.parse([]string{"--service-account-issuer=https://q.example", "--api-audiences=a,b", "--service-account-max-token-expiration=2h", "--service-account-signing-key-file=/k.pem"}); err != nil {
		t.Fatal(err)
	}
	c := o.cfg
	if c.ServiceAccountIssuer != "https://q.example" || strings.Join(c.APIAudiences, ",") != "a,b" || c.ServiceAccountMaxTokenExpiration.String() != "2h0m0s" || c.ServiceAccountSigningKeyFile != "/k.pem" {
		t.Fatalf("config %q %v %v", c.ServiceAccountIssuer, c.APIAudiences, c.ServiceAccountMaxTokenExpiration)
	}
	d := newOptions()
	if err := d.parse(nil); err != nil || d.cfg.ServiceAccountIssuer != "https://kubernetes.default.svc.cluster.local" || d.cfg.APIAudiences != nil || d.cfg.ServiceAccountMaxTokenExpiration != 0 {
		t.Fatalf("defaults %+v %v", d.cfg, err)
	}
}
