package selector

import (
	"strconv"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// A selector's text may be as long as a request line (1 MiB): tens of thousands of
// requirements, or one `in` of a hundred thousand values. apimachinery's selectors match
// requirement by requirement and value by value, so such a selector cost a millisecond per
// object, and a list of a few thousand objects seconds of a core. New compiles the
// requirements once into one rule per key (the intersection of its allowed values, the
// union of its refused values, the tightest bounds), so that matching an object walks the
// object's labels and the keys it must have, never the selector: a selector whose keys that
// must exist outnumber the object's labels cannot match it. The rules keep apimachinery's
// semantics requirement for requirement.

// New returns the compiled selector of l and f (either may be nil).
func New(l labels.Selector, f fields.Selector) Selector {
	s := Selector{Label: l, Field: f}
	if l != nil && !l.Empty() {
		if reqs, ok := l.Requirements(); ok {
			terms := make([]labelTerm, len(reqs))
			for i, r := range reqs {
				terms[i] = labelTerm{key: r.Key(), op: r.Operator(), vals: r.ValuesUnsorted()}
			}
			s.labels = compileLabels(terms)
		}
	}
	if f != nil && !f.Empty() {
		s.fields = compileFields(f.Requirements())
	}
	return s
}

// WithField returns s with its field selector replaced by f (compiled; the label
// selector's compiled rules are kept).
func (s Selector) WithField(f fields.Selector) Selector {
	s.Field, s.fields = f, nil
	if f != nil && !f.Empty() {
		s.fields = compileFields(f.Requirements())
	}
	return s
}

// keyRule is every requirement on one label key.
type keyRule struct {
	mustExist, mustNotExist bool
	// allowed, when set, holds the values the key may have (all of its in/= sets at once).
	allowed map[string]struct{}
	// refused holds the values it may not have (its notin/!= values).
	refused map[string]struct{}
	// gt and lt are integer bounds (value > gt, value < lt) when hasGt/hasLt.
	gt, lt       int64
	hasGt, hasLt bool
	never        bool // the requirements contradict each other, or a bound is not an integer
}

type labelMatcher struct {
	// required are the rules of keys that must exist; optional the others, by key.
	required []requiredRule
	optional map[string]*keyRule
	never    bool
}

type requiredRule struct {
	key  string
	rule *keyRule
}

// labelTerm is one requirement of a label selector: its values may repeat.
type labelTerm struct {
	key  string
	op   selection.Operator
	vals []string
}

func compileLabels(reqs []labelTerm) *labelMatcher {
	rules := map[string]*keyRule{}
	var order []string
	for _, r := range reqs {
		k := r.key
		rule := rules[k]
		if rule == nil {
			rule = &keyRule{}
			rules[k] = rule
			order = append(order, k)
		}
		vals := r.vals
		switch r.op {
		case selection.In, selection.Equals, selection.DoubleEquals:
			rule.mustExist = true
			set := make(map[string]struct{}, len(vals))
			for _, v := range vals {
				if rule.allowed == nil {
					set[v] = struct{}{}
				} else if _, ok := rule.allowed[v]; ok {
					set[v] = struct{}{}
				}
			}
			rule.allowed = set
		case selection.NotIn, selection.NotEquals:
			if rule.refused == nil {
				rule.refused = map[string]struct{}{}
			}
			for _, v := range vals {
				rule.refused[v] = struct{}{}
			}
		case selection.Exists:
			rule.mustExist = true
		case selection.DoesNotExist:
			rule.mustNotExist = true
		case selection.GreaterThan, selection.LessThan:
			rule.mustExist = true
			if len(vals) != 1 {
				rule.never = true
				break
			}
			n, err := strconv.ParseInt(vals[0], 10, 64)
			if err != nil {
				rule.never = true
				break
			}
			if r.op == selection.GreaterThan {
				if !rule.hasGt || n > rule.gt {
					rule.gt, rule.hasGt = n, true
				}
			} else if !rule.hasLt || n < rule.lt {
				rule.lt, rule.hasLt = n, true
			}
		default:
			rule.never = true
		}
	}
	m := &labelMatcher{optional: map[string]*keyRule{}}
	for _, k := range order {
		rule := rules[k]
		if rule.mustExist && rule.mustNotExist {
			m.never = true
		}
		if rule.mustExist {
			m.required = append(m.required, requiredRule{k, rule})
		} else {
			m.optional[k] = rule
		}
	}
	return m
}

// value reports whether a present value satisfies the rule.
func (r *keyRule) value(v string) bool {
	if r.never || r.mustNotExist {
		return false
	}
	if r.allowed != nil {
		if _, ok := r.allowed[v]; !ok {
			return false
		}
	}
	if _, ok := r.refused[v]; ok {
		return false
	}
	if r.hasGt || r.hasLt {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || (r.hasGt && n <= r.gt) || (r.hasLt && n >= r.lt) {
			return false
		}
	}
	return true
}

func (m *labelMatcher) matches(set map[string]string) bool {
	if m.never || len(m.required) > len(set) {
		return false
	}
	for _, rr := range m.required {
		v, ok := set[rr.key]
		if !ok || !rr.rule.value(v) {
			return false
		}
	}
	if len(m.optional) == 0 {
		return true
	}
	for k, v := range set {
		if rule, ok := m.optional[k]; ok && !rule.value(v) {
			return false
		}
	}
	return true
}

// fieldMatcher holds, per field, the value it must have and the values it may not.
type fieldMatcher struct {
	equal   map[string]string
	refused map[string]map[string]struct{}
	never   bool
}

func compileFields(reqs fields.Requirements) *fieldMatcher {
	m := &fieldMatcher{equal: map[string]string{}, refused: map[string]map[string]struct{}{}}
	for _, r := range reqs {
		switch r.Operator {
		case selection.Equals, selection.DoubleEquals:
			if v, ok := m.equal[r.Field]; ok && v != r.Value {
				m.never = true
			}
			m.equal[r.Field] = r.Value
		case selection.NotEquals:
			if m.refused[r.Field] == nil {
				m.refused[r.Field] = map[string]struct{}{}
			}
			m.refused[r.Field][r.Value] = struct{}{}
		default:
			m.never = true
		}
	}
	return m
}

func (m *fieldMatcher) matches(set fields.Set) bool {
	if m.never {
		return false
	}
	for f, v := range m.equal {
		if set.Get(f) != v {
			return false
		}
	}
	for f, refused := range m.refused {
		if _, ok := refused[set.Get(f)]; ok {
			return false
		}
	}
	return true
}
