package selector

import (
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

// sameAsApimachinery checks that Parse and labels.Parse agree on text: the same
// error message, or selectors compiled to the same rules.
func sameAsApimachinery(t *testing.T, text string) {
	t.Helper()
	want, wantErr := labels.Parse(text)
	got, gotErr := Parse(text, "")
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%q: labels.Parse error %v, Parse error %v", text, wantErr, gotErr)
	}
	if wantErr != nil {
		if wantErr.Error() != gotErr.Error() {
			t.Fatalf("%q: messages differ:\nlabels.Parse:   %s\nParseSelectors: %s", text, wantErr, gotErr)
		}
		return
	}
	if want.Empty() != got.Empty() {
		t.Fatalf("%q: Empty %v, want %v", text, got.Empty(), want.Empty())
	}
	compiled := New(want, nil)
	if !reflect.DeepEqual(compiled.labels, got.labels) {
		t.Fatalf("%q: compiled rules differ:\nfrom labels.Parse: %+v\nParseSelectors:    %+v", text, compiled.labels, got.labels)
	}
	if !got.Empty() && got.Label.String() != want.String() {
		t.Fatalf("%q: String() %q, want %q", text, got.Label.String(), want.String())
	}
}

// TestLabelParseAsApimachinery: the selectors users write, and the corners of the grammar.
func TestLabelParseAsApimachinery(t *testing.T) {
	long := strings.Repeat("a", 63)
	cases := []string{
		"", " ", "\t\r\n", "a", "!a", "a,b", "a=b", "a==b", "a!=b", "a in (b)", "a notin (b,c)",
		"a in ()", "a in (,)", "a in (b,,c)", "a in (,b)", "a in (b,)", "a in (,,)", "a=", "a!=", "a==",
		"a>1", "a<-1", "a>b", "a>", "a<99999999999999999999", "a gt 1", "x in (foo,,baz),y,z notin ()",
		"environment in (production, qa)", "tier notin (frontend, backend)", "partition", "!partition",
		"app=nginx,tier!=db", "example.com/app=x", "Example.com/app=x", "/app=x", "a/b/c=x", "a/=x",
		long + "=x", long + "a=x", "a=" + long, "a=" + long + "b", "a=-b", "a=b-", "a=b_c.d", "a=é",
		"in in (in)", "notin notin (notin)", "in", "notin", "a in in", "a in (in, notin)", "a (b)",
		"a,", ",a", "a,,b", "a b", "a=b c", "a=b,", "!", "!!a", "!a=b", "! a", "a!", "a=(b)", "a in b",
		"a in (b", "a in (b c)", "a in (b))", "a=b)", "(", ")", ",", "=", "==", "!=", "<", ">", "a<=1",
		"a>=1", "a===b", "a!==b", "a=!b", "a=\x00b", "a\x00b", "a\x00", "\x00a", "a=b\x00,c", "a \x00b",
		"a in (b\x00c)", "a=\x00", "a==\x00=b", "a!=\x00b", "a in (b,\x00c)", "a in (\x00)", "a,\x00b",
		"a=1,a>0,a<2", "a in (x,y),a in (y,z)", "a,!a", "a notin (x),a=x", "a>1,a>2,a<5,a<4", "a>01",
		"a=" + strings.Repeat("b", 64), strings.Repeat("k", 64), "a.b-c_d/e=f", "a_b.com/c=d",
		"-a=b", "a-=b", "1=2", "A=B", "ü=1", "a/b=c,d/e!=f,!g/h", "a in (b),c", "a in (b) c",
	}
	for _, c := range cases {
		sameAsApimachinery(t, c)
	}
}

// selectorPieces are what random selectors are made of.
var selectorPieces = []string{
	"a", "b", "key", "app", "x/y", "example.com/k", "Ex.com/k", "in", "notin", "(", ")", ",", ",", "!",
	"=", "==", "!=", ">", "<", " ", " ", "\t", "\x00", "1", "-1", "007", "é", "/", ".", "-", "_",
	"v1.2", strings.Repeat("a", 63), strings.Repeat("b", 64), "9223372036854775808",
}

func randomSelector(r *rand.Rand) string {
	var b strings.Builder
	for n := r.Intn(12); n >= 0; n-- {
		b.WriteString(selectorPieces[r.Intn(len(selectorPieces))])
	}
	return b.String()
}

// TestLabelParseAsApimachineryRandom compares the two parsers on random selectors.
func TestLabelParseAsApimachineryRandom(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for range 20000 {
		sameAsApimachinery(t, randomSelector(r))
	}
}

// FuzzLabelParse: go test -fuzz FuzzLabelParse ./internal/registry/selector
func FuzzLabelParse(f *testing.F) {
	r := rand.New(rand.NewSource(2))
	for range 64 {
		f.Add(randomSelector(r))
	}
	f.Add("x in (foo,,baz),y,z notin ()")
	f.Fuzz(func(t *testing.T, text string) {
		sameAsApimachinery(t, text)
	})
}

// BenchmarkParseLongSelector compares the parsers on an 890 KB selector.
func BenchmarkParseLongSelector(b *testing.B) {
	// The shape of quotabench's long selectors: one `in` of about 130,000 values.
	var sb strings.Builder
	sb.WriteString("app in (x")
	for i := 0; sb.Len() < 890_000; i++ {
		sb.WriteString(",v")
		sb.WriteString(strconv.Itoa(i))
	}
	sb.WriteString(")")
	text := sb.String()
	b.Run("apimachinery", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l, err := labels.Parse(text)
			if err != nil {
				b.Fatal(err)
			}
			New(l, nil)
		}
	})
	b.Run("Parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Parse(text, ""); err != nil {
				b.Fatal(err)
			}
		}
	})
}
