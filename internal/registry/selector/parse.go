package selector

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/sets"
)

// A label selector's text may be a request line long (1 MiB). apimachinery's parser copies
// every token, builds a set per requirement, and checks each value with a regular
// expression: an 890 KB selector took a quarter of a second of a core and many megabytes
// of garbage, which the collector then took from every other request. Parse reads
// the text once, keeps its tokens as slices of it, checks keys and values by hand, and
// compiles the requirements straight into the rules of compile.go. It accepts exactly
// the texts apimachinery's labels.Parse accepts, with the same meaning, and refuses the
// others with the same message (TestLabelParseAsApimachinery, FuzzLabelParse): where a
// message depends on apimachinery's field errors, it asks apimachinery for that one
// requirement's message.

// Parse parses a label selector and a field selector as a list's query gives
// them (either may be empty), returning the compiled selector or the error labels.Parse
// or fields.ParseSelector returns.
func Parse(label, field string) (Selector, error) {
	var s Selector
	if label != "" {
		terms, err := parseLabelTerms(label)
		if err != nil {
			return Selector{}, err
		}
		if len(terms) > 0 {
			s.labels = compileLabels(terms)
			s.Label = &parsedLabels{text: label}
		} else {
			s.Label = labels.Everything()
		}
	}
	if field != "" {
		f, err := fields.ParseSelector(field)
		if err != nil {
			return Selector{}, err
		}
		s.Field = f
		if !f.Empty() {
			s.fields = compileFields(f.Requirements())
		}
	}
	return s, nil
}

// parsedLabels is the labels.Selector of a text Parse compiled: matching goes
// through the compiled rules; anything else asks apimachinery's parse of the same text,
// made once, when first asked.
type parsedLabels struct {
	text string
	once sync.Once
	sel  labels.Selector
}

func (p *parsedLabels) parsed() labels.Selector {
	p.once.Do(func() {
		sel, err := labels.Parse(p.text)
		if err != nil { // cannot happen: the text parsed
			sel = labels.Nothing()
		}
		p.sel = sel
	})
	return p.sel
}

func (p *parsedLabels) Matches(l labels.Labels) bool                { return p.parsed().Matches(l) }
func (p *parsedLabels) Empty() bool                                 { return false }
func (p *parsedLabels) String() string                              { return p.parsed().String() }
func (p *parsedLabels) Add(r ...labels.Requirement) labels.Selector { return p.parsed().Add(r...) }
func (p *parsedLabels) Requirements() (labels.Requirements, bool)   { return p.parsed().Requirements() }
func (p *parsedLabels) DeepCopySelector() labels.Selector           { return p.parsed().DeepCopySelector() }
func (p *parsedLabels) RequiresExactMatch(label string) (string, bool) {
	return p.parsed().RequiresExactMatch(label)
}

// token kinds of the label selector grammar, as apimachinery's lexer names them.
type labelToken int

const (
	tokEnd labelToken = iota
	tokClose
	tokComma
	tokNot // "!"
	tokDoubleEquals
	tokEquals
	tokGreater
	tokIdent
	tokIn
	tokLess
	tokNotEquals
	tokNotIn
	tokOpen
)

// labelLexer yields the tokens of a selector's text as apimachinery's lexer does: a NUL
// byte where a token would start ends the text; inside an identifier it ends the
// identifier and is skipped.
type labelLexer struct {
	s   string
	pos int
}

func isSelectorSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isSelectorSymbol(c byte) bool {
	switch c {
	case '=', '!', '(', ')', ',', '>', '<':
		return true
	}
	return false
}

func (l *labelLexer) next() (labelToken, string) {
	for l.pos < len(l.s) && isSelectorSpace(l.s[l.pos]) {
		l.pos++
	}
	if l.pos >= len(l.s) || l.s[l.pos] == 0 {
		l.pos = len(l.s) // nothing after the end is read again
		return tokEnd, ""
	}
	start := l.pos
	if c := l.s[start]; isSelectorSymbol(c) {
		// The longest of one symbol and the two-symbol operators "!=" and "==".
		l.pos++
		if l.pos < len(l.s) && l.s[l.pos] == '=' && (c == '!' || c == '=') {
			l.pos++
			l.skipNUL()
			if c == '!' {
				return tokNotEquals, "!="
			}
			return tokDoubleEquals, "=="
		}
		l.skipNUL()
		switch c {
		case '=':
			return tokEquals, "="
		case '!':
			return tokNot, "!"
		case '(':
			return tokOpen, "("
		case ')':
			return tokClose, ")"
		case ',':
			return tokComma, ","
		case '>':
			return tokGreater, ">"
		default:
			return tokLess, "<"
		}
	}
	for l.pos < len(l.s) {
		c := l.s[l.pos]
		if c == 0 {
			lit := l.s[start:l.pos]
			l.pos++ // the NUL ends the identifier and is skipped
			return identOrKeyword(lit)
		}
		if isSelectorSymbol(c) || isSelectorSpace(c) {
			break
		}
		l.pos++
	}
	return identOrKeyword(l.s[start:l.pos])
}

// skipNUL skips a NUL right after an operator, as apimachinery's lexer reads it there as
// the end of the operator.
func (l *labelLexer) skipNUL() {
	if l.pos < len(l.s) && l.s[l.pos] == 0 {
		l.pos++
	}
}

func identOrKeyword(lit string) (labelToken, string) {
	switch lit {
	case "in":
		return tokIn, lit
	case "notin":
		return tokNotIn, lit
	}
	return tokIdent, lit
}

// labelParser reads a selector's requirements with one token of lookahead.
type labelParser struct {
	lex    labelLexer
	tok    labelToken
	lit    string
	peeked bool
}

// asValue is a token read where values are expected: "in" and "notin" are identifiers.
func asValue(t labelToken) labelToken {
	if t == tokIn || t == tokNotIn {
		return tokIdent
	}
	return t
}

func (p *labelParser) peek() (labelToken, string) {
	if !p.peeked {
		p.tok, p.lit = p.lex.next()
		p.peeked = true
	}
	return p.tok, p.lit
}

func (p *labelParser) consume() (labelToken, string) {
	t, l := p.peek()
	p.peeked = false
	return t, l
}

// parseLabelTerms returns the requirements of a selector's text, sorted by key as
// labels.Parse sorts them.
func parseLabelTerms(text string) ([]labelTerm, error) {
	p := &labelParser{lex: labelLexer{s: text}}
	var terms []labelTerm
	for {
		t, lit := p.peek()
		switch asValue(t) {
		case tokIdent, tokNot:
			term, err := p.requirement()
			if err != nil {
				return nil, fmt.Errorf("unable to parse requirement: %v", err)
			}
			terms = append(terms, term)
			t, l := p.consume()
			switch asValue(t) {
			case tokEnd:
				return sortTerms(terms), nil
			case tokComma:
				if t2, l2 := p.peek(); asValue(t2) != tokIdent && t2 != tokNot {
					return nil, fmt.Errorf("found '%s', expected: identifier after ','", l2)
				}
			default:
				return nil, fmt.Errorf("found '%s', expected: ',' or 'end of string'", l)
			}
		case tokEnd:
			return sortTerms(terms), nil
		default:
			return nil, fmt.Errorf("found '%s', expected: !, identifier, or 'end of string'", lit)
		}
	}
}

func sortTerms(terms []labelTerm) []labelTerm {
	sort.SliceStable(terms, func(i, j int) bool { return terms[i].key < terms[j].key })
	return terms
}

// binaryOperators is apimachinery's list of the operators a key may be followed by.
var binaryOperators = strings.Join([]string{
	string(selection.In), string(selection.NotIn), string(selection.Equals), string(selection.DoubleEquals),
	string(selection.NotEquals), string(selection.GreaterThan), string(selection.LessThan),
}, ", ")

// requirement reads one requirement: [!] key [operator values].
func (p *labelParser) requirement() (labelTerm, error) {
	// 1. The key, and the operator it implies when nothing follows it.
	var op selection.Operator
	t, key := p.consume()
	if t == tokNot {
		op = selection.DoesNotExist
		t, key = p.consume()
	}
	if asValue(t) != tokIdent {
		return labelTerm{}, fmt.Errorf("found '%s', expected: identifier", key)
	}
	if !isLabelKey(key) {
		return labelTerm{}, keyError(key)
	}
	if t2, _ := p.peek(); t2 == tokEnd || t2 == tokComma {
		if op != selection.DoesNotExist {
			op = selection.Exists
		}
	}
	if op == selection.Exists || op == selection.DoesNotExist {
		return labelTerm{key: key, op: op}, nil
	}
	// 2. The operator (where "in" and "notin" are keywords).
	t, lit := p.consume()
	switch t {
	case tokIn:
		op = selection.In
	case tokEquals:
		op = selection.Equals
	case tokDoubleEquals:
		op = selection.DoubleEquals
	case tokGreater:
		op = selection.GreaterThan
	case tokLess:
		op = selection.LessThan
	case tokNotIn:
		op = selection.NotIn
	case tokNotEquals:
		op = selection.NotEquals
	default:
		return labelTerm{}, fmt.Errorf("found '%s', expected: %s", lit, binaryOperators)
	}
	// 3. The values.
	var vals []string
	var err error
	if op == selection.In || op == selection.NotIn {
		vals, err = p.valueSet()
	} else {
		vals, err = p.exactValue()
	}
	if err != nil {
		return labelTerm{}, err
	}
	// 4. Each value checked as apimachinery's NewRequirement checks them; its message
	// when one fails.
	bad := false
	for _, v := range vals {
		if !isLabelValue(v) {
			bad = true
			break
		}
	}
	if op == selection.GreaterThan || op == selection.LessThan {
		if _, err := strconv.ParseInt(vals[0], 10, 64); err != nil {
			bad = true
		}
	}
	if bad {
		_, err := labels.NewRequirement(key, op, sets.List(sets.New(vals...)))
		if err == nil { // cannot happen: apimachinery refuses what was refused here
			err = fmt.Errorf("invalid values for key %q", key)
		}
		return labelTerm{}, err
	}
	return labelTerm{key: key, op: op, vals: vals}, nil
}

// valueSet reads "(" values ")"; empty places are the empty value.
func (p *labelParser) valueSet() ([]string, error) {
	t, lit := p.consume()
	if asValue(t) != tokOpen {
		return nil, fmt.Errorf("found '%s' expected: '('", lit)
	}
	t, lit = p.peek()
	switch asValue(t) {
	case tokIdent, tokComma:
		vals, err := p.valueList()
		if err != nil {
			return nil, err
		}
		if t, _ := p.consume(); asValue(t) != tokClose {
			return nil, fmt.Errorf("found '%s', expected: ')'", lit)
		}
		return vals, nil
	case tokClose:
		p.consume()
		return []string{""}, nil
	default:
		return nil, fmt.Errorf("found '%s', expected: ',', ')' or identifier", lit)
	}
}

// valueList reads comma-separated values up to, not including, ")".
func (p *labelParser) valueList() ([]string, error) {
	var vals []string
	for {
		t, lit := p.consume()
		switch asValue(t) {
		case tokIdent:
			vals = append(vals, lit)
			switch t2, lit2 := p.peek(); asValue(t2) {
			case tokComma:
				continue
			case tokClose:
				return vals, nil
			default:
				return nil, fmt.Errorf("found '%s', expected: ',' or ')'", lit2)
			}
		case tokComma:
			// An empty value before, between or after commas.
			if len(vals) == 0 {
				vals = append(vals, "")
			}
			t2, _ := p.peek()
			if asValue(t2) == tokClose {
				return append(vals, ""), nil
			}
			if asValue(t2) == tokComma {
				vals = append(vals, "")
			}
		default:
			return nil, fmt.Errorf("found '%s', expected: ',', or identifier", lit)
		}
	}
}

// exactValue reads the one value of =, ==, !=, > and <: empty before a comma or the end.
func (p *labelParser) exactValue() ([]string, error) {
	if t, _ := p.peek(); t == tokEnd || t == tokComma {
		return []string{""}, nil
	}
	t, lit := p.consume()
	if asValue(t) == tokIdent {
		return []string{lit}, nil
	}
	return nil, fmt.Errorf("found '%s', expected: identifier", lit)
}

// keyError is apimachinery's message for a key it refuses: the message labels.Parse gives
// for that key alone (a key is one token, so it parses alone as it did in its place).
func keyError(key string) error {
	_, err := labels.Parse(key)
	if err == nil {
		return fmt.Errorf("invalid label key %q", key)
	}
	return unwrapRequirement(err)
}

// unwrapRequirement takes off the "unable to parse requirement: " that parseLabelTerms
// adds again.
func unwrapRequirement(err error) error {
	const prefix = "unable to parse requirement: "
	if msg := err.Error(); strings.HasPrefix(msg, prefix) {
		return errorText(msg[len(prefix):])
	}
	return err
}

type errorText string

func (e errorText) Error() string { return string(e) }

// isLabelValue reports what content.IsLabelValue accepts: empty, or at most 63 of
// [-A-Za-z0-9_.] beginning and ending with an alphanumeric.
func isLabelValue(v string) bool {
	if v == "" {
		return true
	}
	return len(v) <= 63 && isLabelName(v)
}

// isLabelName reports whether v (not empty) is ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9].
func isLabelName(v string) bool {
	if !isAlnum(v[0]) || !isAlnum(v[len(v)-1]) {
		return false
	}
	for i := 1; i < len(v)-1; i++ {
		c := v[i]
		if !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isLabelKey reports what content.IsLabelKey accepts: [prefix "/"] name, the name at most
// 63 characters as a label name, the prefix a DNS-1123 subdomain of at most 253.
func isLabelKey(k string) bool {
	name := k
	if i := strings.IndexByte(k, '/'); i >= 0 {
		prefix := k[:i]
		name = k[i+1:]
		if strings.IndexByte(name, '/') >= 0 || !isDNSSubdomain(prefix) {
			return false
		}
	}
	return name != "" && len(name) <= 63 && isLabelName(name)
}

// isDNSSubdomain reports whether s is at most 253 characters of dot-separated
// [a-z0-9]([-a-z0-9]*[a-z0-9])? labels.
func isDNSSubdomain(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, part := range strings.Split(s, ".") {
		if part == "" || !isLowerAlnum(part[0]) || !isLowerAlnum(part[len(part)-1]) {
			return false
		}
		for i := 1; i < len(part)-1; i++ {
			if c := part[i]; !isLowerAlnum(c) && c != '-' {
				return false
			}
		}
	}
	return true
}

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
