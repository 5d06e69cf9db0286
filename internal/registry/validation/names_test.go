package validation

import (
	"math/rand/v2"
	"strings"
	"testing"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestNamePredicatesMatchUpstream: the hand-written name checks accept exactly what
// upstream's regular expressions accept, on chosen edge cases and on random strings over
// the bytes that matter, at lengths around the limits.
func TestNamePredicatesMatchUpstream(t *testing.T) {
	checks := []struct {
		name     string
		fast     func(string) bool
		upstream func(string) bool
	}{
		{"DNS1123Label", isDNS1123Label, func(s string) bool { return len(validation.IsDNS1123Label(s)) == 0 }},
		{"DNS1123Subdomain", isDNS1123Subdomain, func(s string) bool { return len(validation.IsDNS1123Subdomain(s)) == 0 }},
		{"QualifiedName", isQualifiedName, func(s string) bool { return len(validation.IsQualifiedName(s)) == 0 }},
		{"LabelName", func(s string) bool { return len(labelName(s, field.NewPath("k"))) == 0 },
			func(s string) bool { return len(metav1validation.ValidateLabelName(s, field.NewPath("k"))) == 0 }},
	}
	cases := []string{"", "a", "A", "-", "a-", "-a", "a.b", "a..b", ".a", "a.", "a/b", "/a", "a/", "a/b/c",
		"example.com/key", "Example.com/key", "node.kubernetes.io/not-ready", "a_b", "_a", "a_", "a.b_c-d",
		"é", "a\x00", strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 253),
		strings.Repeat("a", 254), strings.Repeat("a.", 126) + "a", strings.Repeat("a", 253) + "/b",
		strings.Repeat("a", 254) + "/b", "a/" + strings.Repeat("b", 63), "a/" + strings.Repeat("b", 64)}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abzAZ09-._/é\x00 "
	for range 200000 {
		n := r.IntN(8)
		switch r.IntN(4) {
		case 0:
			n = 60 + r.IntN(8)
		case 1:
			n = 250 + r.IntN(8)
		}
		var b strings.Builder
		for range n {
			if r.IntN(3) == 0 {
				b.WriteByte(alphabet[r.IntN(len(alphabet))])
			} else {
				b.WriteByte("abc019"[r.IntN(6)])
			}
		}
		cases = append(cases, b.String())
	}
	for _, c := range checks {
		for _, s := range cases {
			if got, want := c.fast(s), c.upstream(s); got != want {
				t.Errorf("%s(%q) = %v, upstream %v", c.name, s, got, want)
			}
		}
	}
}
