package rbacescalation

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	rbacvalidation "k8s.io/component-helpers/auth/rbac/validation"
)

// Covers reports whether owner's rules grant everything servant's rules grant, and the
// single-verb, single-resource rules (BreakdownRule) that they do not: upstream's
// k8s.io/component-helpers/auth/rbac/validation.Covers.
func Covers(owner, servant []rbacv1.PolicyRule) (bool, []rbacv1.PolicyRule) {
	return rbacvalidation.Covers(owner, servant)
}

// compact merges rules of one group and one resource (and at most one name) that differ
// only in their verbs, as upstream's CompactRules does for its messages.
func compact(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	type key struct {
		group, resource, name string
		named                 bool
	}
	var out []rbacv1.PolicyRule
	simple := map[key]*rbacv1.PolicyRule{}
	var order []key
	for _, r := range rules {
		if len(r.ResourceNames) > 1 || len(r.NonResourceURLs) > 0 || len(r.APIGroups) != 1 || len(r.Resources) != 1 ||
			!reflect.DeepEqual(&rbacv1.PolicyRule{APIGroups: r.APIGroups, Resources: r.Resources, Verbs: r.Verbs, ResourceNames: r.ResourceNames}, &r) {
			out = append(out, r)
			continue
		}
		k := key{group: r.APIGroups[0], resource: r.Resources[0]}
		if len(r.ResourceNames) == 1 {
			k.name, k.named = r.ResourceNames[0], true
		}
		if have, ok := simple[k]; ok {
			have.Verbs = append(have.Verbs, r.Verbs...)
			continue
		}
		simple[k] = r.DeepCopy()
		order = append(order, k)
	}
	for _, k := range order {
		out = append(out, *simple[k])
	}
	return out
}

// compactString is upstream's CompactString: the rule's non-empty fields, each %q-quoted.
func compactString(r rbacv1.PolicyRule) string {
	var parts []string
	if len(r.APIGroups) > 0 {
		parts = append(parts, fmt.Sprintf("APIGroups:%q", r.APIGroups))
	}
	if len(r.Resources) > 0 {
		parts = append(parts, fmt.Sprintf("Resources:%q", r.Resources))
	}
	if len(r.NonResourceURLs) > 0 {
		parts = append(parts, fmt.Sprintf("NonResourceURLs:%q", r.NonResourceURLs))
	}
	if len(r.ResourceNames) > 0 {
		parts = append(parts, fmt.Sprintf("ResourceNames:%q", r.ResourceNames))
	}
	if len(r.Verbs) > 0 {
		parts = append(parts, fmt.Sprintf("Verbs:%q", r.Verbs))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// missingText lists the missing rules compacted, one per line, sorted and without
// duplicates.
func missingText(missing []rbacv1.PolicyRule) string {
	seen := map[string]bool{}
	var lines []string
	for _, r := range compact(missing) {
		s := compactString(r)
		if !seen[s] {
			seen[s] = true
			lines = append(lines, s)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
