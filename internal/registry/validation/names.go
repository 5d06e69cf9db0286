package validation

import (
	"strings"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The name checks below answer what upstream's regular expressions answer, without them:
// every pod's name, tolerations and resource names pass through them, and the regular
// expressions were 3% of a create's CPU (docs/benchmarks.md). Upstream's functions still
// write the messages of a name that fails (TestNamePredicatesMatchUpstream).

// isDNS1123Label: 1–63 of [a-z0-9-], beginning and ending alphanumeric.
func isDNS1123Label(s string) bool {
	return len(s) <= validation.DNS1123LabelMaxLength && isDNS1123Part(s)
}

// isDNS1123Subdomain: at most 253 bytes of dot-separated DNS-1123 parts (each of any
// length, as upstream's expression has it).
func isDNS1123Subdomain(s string) bool {
	if len(s) > validation.DNS1123SubdomainMaxLength {
		return false
	}
	for {
		i := strings.IndexByte(s, '.')
		if i < 0 {
			return isDNS1123Part(s)
		}
		if !isDNS1123Part(s[:i]) {
			return false
		}
		s = s[i+1:]
	}
}

// isDNS1123Part: one or more of [a-z0-9-], beginning and ending alphanumeric.
func isDNS1123Part(s string) bool {
	if s == "" || !isLowerAlnum(s[0]) || !isLowerAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isLowerAlnum(c) && c != '-' {
			return false
		}
	}
	return true
}

// isQualifiedName: a name part, optionally after a DNS-1123 subdomain prefix and "/".
func isQualifiedName(s string) bool {
	prefix, name, found := strings.Cut(s, "/")
	if !found {
		return isQualifiedNamePart(s)
	}
	return prefix != "" && isDNS1123Subdomain(prefix) && isQualifiedNamePart(name)
}

// isQualifiedNamePart: 1–63 of [A-Za-z0-9-_.], beginning and ending alphanumeric.
func isQualifiedNamePart(s string) bool {
	if s == "" || len(s) > qualifiedNameMaxLength || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func isLowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

func isAlnum(c byte) bool { return isLowerAlnum(c) || 'A' <= c && c <= 'Z' }

// labelName is upstream's ValidateLabelName.
func labelName(v string, p *field.Path) field.ErrorList {
	if isQualifiedName(v) {
		return nil
	}
	return metav1validation.ValidateLabelName(v, p)
}

// qualifiedNameMaxLength is the longest name part of a qualified name (upstream's
// qualifiedNameMaxLength, unexported there).
const qualifiedNameMaxLength = 63
