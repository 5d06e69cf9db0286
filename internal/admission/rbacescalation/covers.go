package rbacescalation

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Covers reports whether owner's rules grant everything servant's rules grant, and the
// single-verb, single-resource rules (upstream's BreakdownRule) that they do not.
func Covers(owner, servant []rbacv1.PolicyRule) (bool, []rbacv1.PolicyRule) {
	var uncovered []rbacv1.PolicyRule
	for _, s := range servant {
		for _, sub := range breakdown(s) {
			if !slices.ContainsFunc(owner, func(o rbacv1.PolicyRule) bool { return ruleCovers(&o, &sub) }) {
				uncovered = append(uncovered, sub)
			}
		}
	}
	return len(uncovered) == 0, uncovered
}

// breakdown splits a rule into rules of one group, resource, verb and name (or one URL and
// verb), in upstream's order.
func breakdown(r rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, g := range r.APIGroups {
		for _, res := range r.Resources {
			for _, v := range r.Verbs {
				if len(r.ResourceNames) == 0 {
					out = append(out, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{res}, Verbs: []string{v}})
					continue
				}
				for _, n := range r.ResourceNames {
					out = append(out, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{res}, Verbs: []string{v}, ResourceNames: []string{n}})
				}
			}
		}
	}
	for _, u := range r.NonResourceURLs {
		for _, v := range r.Verbs {
			out = append(out, rbacv1.PolicyRule{NonResourceURLs: []string{u}, Verbs: []string{v}})
		}
	}
	return out
}

func hasAll(set, want []string) bool {
	for _, w := range want {
		if !slices.Contains(set, w) {
			return false
		}
	}
	return true
}

// ruleCovers is upstream's: "*" in the owner covers anything; a servant "*" needs an owner
// "*"; "*/sub" covers that subresource of every resource; a URL ending in "*" covers its
// prefix.
func ruleCovers(owner, sub *rbacv1.PolicyRule) bool {
	verbs := slices.Contains(owner.Verbs, rbacv1.VerbAll) || hasAll(owner.Verbs, sub.Verbs)
	groups := slices.Contains(owner.APIGroups, rbacv1.APIGroupAll) || hasAll(owner.APIGroups, sub.APIGroups)
	names := len(owner.ResourceNames) == 0 || (len(sub.ResourceNames) > 0 && hasAll(owner.ResourceNames, sub.ResourceNames))
	return verbs && groups && names && resourcesCover(owner.Resources, sub.Resources) && urlsCover(owner.NonResourceURLs, sub.NonResourceURLs)
}

func resourcesCover(set, want []string) bool {
	if slices.Contains(set, rbacv1.ResourceAll) || hasAll(set, want) {
		return true
	}
	for _, p := range want {
		if slices.Contains(set, p) {
			continue
		}
		_, sub, ok := strings.Cut(p, "/")
		if !ok || !slices.Contains(set, "*/"+sub) {
			return false
		}
	}
	return true
}

func urlsCover(set, want []string) bool {
	for _, w := range want {
		if !slices.ContainsFunc(set, func(o string) bool {
			return o == w || (strings.HasSuffix(o, "*") && strings.HasPrefix(w, strings.TrimRight(o, "*")))
		}) {
			return false
		}
	}
	return true
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
