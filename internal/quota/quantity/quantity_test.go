package quantity

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/quota/quotatest"
)

// parse parses a quantity whose text CheckText accepts or that ParseQuantity reads cheaply
// (the tests below never parse a text that would stall it).
func parse(t *testing.T, s string) resource.Quantity {
	t.Helper()
	q, err := resource.ParseQuantity(s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return q
}

// huge are stored-before-the-bound values: each would make Quantity.Cmp or Add against a
// small value scale by a power of ten with millions or a billion digits.
var huge = []string{"1e1000000000", "1e10000000", "-1e10000000", "7e999999999", "12345678901234567890e100000"}

func TestCmp(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1", "2", -1},
		{"1Ki", "1024", 0},
		{"-1", "1", -1},
		{"0", "0e1000000000", 0},
		{"0e1000000000", "1", -1},
		{"1n", "1e-9", 0},
		{"100m", "0.1", 0},
		{"1e1000000000", "1", 1},
		{"1", "1e10000000", -1},
		{"-1e10000000", "-1", -1},
		{"-1e10000000", "1", -1},
		{"1e10000000", "2e10000000", -1},
		{"1e10000000", "10e9999999", 0},
		{"1e10000000", "1e20000000", -1},
		{"1e1000000000", "7e999999999", 1},
		{"12345678901234567890e100000", "1e100019", 1},
		{"12345678901234567890e100000", "2e100019", -1},
		{"12345678901234567890e100000", "1234567890123456789e100001", 0},
		{"9223372036854775807", "1e1000000000", -1},
	} {
		a, b := parse(t, tc.a), parse(t, tc.b)
		quotatest.Within(t, quotatest.StallBound, "Cmp("+tc.a+", "+tc.b+")", func() error {
			if got := Cmp(a, b); got != tc.want {
				t.Errorf("Cmp(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
			if got := Cmp(b, a); got != -tc.want {
				t.Errorf("Cmp(%s, %s) = %d, want %d", tc.b, tc.a, got, -tc.want)
			}
			return nil
		})
	}
}

func TestAddSub(t *testing.T) {
	for _, tc := range []struct {
		a, b, sum, diff string
	}{
		{"1", "2", "3", "-1"},
		{"0", "512Mi", "512Mi", "-512Mi"},
		{"512Mi", "0", "512Mi", "512Mi"},
		{"250m", "1", "1250m", "-750m"},
		{"9223372036854775807", "9223372036854775807", "18446744073709551614", "0"},
		// Exact while the exponents are close (or the digits many).
		{"1e4000", "1", "1" + strings.Repeat("0", 3999) + "1", strings.Repeat("9", 4000)},
		{"1e10000000", "1e10000000", "20e9999999", "0"},
		// A value far beyond the bound absorbs what is added to it.
		{"1e10000000", "1", "10e9999999", "10e9999999"},
		{"1", "1e10000000", "10e9999999", "-10e9999999"},
		{"1e1000000000", "-5Gi", "10e999999999", "10e999999999"},
		{"0", "1e1000000000", "10e999999999", "-10e999999999"},
		{"1e1000000000", "0e5", "10e999999999", "10e999999999"},
	} {
		a, b := parse(t, tc.a), parse(t, tc.b)
		quotatest.Within(t, quotatest.StallBound, "Add/Sub("+tc.a+", "+tc.b+")", func() error {
			sum, diff := Add(a, b), Sub(a, b)
			if got := sum.String(); got != tc.sum {
				t.Errorf("Add(%s, %s) = %s, want %s", tc.a, tc.b, got, tc.sum)
			}
			if got := diff.String(); got != tc.diff {
				t.Errorf("Sub(%s, %s) = %s, want %s", tc.a, tc.b, got, tc.diff)
			}
			if a0, b0 := parse(t, tc.a), parse(t, tc.b); a.String() != a0.String() || b.String() != b0.String() {
				t.Errorf("Add/Sub(%s, %s) changed an argument", tc.a, tc.b)
			}
			return nil
		})
	}
}

// TestAddMatchesQuantity: on values Quantity.Add handles cheaply, Add and Sub are exactly
// Quantity's, format included.
func TestAddMatchesQuantity(t *testing.T) {
	values := []string{"0", "1", "-1", "512Mi", "1Gi", "250m", "1.5", "1e3", "1E", "100n", "9223372036854775807", "0.000000001", "12345678901234567890123"}
	for _, x := range values {
		for _, y := range values {
			a, b := parse(t, x), parse(t, y)
			want := a.DeepCopy()
			want.Add(b)
			got := Add(a, b)
			if got.String() != want.String() || got.Format != want.Format {
				t.Errorf("Add(%s, %s) = %s (%s), want %s (%s)", x, y, got.String(), got.Format, want.String(), want.Format)
			}
			want = a.DeepCopy()
			want.Sub(b)
			got = Sub(a, b)
			if got.String() != want.String() || got.Format != want.Format {
				t.Errorf("Sub(%s, %s) = %s (%s), want %s (%s)", x, y, got.String(), got.Format, want.String(), want.Format)
			}
			if c, w := Cmp(a, b), a.Cmp(b); c != w {
				t.Errorf("Cmp(%s, %s) = %d, want %d", x, y, c, w)
			}
		}
	}
}

func TestCheck(t *testing.T) {
	p := field.NewPath("spec", "hard").Key("pods")
	for _, tc := range []struct {
		q    resource.Quantity
		want string
	}{
		{resource.MustParse("0"), ""},
		{resource.MustParse("9223372036854775807"), ""},
		{resource.MustParse("-9223372036854775807"), ""},
		{resource.MustParse("8Ei"), ""}, // 2^63, capped by ParseQuantity at 2^63-1
		{resource.MustParse("9.223372036854775807E"), ""},
		{resource.MustParse("9223372036854775808"), `spec.hard[pods]: Invalid value: "9223372036854775808": must be less than or equal to 9223372036854775807`},
		{resource.MustParse("9223372036854775807001m"), `spec.hard[pods]: Invalid value: "9223372036854775807001m": must be less than or equal to 9223372036854775807`},
		{resource.MustParse("1e19"), `spec.hard[pods]: Invalid value: "10e18": must be less than or equal to 9223372036854775807`},
		{resource.MustParse("1e1000000000"), `spec.hard[pods]: Invalid value: "10e999999999": must be less than or equal to 9223372036854775807`},
		{resource.MustParse("-1e1000000000"), `spec.hard[pods]: Invalid value: "-10e999999999": must be greater than or equal to -9223372036854775807`},
		{resource.MustParse("-9223372036854775808"), `spec.hard[pods]: Invalid value: "-9223372036854775808": must be greater than or equal to -9223372036854775807`},
		{resource.MustParse("1" + strings.Repeat("0", 2000)), `spec.hard[pods]: Invalid value: must be less than or equal to 9223372036854775807`},
	} {
		quotatest.Within(t, quotatest.StallBound, "Check("+tc.want+")", func() error {
			got := ""
			if err := Check(tc.q, p); err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("Check(%s) = %q, want %q", tc.q.String(), got, tc.want)
			}
			if InBound(tc.q) != (tc.want == "") {
				t.Errorf("InBound(%s) = %v", tc.q.String(), !(tc.want == ""))
			}
			return nil
		})
	}
}

func TestCheckText(t *testing.T) {
	p := field.NewPath("spec", "hard").Key("pods")
	for _, tc := range []struct {
		text, want string
	}{
		{"1", ""},
		{"", ""},
		{"0e128", ""},
		{"-0.000e-128", ""},
		{"0e-1000000000", `spec.hard[pods]: Invalid value: "0e-1000000000": must have an exponent between -128 and 128`},
		{"-0.000e1000000000", `spec.hard[pods]: Invalid value: "-0.000e1000000000": must have an exponent between -128 and 128`},
		{"999999999999999999", ""},
		{"9223372036854775807", ""},
		{"9999999999999999999", `spec.hard[pods]: Invalid value: "9999999999999999999": must be less than or equal to 9223372036854775807`},
		{"100Ei", `spec.hard[pods]: Invalid value: "100Ei": must be less than or equal to 9223372036854775807`},
		{"1e-64", ""},
		{"0.1e-63", ""},
		{"1e4294967296", ""},           // ParseQuantity reads the exponent as an int32: 1e0
		{"1e99999999999999999999", ""}, // ParseQuantity refuses it quickly
		{"1e1000000000x", ""},
		{"9E", ""},
		{"12E", `spec.hard[pods]: Invalid value: "12E": must be less than or equal to 9223372036854775807`},
		{"10000000000000000000", `spec.hard[pods]: Invalid value: "10000000000000000000": must be less than or equal to 9223372036854775807`},
		{"1e19", `spec.hard[pods]: Invalid value: "1e19": must be less than or equal to 9223372036854775807`},
		{"0.01e21", `spec.hard[pods]: Invalid value: "0.01e21": must be less than or equal to 9223372036854775807`},
		{"1e1000000000", `spec.hard[pods]: Invalid value: "1e1000000000": must be less than or equal to 9223372036854775807`},
		{"1234567890123456789e1000000000", `spec.hard[pods]: Invalid value: "1234567890123456789e1000000000": must be less than or equal to 9223372036854775807`},
		{"+1E+1000", `spec.hard[pods]: Invalid value: "+1E+1000": must be less than or equal to 9223372036854775807`},
		{"-1e1000000000", `spec.hard[pods]: Invalid value: "-1e1000000000": must be greater than or equal to -9223372036854775807`},
		{"1e-65", `spec.hard[pods]: Invalid value: "1e-65": must be 0 or at least 1e-64 in absolute value`},
		{"-0.001e-1000000000", `spec.hard[pods]: Invalid value: "-0.001e-1000000000": must be 0 or at least 1e-64 in absolute value`},
		{"1" + strings.Repeat("0", 64), `spec.hard[pods]: Too long: may not be more than 64 bytes`},
		{"0." + strings.Repeat("0", 100), `spec.hard[pods]: Too long: may not be more than 64 bytes`},
		{strings.Repeat("x", 65), ""},
		{"1" + strings.Repeat("0", 64) + "x", ""},
	} {
		got := ""
		if err := CheckText(tc.text, p); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("CheckText(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// TestCheckTextBound: every textual form of a value beyond 2^63-1 in magnitude, in base
// units and before any rounding, is refused, in each suffix family (binary, decimal SI,
// exponent, plain digits, milli and nano), and values at the bound are accepted. Binary
// texts ParseQuantity would cap at 2^63-1 ("8Ei" is 2^63) are refused rather than capped.
func TestCheckTextBound(t *testing.T) {
	p := field.NewPath("spec", "hard").Key("cpu")
	const (
		large = "must be less than or equal to 9223372036854775807"
		small = "must be greater than or equal to -9223372036854775807"
	)
	for _, tc := range []struct {
		text, want string
	}{
		// Binary suffixes: 8Ei = 8192Pi = ... = 2^63.
		{"8Ei", large},
		{"9Ei", large},
		{"16Ei", large},
		{"8.000001Ei", large},
		{"8.0Ei", large},
		{"8192Pi", large},
		{"8388608Ti", large},
		{"8589934592Gi", large},
		{"8796093022208Mi", large},
		{"9007199254740992Ki", large},
		{"-9Ei", small},
		{"-8Ei", small},
		{"+8Ei", large},
		{"7.999999999999999999Ei", ""}, // 2^63 - 1.15...
		{"7Ei", ""},
		{"1Ei", ""},
		{"-7Ei", ""},
		{"8191.999Pi", ""},
		{"8388607Ti", ""},
		{"8589934591Gi", ""},
		{"8796093022207Mi", ""},
		{"9007199254740991Ki", ""},
		{"0Ei", ""},
		{"0.000Ei", ""},
		// Plain digits.
		{"9223372036854775807", ""},
		{"09223372036854775807", ""},
		{"9223372036854775807.0", ""},
		{"-9223372036854775807", ""},
		{"9223372036854775808", large},
		{"9223372036854775807.000000001", large},
		{"9223372036854775807.0000000001", large}, // ParseQuantity would round it up to 1n above
		{"-9223372036854775808", small},
		// Exponents and decimal SI suffixes.
		{"9.3e18", large},
		{"9.223372036854775807e18", ""},
		{"9.223372036854775808e18", large},
		{"92233720368547758.08e2", large},
		{"0.9223372036854775807e19", ""},
		{"0.9223372036854775808e19", large},
		{"9300P", large},
		{"9223.372036854775807P", ""},
		{"9223.372036854775808P", large},
		{"8E", ""},
		{"9E", ""},
		{"9.3E", large},
		{"-9.3E", small},
		{"9.223372036854775807E", ""},
		{"9223372036854775.807k", ""},
		{"9223372036854775.808k", large},
		{"9223372036854.775807M", ""},
		{"9223372036854.775808M", large},
		{"9223372036.854775808G", large},
		// Milli and nano: the bound is on the value in base units.
		{"9223372036854775807000m", ""},
		{"9223372036854775807001m", large},
		{"9223372036854775808000m", large},
		{"-9223372036854775808000m", small},
		{"9223372036854775807000000000n", ""},
		{"9223372036854775807000000001n", large},
		{"9223372036854775807000000u", ""},
		{"9223372036854775807000001u", large},
	} {
		want := tc.want
		if want != "" {
			want = `spec.hard[cpu]: Invalid value: "` + tc.text + `": ` + want
		}
		got := ""
		if err := CheckText(tc.text, p); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("CheckText(%q) = %q, want %q", tc.text, got, want)
			continue
		}
		// What CheckText accepts parses to a value in bound, not capped at it.
		if want == "" {
			q := parse(t, tc.text)
			if err := Check(q, p); err != nil {
				t.Errorf("CheckText accepts %q, Check refuses %s: %v", tc.text, q.String(), err)
			}
		}
	}
}

func TestIsInteger(t *testing.T) {
	for _, tc := range []struct {
		q    resource.Quantity
		want bool
	}{
		{resource.MustParse("0"), true},
		{resource.MustParse("1"), true},
		{resource.MustParse("1k"), true},
		{resource.MustParse("1Ki"), true},
		{resource.MustParse("1500m"), false},
		{resource.MustParse("-1.5"), false},
		{resource.MustParse("1n"), false},
		{resource.MustParse("10000000000000000.5"), false}, // MilliValue overflows here
		{resource.MustParse("12345678901234567890123"), true},
		{resource.MustParse("1e1000000000"), true},
		{*resource.NewScaledQuantity(0, -2000000000), true},
		{*resource.NewScaledQuantity(5, -2000000000), false},
		{*resource.NewScaledQuantity(5, 2000000000), true},
	} {
		quotatest.Within(t, quotatest.StallBound, "IsInteger("+tc.q.String()+")", func() error {
			if got := IsInteger(tc.q); got != tc.want {
				t.Errorf("IsInteger(%s) = %v, want %v", tc.q.String(), got, tc.want)
			}
			return nil
		})
	}
}

func TestClamp(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"1", "1"},
		{"-5", "-5"},
		{"8Ei", "8Ei"},
		{"1e10000000", "9223372036854775807"},
		{"1e1000000000", "9223372036854775807"},
		{"-1e10000000", "-9223372036854775807"},
	} {
		quotatest.Within(t, 20*time.Second, "Clamp "+tc.in, func() error {
			got := Clamp(parse(t, tc.in))
			if Cmp(got, parse(t, tc.want)) != 0 {
				t.Errorf("Clamp(%s) = %s, want %s", tc.in, got.String(), tc.want)
			}
			return nil
		})
	}
}

// TestCompact: a value ParseQuantity keeps in decimal form comes back in int64 form, with
// its text, its value and its format unchanged, and compares and adds without allocating;
// values beyond an int64 mantissa are returned as they are.
func TestCompact(t *testing.T) {
	texts := []string{"100Ti", "2Pi", "7Ei", "123Gi", "1500m", "100k", "1e3", "0.5", "1.5Gi", "12345678901234567890",
		"9223372036854775807", "1n", "100Mi", "0", "-100Ti", "5e-3", "1e18", "3.25Ti"}
	for i := 0; i < 200; i++ {
		texts = append(texts, fmt.Sprintf("%d%s", 1+i*7919%100000, []string{"Ti", "Pi", "Gi", "", "m", "k", "M", "T", "P", "E", "Ei"}[i%11]))
	}
	for _, text := range texts {
		q, err := resource.ParseQuantity(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		c := Compact(q)
		if c.String() != q.String() || Cmp(c, q) != 0 || c.Format != q.Format {
			t.Errorf("Compact(%s) = %s (%s), want %s (%s)", text, c.String(), c.Format, q.String(), q.Format)
		}
		if b, err := c.MarshalJSON(); err != nil || string(b) != `"`+q.String()+`"` {
			t.Errorf("Compact(%s) marshals to %s (%v)", text, b, err)
		}
	}
	big := resource.MustParse("100Ti")
	c := Compact(big)
	used := resource.MustParse("128Mi")
	if n := testing.AllocsPerRun(100, func() { _ = Cmp(used, c) }); n != 0 {
		v, ok := c.AsInt64()
		t.Errorf("Cmp against a compacted 100Ti allocates %v times (AsInt64 %d %v)", n, v, ok)
	}
	huge := resource.MustParse("12345678901234567890e10")
	if h := Compact(huge); h.String() != huge.String() {
		t.Errorf("Compact of a value beyond an int64 mantissa changed it: %s", h.String())
	}
}
