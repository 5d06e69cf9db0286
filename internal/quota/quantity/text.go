package quantity

import (
	"math/big"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	// MaxTextLength is the longest quantity text decoders accept. An in-bound value needs
	// at most a sign, 19 integer digits, a point, 9 fractional digits and a suffix.
	MaxTextLength = 64

	// TinyMsg refuses a non-zero text below 10^-64 in magnitude.
	TinyMsg = "must be 0 or at least 1e-64 in absolute value"
	// ExponentMsg refuses a zero written with an exponent beyond maxExponent.
	ExponentMsg = "must have an exponent between -128 and 128"

	// maxTextExponent is the largest decimal exponent (position of the leading digit) a
	// decoded text may have: 10^19 > Bound.
	maxTextExponent = 18
	// minTextExponent is the smallest one a non-zero decoded text may have.
	minTextExponent = -64
	// maxExponent bounds the e/E suffix of a decoded text. A non-zero text within
	// MaxTextLength and the two bounds above always has one within it.
	maxExponent = 128
)

// CheckText returns the field error at p for a quantity text that decoders refuse before
// ParseQuantity reads it (see the package comment), else nil. It runs in time linear in
// len(s). Texts that are not quantities are left to ParseQuantity, which refuses them
// quickly, whatever their length.
func CheckText(s string, p *field.Path) *field.Error {
	t, ok := scanText(s)
	switch {
	case !ok:
		return nil
	case len(s) > MaxTextLength:
		return field.TooLong(p, "", MaxTextLength)
	case t.zero:
	case t.binary:
		// ParseQuantity would cap the value at Bound, silently: refused instead.
		if t.aboveBound() {
			return outOfBound(s, t, p)
		}
		return nil
	default:
		switch e := t.exponent(); {
		case e > maxTextExponent, e == maxTextExponent && t.aboveBound():
			return outOfBound(s, t, p)
		case e < minTextExponent:
			return field.Invalid(p, s, TinyMsg)
		}
	}
	// Only a zero can get here with such an exponent; Quantity.Value and MilliValue would
	// still scale by it.
	if t.exp > maxExponent || t.exp < -maxExponent {
		return field.Invalid(p, s, ExponentMsg)
	}
	return nil
}

// outOfBound is the error for a text whose value is beyond the bound, on its side.
func outOfBound(s string, t text, p *field.Path) *field.Error {
	if t.negative {
		return field.Invalid(p, s, TooSmallMsg)
	}
	return field.Invalid(p, s, TooLargeMsg)
}

// text is a quantity text as ParseQuantity reads it: sign, integer digits without leading
// zeros, fractional digits, and a power of ten (decimal) or of two (binary: exp is then
// the power of two of the suffix, 10 for Ki to 60 for Ei).
type text struct {
	negative, zero, binary bool
	integer, fraction      string
	exp                    int64
}

var bigBound = new(big.Int).SetUint64(Bound)

// aboveBound reports whether the text's exact value, before any rounding or capping,
// is beyond Bound in magnitude. The caller has bounded the text's length, and for a
// decimal text the exponent of its leading digit (at most maxTextExponent), so the
// arithmetic is on numbers of a few dozen digits.
func (t text) aboveBound() bool {
	if t.zero {
		return false
	}
	if t.binary {
		// |v| < 10^len(integer) * 2^exp < 1.2 * 10^(len(integer) + 3*exp/10), and
		// 1.2 * 10^18 < Bound.
		if int64(len(t.integer))+3*t.exp/10 <= maxTextExponent {
			return false
		}
	} else if t.exponent() < maxTextExponent {
		return false // |v| < 10^18
	}
	// |v| = digits * 10^(exp - len(fraction)) * 2^binaryExp, compared with Bound
	// as digits * 10^a * 2^b > Bound * 10^c.
	digits, ok := new(big.Int).SetString(t.integer+t.fraction, 10)
	if !ok {
		return false
	}
	a := -int64(len(t.fraction))
	if t.binary {
		digits.Lsh(digits, uint(t.exp))
	} else {
		a += t.exp
	}
	bound := new(big.Int).Set(bigBound)
	ten := big.NewInt(10)
	if a >= 0 {
		digits.Mul(digits, new(big.Int).Exp(ten, big.NewInt(a), nil))
	} else {
		bound.Mul(bound, new(big.Int).Exp(ten, big.NewInt(-a), nil))
	}
	return digits.Cmp(bound) > 0
}

// exponent returns the decimal exponent of a non-zero decimal text's leading digit.
func (t text) exponent() int64 {
	if len(t.integer) > 0 {
		return int64(len(t.integer)) - 1 + t.exp
	}
	i := 0
	for i < len(t.fraction) && t.fraction[i] == '0' {
		i++
	}
	return -int64(i) - 1 + t.exp
}

// scanText reads s with ParseQuantity's grammar (apimachinery's parseQuantityString and
// suffix table); ok is false where ParseQuantity would fail.
func scanText(s string) (text, bool) {
	var t text
	pos := 0
	if pos < len(s) && (s[pos] == '-' || s[pos] == '+') {
		t.negative = s[pos] == '-'
		pos++
	}
	for pos < len(s) && s[pos] == '0' {
		pos++
	}
	start := pos
	for pos < len(s) && isDigit(s[pos]) {
		pos++
	}
	t.integer = s[start:pos]
	if pos < len(s) && s[pos] == '.' {
		pos++
		start = pos
		for pos < len(s) && isDigit(s[pos]) {
			pos++
		}
		t.fraction = s[start:pos]
	}
	t.zero = t.integer == "" && allZeros(t.fraction)
	suffix := s[pos:]
	if exp, ok := decimalSuffix(suffix); ok {
		t.exp = exp
		return t, true
	}
	if exp, ok := binarySuffix(suffix); ok {
		t.binary, t.exp = true, exp
		return t, true
	}
	if len(suffix) > 1 && (suffix[0] == 'e' || suffix[0] == 'E') {
		x, err := strconv.ParseInt(suffix[1:], 10, 64)
		if err != nil {
			return t, false
		}
		t.exp = int64(int32(x)) // ParseQuantity keeps the exponent as an int32
		return t, true
	}
	return t, false
}

// decimalSuffix returns the power of ten of one of ParseQuantity's decimal SI suffixes.
func decimalSuffix(s string) (int64, bool) {
	switch s {
	case "":
		return 0, true
	case "n":
		return -9, true
	case "u":
		return -6, true
	case "m":
		return -3, true
	case "k":
		return 3, true
	case "M":
		return 6, true
	case "G":
		return 9, true
	case "T":
		return 12, true
	case "P":
		return 15, true
	case "E":
		return 18, true
	}
	return 0, false
}

// binarySuffix returns the power of two of one of ParseQuantity's binary SI suffixes.
func binarySuffix(s string) (int64, bool) {
	switch s {
	case "Ki":
		return 10, true
	case "Mi":
		return 20, true
	case "Gi":
		return 30, true
	case "Ti":
		return 40, true
	case "Pi":
		return 50, true
	case "Ei":
		return 60, true
	}
	return 0, false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func allZeros(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '0' {
			return false
		}
	}
	return true
}
