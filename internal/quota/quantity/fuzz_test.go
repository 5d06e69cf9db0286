package quantity

import (
	"fmt"
	"math/big"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/quota/quotatest"
)

// stallSeeds reproduce the stalls: texts ParseQuantity, Quantity.Cmp or Quantity.Add take
// minutes on (a billion-digit power of ten), and long texts it parses in quadratic time.
var stallSeeds = []string{
	"1e1000000000", "1e-1000000000", "1234567890123456789e1000000000", "-1e10000000",
	"0.5e-2147483648", "1e2147483647", "0e-1001000000", "0e2000000000", strings.Repeat("9", 1<<20), "1." + strings.Repeat("0", 1<<20) + "1",
}

// FuzzText: every text goes through what a decoder and validation do with a quantity
// (CheckText, then ParseQuantity, Check, and the algebra against another) within
// StallBound, and the algebra agrees with Quantity's own on in-bound values.
func FuzzText(f *testing.F) {
	for _, s := range append(stallSeeds, "1", "512Mi", "250m", "0", "-1", "8Ei", "9223372036854775807", "1e19", "100n", "9.3E", "8192Pi", "9223372036854775807000m", "-9Ei", "7.5Ei") {
		f.Add(s, "1")
		f.Add("1Gi", s)
	}
	p := field.NewPath("q")
	f.Fuzz(func(t *testing.T, x, y string) {
		quotatest.Within(t, quotatest.StallBound, fmt.Sprintf("%.40q, %.40q", x, y), func() error {
			var qs []resource.Quantity
			for _, s := range []string{x, y} {
				if err := checkTextBound(s, p); err != nil {
					return err
				}
				if CheckText(s, p) != nil {
					return nil
				}
				q, err := resource.ParseQuantity(s)
				if err != nil {
					return nil
				}
				if err := Check(q, p); err != nil {
					return fmt.Errorf("CheckText accepts %q, Check refuses it: %v", s, err)
				}
				qs = append(qs, q)
			}
			return checkAlgebra(qs[0], qs[1], p)
		})
	})
}

// checkTextBound checks CheckText's bound against an independent reading of s's exact
// value, where one is cheap (a short text with a small exponent that ParseQuantity
// accepts): the bound's error exactly when the value is beyond 2^63-1 in magnitude.
func checkTextBound(s string, p *field.Path) error {
	v, ok := exactValue(s)
	if !ok {
		return nil
	}
	if _, err := resource.ParseQuantity(s); err != nil {
		return nil
	}
	bound := new(big.Rat).SetInt64(Bound)
	beyond := new(big.Rat).Abs(v).Cmp(bound) > 0
	err := CheckText(s, p)
	refused := err != nil && (err.Detail == TooLargeMsg || err.Detail == TooSmallMsg)
	if beyond != refused {
		return fmt.Errorf("CheckText(%q) = %v for the value %s", s, err, v.FloatString(9))
	}
	return nil
}

// exactValue reads a quantity text with big.Rat: a signed decimal number with a binary or
// decimal SI suffix, or with an exponent of at most 3 digits, in at most MaxTextLength
// bytes.
func exactValue(s string) (*big.Rat, bool) {
	if len(s) > MaxTextLength {
		return nil, false
	}
	num, scale := s, new(big.Rat).SetInt64(1)
	if n, ok := strings.CutSuffix(s, "i"); ok && len(n) > 0 {
		e := strings.IndexByte(" KMGTPE", n[len(n)-1])
		if e <= 0 {
			return nil, false
		}
		num = n[:len(n)-1]
		scale.SetInt(new(big.Int).Lsh(big.NewInt(1), uint(10*e)))
	} else if e := strings.LastIndexAny(s, "eE"); e >= 0 && e < len(s)-1 {
		if len(s)-e > 5 {
			return nil, false
		}
		num = s[:e]
		if _, ok := scale.SetString("1e" + s[e+1:]); !ok {
			return nil, false
		}
	} else if len(s) > 0 {
		if e := strings.IndexByte("num kMGTPE", s[len(s)-1]); e >= 0 && e != 3 {
			num = s[:len(s)-1]
			scale.SetString(fmt.Sprintf("1e%d", 3*(e-3)))
		}
	}
	if strings.Trim(num, "+-0123456789.") != "" {
		return nil, false
	}
	v, ok := new(big.Rat).SetString(num)
	if !ok {
		return nil, false
	}
	return v.Mul(v, scale), true
}

// FuzzStored: values as they may be stored from before the bound (any mantissa, any
// exponent, no parsing) are compared, added and checked within StallBound.
func FuzzStored(f *testing.F) {
	f.Add(int64(1), int32(1000000000), int64(1), int32(0))
	f.Add(int64(1), int32(10000000), int64(-5), int32(-3))
	f.Add(int64(7), int32(-2000000000), int64(1), int32(2000000000))
	f.Add(int64(0), int32(2000000000), int64(3), int32(-9))
	p := field.NewPath("q")
	f.Fuzz(func(t *testing.T, v1 int64, s1 int32, v2 int64, s2 int32) {
		a := *resource.NewScaledQuantity(v1, resource.Scale(s1))
		b := *resource.NewScaledQuantity(v2, resource.Scale(s2))
		quotatest.Within(t, quotatest.StallBound, fmt.Sprintf("%de%d, %de%d", v1, s1, v2, s2), func() error {
			return checkAlgebra(a, b, p)
		})
	})
}

// cheap reports whether Quantity's own methods, the reference here, are cheap on q: an
// in-bound value whose exponent is within a thousand of zero (a zero with an exponent of a
// billion is in bound, and Quantity.Cmp scales by it).
func cheap(q resource.Quantity) bool {
	_, s := decOf(q)
	return InBound(q) && s > -1000 && s < 1000
}

// checkAlgebra checks Cmp, Add, Sub, Max and Check on a and b.
func checkAlgebra(a, b resource.Quantity, p *field.Path) error {
	_, _ = Check(a, p), Check(b, p)
	_, _ = IsInteger(a), IsInteger(b)
	if Cmp(a, a) != 0 || Cmp(b, b) != 0 {
		return fmt.Errorf("a value is not equal to itself")
	}
	c := Cmp(a, b)
	if Cmp(b, a) != -c {
		return fmt.Errorf("Cmp is not antisymmetric")
	}
	if Cmp(Max(a, b), a) < 0 || Cmp(Max(a, b), b) < 0 {
		return fmt.Errorf("Max is below an operand")
	}
	sum, diff := Add(a, b), Sub(a, b)
	if Cmp(sum, Add(b, a)) != 0 {
		return fmt.Errorf("Add is not commutative")
	}
	switch {
	case b.Sign() > 0 && Cmp(sum, a) < 0, b.Sign() < 0 && Cmp(sum, a) > 0:
		return fmt.Errorf("a + b is on the wrong side of a")
	case c != 0 && diff.Sign() != c:
		return fmt.Errorf("a - b has sign %d, Cmp(a, b) = %d", diff.Sign(), c)
	}
	if cheap(a) && cheap(b) {
		if ca := Compact(a); Cmp(ca, a) != 0 || ca.String() != a.String() || ca.Format != a.Format {
			return fmt.Errorf("Compact(%s) = %s", a.String(), ca.String())
		}
		if w := a.Cmp(b); c != w {
			return fmt.Errorf("Cmp = %d, Quantity.Cmp = %d", c, w)
		}
		want := a.DeepCopy()
		want.Add(b)
		if Cmp(sum, want) != 0 {
			return fmt.Errorf("Add = %s, want %s", sum.String(), want.String())
		}
		if back := Sub(sum, b); Cmp(back, a) != 0 {
			return fmt.Errorf("(a + b) - b = %s, want %s", back.String(), a.String())
		}
	}
	return nil
}
