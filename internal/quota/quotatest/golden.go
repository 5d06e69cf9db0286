package quotatest

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Golden collects named outputs and compares them with testdata/<file>.
type Golden struct {
	t     testing.TB
	file  string
	parts []string
}

// NewGolden returns a Golden for testdata/<file>.
func NewGolden(t testing.TB, file string) *Golden {
	return &Golden{t: t, file: filepath.Join("testdata", file)}
}

// Add records the output of one case.
func (g *Golden) Add(name, output string) {
	g.parts = append(g.parts, "### "+name+"\n"+strings.TrimRight(output, "\n")+"\n")
}

// Check compares the golden file (see GoldenFile).
func (g *Golden) Check() {
	g.t.Helper()
	GoldenFile(g.t, filepath.Base(g.file), strings.Join(g.parts, "\n"))
}

// GoldenFile compares got with testdata/<name>, naming the first line that differs, or
// rewrites the file when the test binary's -update flag (each test package defines its
// own) is set.
func GoldenFile(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got == string(want) {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var a, b string
		if i < len(gl) {
			a = gl[i]
		}
		if i < len(wl) {
			b = wl[i]
		}
		if a != b {
			whole := ""
			if len(got) <= 4<<10 {
				whole = "--- got ---\n" + got + "\n"
			}
			t.Errorf("%s differs at line %d:\n got: %s\nwant: %s\n%s(run go test -update to accept)", path, i+1, a, b, whole)
			return
		}
	}
}
