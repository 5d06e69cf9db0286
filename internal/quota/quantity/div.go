package quantity

import (
	"math/big"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Quotient returns floor(a / b) capped at limit (limit >= 0): how many times b fits into
// a. It is 0 when a <= 0, and limit when b <= 0 (nothing is consumed per unit). Time is
// linear in the operands' digits whatever their exponents: magnitudes decide a quotient
// of 0 or one beyond 10^19 before any scaling, and otherwise the exponents differ by at
// most the digits plus 20, so aligning them is cheap.
func Quotient(a, b resource.Quantity, limit int64) int64 {
	switch {
	case limit <= 0 || a.Sign() <= 0:
		return 0
	case b.Sign() <= 0:
		return limit
	}
	ma, mb := magnitudeOf(a), magnitudeOf(b)
	if ma.hi <= mb.lo { // a < b
		return 0
	}
	if ma.lo-mb.hi >= 19 { // a / b > 10^19 > limit
		return limit
	}
	ua, sa := decOf(a)
	ub, sb := decOf(b)
	// a / b = (ua·10^sb) / (ub·10^sa).
	num, den := new(big.Int).Set(ua), new(big.Int).Set(ub)
	ten := big.NewInt(10)
	if d := sb - sa; d > 0 {
		num.Mul(num, new(big.Int).Exp(ten, big.NewInt(d), nil))
	} else if d < 0 {
		den.Mul(den, new(big.Int).Exp(ten, big.NewInt(-d), nil))
	}
	q := num.Quo(num, den)
	if !q.IsInt64() || q.Int64() > limit {
		return limit
	}
	return q.Int64()
}
