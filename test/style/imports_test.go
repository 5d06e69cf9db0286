package style

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/quotad/quotad"

// importGroup is the group an import path belongs in: 0 the standard library, 1 other
// modules, 2 quotad's own packages.
func importGroup(path string) int {
	switch {
	case path == module || strings.HasPrefix(path, module+"/"):
		return 2
	case !strings.Contains(strings.SplitN(path, "/", 2)[0], "."):
		return 0
	}
	return 1
}

// TestImportGroups: every Go file of the repository (other modules' vendored or copied
// trees aside) imports in groups — standard library, other modules, quotad — in that
// order, one group per kind, separated by blank lines, as goimports -local would write them.
func TestImportGroups(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			// Directories of other modules (their own go.mod) keep their own style.
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		checked++
		rel, _ := filepath.Rel(root, path)
		prevGroup, prevLine := -1, 0
		var seen [3]bool
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			g := importGroup(p)
			line := fset.Position(imp.Pos()).Line
			if imp.Doc != nil {
				line = fset.Position(imp.Doc.Pos()).Line
			}
			switch {
			case prevGroup == -1:
			case g == prevGroup && line != prevLine+1:
				t.Errorf("%s: %q: a blank line inside a group", rel, p)
			case g != prevGroup && line == prevLine+1:
				t.Errorf("%s: %q: no blank line between groups", rel, p)
			case g < prevGroup || (g != prevGroup && seen[g]):
				t.Errorf("%s: %q: out of group order (standard library, other modules, %s)", rel, p, module)
			}
			seen[g] = true
			prevGroup, prevLine = g, fset.Position(imp.End()).Line
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d files", checked)
	}
}
