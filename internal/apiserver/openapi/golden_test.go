package openapi

import (
	"bytes"
	"encoding/json"
	"flag"
	"strings"
	"testing"

	"github.com/quotad/quotad/internal/quota/quotatest"
)

var _ = flag.Bool("update", false, "rewrite the golden files in testdata")

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
			quotatest.GoldenFile(t, strings.ReplaceAll(gvPath, "/", "__")+".json", got.String())
		})
	}
}
