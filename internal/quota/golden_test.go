package quota_test

import (
	"testing"

	"github.com/quotad/quotad/internal/quota/quotatest"
)

// newGolden collects named outputs and compares them with testdata/<file>.
func newGolden(t *testing.T, file string) *quotatest.Golden { return quotatest.NewGolden(t, file) }
