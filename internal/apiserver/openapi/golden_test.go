package openapi

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestGolden pins two whole documents (indented for review): a small built-in group and
// the custom resource group. Run with -update after an intended change.
func TestGolden(t *testing.T) {
	for _, gvPath := range []string{"apis/scheduling.k8s.io/v1", "apis/stable.example.com/v1"} {
		t.Run(gvPath, func(t *testing.T) {
			var got bytes.Buffer
			if err := json.Indent(&got, mustBuild(t).Paths[gvPath].JSON, "", "  "); err != nil {
				t.Fatal(err)
			}
			got.WriteByte('\n')
			file := filepath.Join("testdata", strings.ReplaceAll(gvPath, "/", "__")+".json")
			if *update {
				if err := os.WriteFile(file, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s differs from %s; run with -update and review the diff", gvPath, file)
			}
		})
	}
}
