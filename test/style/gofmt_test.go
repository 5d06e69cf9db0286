package style

import (
	"bytes"
	"go/format"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGofmt: every Go file of the repository is as gofmt writes it.
func TestGofmt(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		got, err := format.Source(src)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, src) {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s is not gofmt-formatted (gofmt -w %s)", rel, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
