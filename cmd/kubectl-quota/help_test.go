package main

import (
	"strings"
	"testing"
)

// TestHelp pins `kubectl quota --help` and each subcommand's help.
func TestHelp(t *testing.T) {
	t.Setenv("HOME", "/home/user") // the --cache-dir default names it
	var all strings.Builder
	for _, args := range [][]string{{"--help"}, {"top", "--help"}, {"fit", "--help"}, {"explain", "--help"}} {
		so, se, code := runArgs(args...)
		if code != 0 || se != "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, se)
		}
		all.WriteString("$ kubectl quota " + strings.Join(args, " ") + "\n" + so + "\n")
	}
	golden(t, "help.golden", all.String())

	// Bad usage is an error, as kubectl's.
	so, se, code := runArgs("top", "extra")
	if code != 1 || so != "" || se != "error: unknown command \"extra\" for \"kubectl quota top\"\n" {
		t.Errorf("top extra: exit %d, stdout %q, stderr %q", code, so, se)
	}
}
