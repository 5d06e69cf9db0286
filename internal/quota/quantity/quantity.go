package quantity

import (
	"math"
	"math/big"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	// Bound is the largest in-bound value: 2^63-1, at unit scale.
	Bound = math.MaxInt64

	// TooLargeMsg refuses a value above Bound.
	TooLargeMsg = "must be less than or equal to 9223372036854775807"
	// TooSmallMsg refuses a value below -Bound.
	TooSmallMsg = "must be greater than or equal to -9223372036854775807"

	// MaxExactGap is how many decimal places apart two operands' exponents may be for Add
	// and Sub to combine them exactly even when their magnitudes are far apart; beyond
	// it the operand of larger magnitude absorbs the other.
	MaxExactGap = 4096

	// renderBits is the size of mantissa above which an out-of-bound value is reported
	// without its text (Quantity.String strips trailing zeros one division at a time).
	renderBits = 4096

	log10of2 = 0.30102999566398120
)

// InBound reports whether q lies in [-Bound, Bound].
func InBound(q resource.Quantity) bool {
	return Cmp(q, maxQuantity()) <= 0 && Cmp(q, minQuantity()) >= 0
}

// Clamp returns q, or the nearest bound when q lies beyond it (a value stored before the
// bound existed), so code that needs int64 arithmetic (Value, MilliValue) never scales a
// huge exponent.
func Clamp(q resource.Quantity) resource.Quantity {
	switch {
	case Cmp(q, maxQuantity()) > 0:
		return maxQuantity()
	case Cmp(q, minQuantity()) < 0:
		return minQuantity()
	}
	return q
}

// Compact returns q in resource.Quantity's int64 form (an int64 mantissa and a power of ten)
// when its value has one with an exponent within ±18, else q. ParseQuantity keeps some
// texts in the decimal form ("100Ti", whose digits and suffix it cannot bound cheaply):
// every comparison and sum with such a value then goes through big-number arithmetic and
// allocates. The value, the Format and so the canonical text are q's. It allocates when q
// is not an integer; call it where a value is kept for many uses (a quota's hard).
func Compact(q resource.Quantity) resource.Quantity {
	if _, ok := q.AsInt64(); ok {
		return q // already in int64 form (AsInt64 answers only that form)
	}
	u, s := decOf(q)
	if u.BitLen() > 128 {
		return q // far beyond an int64 mantissa whatever its trailing zeros
	}
	// The decimal form keeps a fixed scale ("100Ti" is 109951162777600000000000 at scale
	// 9): its trailing zeros go to the exponent first.
	m, r, ten := new(big.Int).Set(u), new(big.Int), big.NewInt(10)
	for m.Sign() != 0 && s > -18 {
		q10, rem := new(big.Int).QuoRem(m, ten, r)
		if rem.Sign() != 0 {
			break
		}
		m, s = q10, s-1
	}
	if !m.IsInt64() || s > 18 || s < -18 {
		return q
	}
	c := resource.NewScaledQuantity(m.Int64(), resource.Scale(-s))
	c.Format = q.Format
	return *c
}

// Check returns the field error for q at p when q is out of bound, else nil. The bad value
// is q's canonical text, as upstream's quantity errors print it, unless that text would be
// expensive to build.
func Check(q resource.Quantity, p *field.Path) *field.Error {
	switch {
	case Cmp(q, maxQuantity()) > 0:
		return field.Invalid(p, BadValue(q), TooLargeMsg)
	case Cmp(q, minQuantity()) < 0:
		return field.Invalid(p, BadValue(q), TooSmallMsg)
	}
	return nil
}

// Cmp returns -1, 0 or 1 as a is less than, equal to or greater than b, exactly, in time
// linear in the operands' digits: magnitudes (digits and exponent) decide before any
// scaling, and the exact comparison runs only on operands of about the same magnitude.
func Cmp(a, b resource.Quantity) int {
	sa, sb := a.Sign(), b.Sign()
	switch {
	case sa < sb:
		return -1
	case sa > sb:
		return 1
	case sa == 0:
		return 0
	}
	// Integers (most quantities: counts, bytes, whole cores) compare as int64s.
	if x, ok := a.AsInt64(); ok {
		if y, ok := b.AsInt64(); ok {
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
	}
	if moderate(a) && moderate(b) {
		return a.Cmp(b)
	}
	ma, mb := magnitudeOf(a), magnitudeOf(b)
	switch {
	case ma.hi <= mb.lo: // |a| < |b|
		return -sa
	case mb.hi <= ma.lo: // |a| > |b|
		return sa
	}
	// About the same magnitude: their exponents differ by at most their digits, so
	// aligning them costs time linear in the digits.
	return a.Cmp(b)
}

// Add returns a + b as Quantity.Add computes it (a zero takes the format of what is added
// to it), except that when the exponents are more than MaxExactGap apart and the
// magnitudes far apart too, the result is a copy of the operand of larger magnitude, in
// its own format (a decimal SI format has no suffix for such exponents).
func Add(a, b resource.Quantity) resource.Quantity {
	switch {
	case b.IsZero():
		r := a.DeepCopy()
		if r.IsZero() {
			r.Format = b.Format
		}
		return r
	case a.IsZero():
		return b.DeepCopy()
	}
	if !moderate(a) || !moderate(b) {
		_, sa := decOf(a)
		_, sb := decOf(b)
		if gap := sa - sb; gap > MaxExactGap || gap < -MaxExactGap {
			ma, mb := magnitudeOf(a), magnitudeOf(b)
			switch {
			case mb.hi <= ma.lo:
				return a.DeepCopy()
			case ma.hi <= mb.lo:
				return b.DeepCopy()
			}
		}
	}
	r := a.DeepCopy()
	r.Add(b)
	return r
}

// Sub returns a - b as Quantity.Sub computes it, with Add's bound on the work.
func Sub(a, b resource.Quantity) resource.Quantity {
	nb := b.DeepCopy()
	nb.Neg()
	return Add(a, nb)
}

// IsInteger reports whether q is a whole number, exactly (upstream checks
// MilliValue()%1000 == 0, which overflows above 9223372036854775807m), in time linear in
// q's digits.
func IsInteger(q resource.Quantity) bool {
	if q.Sign() == 0 {
		return true
	}
	u, s := decOf(q)
	if s <= 0 {
		return true
	}
	if magnitudeOf(q).hi <= 0 { // 0 < |q| < 1
		return false
	}
	// |q| >= 1, so s is at most u's digits: 10^s costs no more than u.
	pow := new(big.Int).Exp(big.NewInt(10), big.NewInt(s), nil)
	return new(big.Int).Rem(u, pow).Sign() == 0
}

// Max returns a copy of the larger of a and b (a when they are equal).
func Max(a, b resource.Quantity) resource.Quantity {
	if Cmp(b, a) > 0 {
		return b.DeepCopy()
	}
	return a.DeepCopy()
}

// magnitude bounds the decimal exponent of a non-zero value: 10^lo <= |v| < 10^hi.
type magnitude struct{ lo, hi int64 }

// magnitudeOf returns q's magnitude from its mantissa's bit length and its scale, without
// scaling anything. q must not be zero.
func magnitudeOf(q resource.Quantity) magnitude {
	u, s := decOf(q)
	bits := float64(u.BitLen())
	return magnitude{
		lo: int64(math.Floor((bits-1)*log10of2-1e-6)) - s,
		hi: int64(math.Ceil(bits*log10of2+1e-6)) - s,
	}
}

// moderate reports whether q's value is non-zero and between 1e-300 and 1e300 in
// magnitude: then its mantissa has at most a few hundred digits and its exponent is within
// a few hundred of zero, so Quantity's own methods are cheap on it. The float is computed
// without scaling (a float64 power of ten; +Inf or 0 outside float64's range).
func moderate(q resource.Quantity) bool {
	f := math.Abs(q.AsApproximateFloat64())
	return f >= 1e-300 && f <= 1e300
}

func maxQuantity() resource.Quantity { return *resource.NewQuantity(Bound, resource.DecimalSI) }
func minQuantity() resource.Quantity { return *resource.NewQuantity(-Bound, resource.DecimalSI) }

// BadValue is what a field error about q shows: q's canonical text, as upstream's
// quantity errors print it, or no value when building that text would be expensive.
func BadValue(q resource.Quantity) interface{} {
	if u, _ := decOf(q); u.BitLen() > renderBits {
		return field.OmitValueType{}
	}
	return q.String()
}

// decOf returns q as unscaled * 10^-scale. q is the caller's copy: AsDec converts an int64
// mantissa to a fresh inf.Dec, and returns an existing one shared, which is only read here.
func decOf(q resource.Quantity) (*big.Int, int64) {
	d := q.AsDec()
	return d.UnscaledBig(), int64(d.Scale())
}

// Semantic returns apimachinery's equality.Semantic with quantities compared by Cmp:
// Semantic().DeepEqual(a, b) never scales by a huge exponent.
func Semantic() conversion.Equalities {
	return conversion.EqualitiesOrDie(
		func(a, b resource.Quantity) bool { return Cmp(a, b) == 0 },
		func(a, b metav1.MicroTime) bool { return a.UTC() == b.UTC() },
		func(a, b metav1.Time) bool { return a.UTC() == b.UTC() },
		func(a, b metav1.FieldsV1) bool { return a.Equal(b) },
		func(a, b labels.Selector) bool { return a.String() == b.String() },
		func(a, b fields.Selector) bool { return a.String() == b.String() },
	)
}
