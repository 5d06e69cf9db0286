package defaults

import (
	"regexp"
	"strings"
)

// Image reference grammar of the distribution/reference package, as used by
// upstream's parsers.ParseImageName to pick the default pull policy.
var (
	domainComponent = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	domainRe        = regexp.MustCompile(`^(?:` + domainComponent + `(?:\.` + domainComponent + `)*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?$`)
	pathComponentRe = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*$`)
	tagRe           = regexp.MustCompile(`^[\w][\w.-]{0,127}$`)
	digestRe        = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$`)
	hex64Re         = regexp.MustCompile(`^[a-f0-9]{64}$`)
)

// digestHexLen is the hex length of the digest algorithms upstream accepts.
var digestHexLen = map[string]int{"sha256": 64, "sha384": 96, "sha512": 128}

// imageTag returns the tag ParseImageName would report for image: the
// explicit tag, "latest" when neither tag nor digest is given, and "" for a
// digest-only reference or a reference that does not parse.
func imageTag(image string) string {
	name, digest, hasDigest := strings.Cut(image, "@")
	if hasDigest && !validDigest(digest) {
		return ""
	}
	tag := ""
	if i := strings.LastIndex(name, ":"); i >= 0 && !strings.Contains(name[i+1:], "/") {
		tag = name[i+1:]
		name = name[:i]
		if !tagRe.MatchString(tag) {
			return ""
		}
	}
	if !validRepository(name) {
		return ""
	}
	if tag == "" && !hasDigest {
		return "latest"
	}
	return tag
}

func validDigest(d string) bool {
	if !digestRe.MatchString(d) {
		return false
	}
	alg, hex, _ := strings.Cut(d, ":")
	n, ok := digestHexLen[alg]
	return ok && len(hex) == n && strings.ToLower(hex) == hex
}

func validRepository(name string) bool {
	if name == "" || len(name) > 255 || hex64Re.MatchString(name) {
		return false
	}
	// The first component is a domain when it looks like one (a dot, a port
	// or "localhost"), as in the reference normalization.
	if first, rest, ok := strings.Cut(name, "/"); ok && (strings.ContainsAny(first, ".:") || first == "localhost" || strings.ToLower(first) != first) {
		if !domainRe.MatchString(first) {
			return false
		}
		name = rest
	}
	for p := range strings.SplitSeq(name, "/") {
		if !pathComponentRe.MatchString(p) {
			return false
		}
	}
	return true
}
