package quota_test

import (
	"flag"
	"testing"

	"github.com/quotad/quotad/internal/quota/quotatest"
)

var _ = flag.Bool("update", false, "rewrite the golden files under testdata/")

// newGolden collects named outputs and compares them with testdata/<file>.
func newGolden(t *testing.T, file string) *quotatest.Golden { return quotatest.NewGolden(t, file) }
