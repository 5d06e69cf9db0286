// Package quantity bounds resource.Quantity values and compares and combines them in time
// linear in their digits, whatever their exponent.
//
// resource.Quantity keeps a value as an int64 mantissa with a decimal scale, or as an
// inf.Dec (a big.Int with a scale), and its Cmp, Add and Sub align the two operands' scales
// by multiplying by a power of ten: comparing 1 with 1e10000000 builds a ten-million-digit
// number (seconds of CPU), 1 with 1e1000000000 a billion-digit one (minutes, gigabytes).
// ParseQuantity itself is quadratic in the digits of its text and linear in the size of a
// negative exponent ("1e-1000000000" stalls it).
//
// The bound. A served quantity's value must lie in [-(2^63-1), 2^63-1]: the largest value
// Quantity.Value() returns exactly. The bound is on the exact value in the quantity's base
// units (cores, bytes, objects), as the text writes it, before ParseQuantity rounds it up
// to 1n or caps it: "9223372036854775807", "9223372036854775807000m" and "7Ei" are in
// bound; "9223372036854775808", "9223372036854775807001m", "9.3E", "9300P" and "8Ei" (2^63
// exactly; ParseQuantity would silently cap a binary-suffixed value at 2^63-1, upstream
// stores "16Ei" as 9223372036854775807) are not. Within the bound, every value has at most
// 19 integer digits and 9 fractional ones (ParseQuantity rounds to 1n), so every
// comparison and sum of in-bound values, and of sums of them, is cheap. MilliValue can still
// overflow above 9223372036854775807m (upstream's own limit for cpu, which upstream validation
// does not refuse either); the bound is at unit scale so that memory and storage values up
// to 8Ei-1 stay valid as upstream accepts them. Above the bound a value is refused with
// "must be less than or equal to 9223372036854775807" (below its negative, with "must be
// greater than or equal to -9223372036854775807").
//
// Texts. Decoders call CheckText on the text of every quantity field before ParseQuantity
// sees it, and refuse texts whose parsing alone would be expensive or whose value is beyond
// the bound: a text of more than MaxTextLength bytes ("Too long: may not be more than 64
// bytes"), a text whose exact value is beyond the bound, in any form (the bound's
// messages; decided from the position of the leading digit, and, for a text at 10^18 or
// above or with a binary suffix, by exact arithmetic on its few dozen digits), a non-zero
// one below 10^-64 in magnitude (which ParseQuantity would round up to 1n, at a cost
// growing with the exponent; "must be 0 or at least 1e-64 in absolute value"), and a zero
// written with an exponent beyond ±128 ("must have an exponent between -128 and 128":
// Quantity.Value would scale by it). Texts ParseQuantity refuses anyway are left to it.
// Values that reach validation without a text (stored before the bound) are checked by
// Check, on the parsed value.
//
// Comparison and arithmetic. Cmp, Add and Sub are exact whenever the exact result costs
// time linear in the operands' digits: always for in-bound values and their sums. Values
// stored before the bound existed (written straight to etcd, say hard: 1e10000000) are
// compared by magnitude (digits and exponent) before any scaling, so they cost what a
// normal value costs. Adding two values whose exponents are so far apart that the exact
// sum would need more than MaxExactGap digits beyond the operands' own gives the operand
// of larger magnitude: such a value behaves as an infinity that absorbs the other.
//
// Invariants:
//   - Pure functions: no IO, no package-level state; arguments are never modified, every
//     returned Quantity is a fresh copy.
//   - No function here calls a Quantity method that scales by a power of ten taken from
//     an exponent before that exponent has been bounded.
//   - Imports only k8s.io/apimachinery, so registry, admission
//     and quota packages may all import it.
package quantity
