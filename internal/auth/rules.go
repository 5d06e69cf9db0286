package auth

import (
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// RuleAllows reports whether one PolicyRule allows a, with upstream's semantics: "*" matches
// any verb, group, resource or path; "resource/subresource" names a subresource and
// "*/subresource" that subresource of every resource; resourceNames restrict by name (a
// rule with resourceNames never allows a request without a name, such as list or create);
// nonResourceURLs match a path exactly or by a trailing "*" prefix.
func RuleAllows(rule *rbacv1.PolicyRule, a *Attributes) bool {
	if !matches(rule.Verbs, a.Verb) {
		return false
	}
	if !a.ResourceRequest {
		for _, u := range rule.NonResourceURLs {
			if u == "*" || u == a.Path || (strings.HasSuffix(u, "*") && strings.HasPrefix(a.Path, strings.TrimSuffix(u, "*"))) {
				return true
			}
		}
		return false
	}
	if !matches(rule.APIGroups, a.APIGroup) || !resourceMatches(rule.Resources, a.Resource, a.Subresource) {
		return false
	}
	if len(rule.ResourceNames) == 0 {
		return true
	}
	return a.Name != "" && slices.Contains(rule.ResourceNames, a.Name)
}

// RulesAllow reports whether any of rules allows a.
func RulesAllow(rules []rbacv1.PolicyRule, a *Attributes) bool {
	for i := range rules {
		if RuleAllows(&rules[i], a) {
			return true
		}
	}
	return false
}

func matches(list []string, v string) bool {
	for _, s := range list {
		if s == "*" || s == v {
			return true
		}
	}
	return false
}

func resourceMatches(list []string, resource, sub string) bool {
	combined := resource
	if sub != "" {
		combined = resource + "/" + sub
	}
	for _, r := range list {
		switch {
		case r == "*" || r == combined:
			return true
		case sub != "" && r == "*/"+sub:
			return true
		}
	}
	return false
}
