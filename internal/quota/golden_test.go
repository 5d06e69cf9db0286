package quota_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden collects named outputs and compares them with testdata/<file>.
type golden struct {
	t     *testing.T
	file  string
	parts []string
}

func newGolden(t *testing.T, file string) *golden {
	return &golden{t: t, file: filepath.Join("testdata", file)}
}

// add records the output of one case.
func (g *golden) add(name, output string) {
	g.parts = append(g.parts, "### "+name+"\n"+strings.TrimRight(output, "\n")+"\n")
}

// check compares (or with -update rewrites) the golden file.
func (g *golden) check() {
	g.t.Helper()
	got := strings.Join(g.parts, "\n")
	if *updateGolden {
		if err := os.WriteFile(g.file, []byte(got), 0o644); err != nil {
			g.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(g.file)
	if err != nil {
		g.t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
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
				g.t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s\n(run go test -update to accept)", g.file, i+1, a, b)
			}
		}
	}
}
