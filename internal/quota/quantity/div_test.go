package quantity

import (
	"math"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

func TestQuotient(t *testing.T) {
	huge := func(s string) resource.Quantity {
		// Built without ParseQuantity's text checks: a value stored before the bound.
		return resource.MustParse(s)
	}
	for _, c := range []struct {
		a, b  string
		limit int64
		want  int64
	}{
		{"3", "500m", 100, 6},
		{"1500m", "500m", 100, 3},
		{"1499m", "500m", 100, 2},
		{"1", "3", 100, 0},
		{"0", "1", 100, 0},
		{"-1", "1", 100, 0},
		{"1", "0", 100, 100},
		{"10Gi", "1Gi", 100, 10},
		{"10Gi", "1Gi", 4, 4},
		{"1Ei", "1n", math.MaxInt32, math.MaxInt32},
		{"8Ei", "1", math.MaxInt64, 9223372036854775807},
		{"1", "1n", math.MaxInt64, 1000000000},
		{"1e300", "1e-300", 7, 7},
		{"1e-300", "1e300", 7, 0},
		{"123456789012345678", "3", math.MaxInt64, 41152263004115226},
		{"5", "5", 10, 1},
		{"0.5", "0.25", 10, 2},
	} {
		if got := Quotient(huge(c.a), huge(c.b), c.limit); got != c.want {
			t.Errorf("Quotient(%s, %s, %d) = %d, want %d", c.a, c.b, c.limit, got, c.want)
		}
	}
}

// TestQuotientHugeExponents: values far beyond the bound (stored before it existed) are
// divided by magnitude first; scaling them would take minutes and gigabytes.
func TestQuotientHugeExponents(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int64
	}{
		{"1e1000000000", "1", 10},
		{"1", "1e1000000000", 0},
		{"1e1000000000", "7e999999999", 1},
		{"12345678901234567890e100000", "1e100019", 1},
		{"1e10000000", "1e10000000", 1},
	} {
		if got := Quotient(parse(t, c.a), parse(t, c.b), 10); got != c.want {
			t.Errorf("Quotient(%s, %s, 10) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// FuzzQuotient checks Quotient against integer division of milli-values.
func FuzzQuotient(f *testing.F) {
	f.Add(int64(3000), int64(500), int64(100))
	f.Add(int64(1), int64(3), int64(5))
	f.Add(int64(math.MaxInt64), int64(1), int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, a, b, limit int64) {
		if limit < 0 {
			limit = -(limit + 1)
		}
		got := Quotient(*resource.NewMilliQuantity(a, resource.DecimalSI), *resource.NewMilliQuantity(b, resource.DecimalSI), limit)
		var want int64
		switch {
		case limit == 0 || a <= 0:
			want = 0
		case b <= 0:
			want = limit
		default:
			want = min(a/b, limit)
		}
		if got != want {
			t.Errorf("Quotient(%dm, %dm, %d) = %d, want %d", a, b, limit, got, want)
		}
	})
}
