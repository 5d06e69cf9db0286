package deploy

import (
	"slices"
	"sort"
	"strings"
	"testing"
)

// promqlKeywords are PromQL's operators and modifiers spelled as words and its aggregation
// operators (which, unlike functions, may be followed by by/without before their
// parenthesis).
var promqlKeywords = map[string]bool{
	"and": true, "or": true, "unless": true, "atan2": true, "bool": true, "offset": true,
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"sum": true, "avg": true, "min": true, "max": true, "count": true, "group": true, "stddev": true,
	"stdvar": true, "topk": true, "bottomk": true, "quantile": true, "count_values": true,
	"limitk": true, "limit_ratio": true, "inf": true, "nan": true,
}

// labelListKeywords are followed by a parenthesized list of label names.
var labelListKeywords = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

// metricNames returns the metric names an expression selects, sorted and unique: the
// identifiers outside label matchers ({...}), range and subquery brackets ([...]), strings
// and comments that are neither keywords, nor functions (followed by "("), nor the label
// lists of by/without/on/ignoring/group_left/group_right, nor numbers, nor Grafana
// variables ($name, ${name}); plus the names given by {__name__="..."}.
func metricNames(expr string) []string {
	var out []string
	src := []rune(expr)
	n := len(src)
	isIdentStart := func(r rune) bool { return r == '_' || r == ':' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') }
	isIdent := func(r rune) bool { return isIdentStart(r) || (r >= '0' && r <= '9') }
	skipSpace := func(i int) int {
		for i < n && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
			i++
		}
		return i
	}
	// skipString returns the index after the string literal starting at i.
	skipString := func(i int) int {
		q := src[i]
		for i++; i < n; i++ {
			if src[i] == '\\' && q != '`' {
				i++
				continue
			}
			if src[i] == q {
				return i + 1
			}
		}
		return n
	}
	// skipGroup returns the index after the bracketed group opening at i, strings inside
	// skipped; in a label matcher group it collects __name__ matchers.
	skipGroup := func(i int, open, close rune) int {
		depth := 0
		start := i
		for ; i < n; i++ {
			switch src[i] {
			case '"', '\'', '`':
				i = skipString(i) - 1
			case open:
				depth++
			case close:
				depth--
				if depth == 0 {
					if open == '{' {
						out = append(out, nameMatchers(string(src[start:i+1]))...)
					}
					return i + 1
				}
			}
		}
		return n
	}
	for i := 0; i < n; {
		r := src[i]
		switch {
		case r == '#':
			for i < n && src[i] != '\n' {
				i++
			}
		case r == '"' || r == '\'' || r == '`':
			i = skipString(i)
		case r == '{':
			i = skipGroup(i, '{', '}')
		case r == '[':
			i = skipGroup(i, '[', ']')
		case r == '$':
			// A Grafana variable: $name or ${name...}.
			i++
			if i < n && src[i] == '{' {
				i = skipGroup(i, '{', '}')
				continue
			}
			for i < n && isIdent(src[i]) {
				i++
			}
		case r >= '0' && r <= '9' || (r == '.' && i+1 < n && src[i+1] >= '0' && src[i+1] <= '9'):
			// A number or a duration (5m, 1h30m, 0x1f, 1e3): digits, letters and dots.
			for i < n && (isIdent(src[i]) || src[i] == '.') {
				i++
			}
		case isIdentStart(r):
			j := i
			for j < n && isIdent(src[j]) {
				j++
			}
			word := string(src[i:j])
			k := skipSpace(j)
			switch {
			case labelListKeywords[strings.ToLower(word)]:
				if k < n && src[k] == '(' {
					j = skipGroup(k, '(', ')')
				}
			case promqlKeywords[strings.ToLower(word)]:
			case k < n && src[k] == '(':
				// A function call.
			default:
				out = append(out, word)
			}
			i = j
		default:
			i++
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// nameMatchers returns the values of __name__="..." matchers in a label matcher group.
func nameMatchers(group string) []string {
	var out []string
	rest := group
	for {
		i := strings.Index(rest, "__name__")
		if i < 0 {
			return out
		}
		rest = strings.TrimLeft(rest[i+len("__name__"):], " ")
		if !strings.HasPrefix(rest, "=") || strings.HasPrefix(rest, "=~") {
			continue
		}
		rest = strings.TrimLeft(rest[1:], " ")
		if len(rest) > 0 && (rest[0] == '"' || rest[0] == '\'') {
			if j := strings.IndexByte(rest[1:], rest[0]); j >= 0 {
				out = append(out, rest[1:1+j])
				rest = rest[1+j:]
			}
		}
	}
}

// TestMetricNames pins the lexer on the constructs the assets use.
func TestMetricNames(t *testing.T) {
	tests := []struct {
		expr string
		want []string
	}{
		{`up`, []string{"up"}},
		{`rate(http_requests_total{job="api", code=~"5.."}[5m])`, []string{"http_requests_total"}},
		{`sum by (namespace, le) (rate(a_bucket{x="{y}"}[$__rate_interval]))`, []string{"a_bucket"}},
		{`sum(rate(a[5m])) by (le) / ignoring (type) group_left (foo) b offset 1h`, []string{"a", "b"}},
		{`histogram_quantile(0.99, sum without (instance) (rate(x_bucket{verb!~"WATCH|CONNECT"}[1h30m:1m])))`, []string{"x_bucket"}},
		{`a{type="used"} / ignoring(type) (a{type="hard"} > 0) > 0.9`, []string{"a"}},
		{`sum(increase(r[30m])) > 0 or sum by (ns) (r unless r offset 30m)`, []string{"r"}},
		{`x and on (instance, job) y == bool 1e3`, []string{"x", "y"}},
		{`topk(15, m:ratio{namespace=~"$namespace"}) or vector(0)`, []string{"m:ratio"}},
		{`{__name__="via_name", job="j"} + label_replace(z, "dst", "$1", "src", "(.*)")`, []string{"via_name", "z"}},
		{"sum(a) # a comment naming not_a_metric\n+ b", []string{"a", "b"}},
		{`count_values("v", c) + avg(d) + quantile(0.5, e) + ${var:raw} + f`, []string{"c", "d", "e", "f"}},
		{`-Inf + NaN + 0x1F + .5 + g`, []string{"g"}},
	}
	for _, tc := range tests {
		if got := metricNames(tc.expr); !slices.Equal(got, tc.want) {
			t.Errorf("metricNames(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}
