package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestToken: `quotad token` prints the join token of --data-dir, says what is wrong on a data
// dir without one, and refuses commands it does not know.
func TestToken(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := run([]string{"token", "--data-dir", dir}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "has no join token") || !strings.Contains(errOut.String(), "--cluster-init") {
		t.Fatalf("no token: exit %d, stderr %q", code, errOut.String())
	}
	token := "K10" + strings.Repeat("ab", 32) + "::server:0123456789abcdef"
	if err := os.WriteFile(filepath.Join(dir, "join-token"), []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errOut.Reset()
	if code := run([]string{"token", "--data-dir", dir}, &out, &errOut); code != 0 || out.String() != token+"\n" {
		t.Fatalf("token: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run([]string{"token", "--data-dir", dir, "bogus"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), `unknown command "bogus" for "quotad token"`) {
		t.Fatalf("token bogus: exit %d, stderr %q", code, errOut.String())
	}
	out.Reset()
	if code := run([]string{"token", "--help"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "quotad token [--data-dir DIR]") {
		t.Fatalf("token --help: exit %d, stdout %q", code, out.String())
	}
}
