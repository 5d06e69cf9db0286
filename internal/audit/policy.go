package audit

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/quotad/quotad/internal/auth"
)

// ErrNoRules is upstream's refusal of a policy without rules.
var ErrNoRules = errors.New("loaded illegal policy with 0 rules")

// LoadPolicyFile reads and validates an --audit-policy-file; its errors end, as
// upstream's, with ": from file <path>".
func LoadPolicyFile(path string) (*Policy, error) {
	if path == "" {
		return nil, errors.New("file path not specified")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read file path %q: %w", path, err)
	}
	p, err := ParsePolicy(b)
	if err != nil {
		return nil, fmt.Errorf("%w: from file %v", err, path)
	}
	return p, nil
}

// ParsePolicy decodes a Policy (YAML or JSON, apiVersion audit.k8s.io/v1) and validates it
// with upstream's rules.
func ParsePolicy(b []byte) (*Policy, error) {
	p := &Policy{}
	if err := yaml.Unmarshal(b, p); err != nil {
		return nil, fmt.Errorf("failed decoding: %w", err)
	}
	switch {
	case p.APIVersion == "" || p.Kind == "":
		return nil, fmt.Errorf("failed decoding: Object 'Kind' or 'apiVersion' is missing in policy (want apiVersion %s, kind %s)", APIVersion, KindPolicy)
	case p.APIVersion != APIVersion || p.Kind != KindPolicy:
		return nil, fmt.Errorf("failed decoding: no kind %q is registered for version %q (quotad reads apiVersion %s, kind %s)", p.Kind, p.APIVersion, APIVersion, KindPolicy)
	}
	if errs := validatePolicy(p); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	if len(p.Rules) == 0 {
		return nil, ErrNoRules
	}
	return p, nil
}

var (
	validLevels     = []string{string(LevelNone), string(LevelMetadata), string(LevelRequest), string(LevelRequestResponse)}
	validOmitStages = []string{string(StageRequestReceived), string(StageResponseStarted), string(StageResponseComplete), string(StagePanic)}
)

// validatePolicy is upstream's ValidatePolicy: each rule's level, non-resource URLs,
// resources and stages, and the policy's own stages.
func validatePolicy(p *Policy) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateOmitStages(p.OmitStages, field.NewPath("omitStages"))...)
	rules := field.NewPath("rules")
	for i, r := range p.Rules {
		path := rules.Index(i)
		switch r.Level {
		case LevelNone, LevelMetadata, LevelRequest, LevelRequestResponse:
		case "":
			errs = append(errs, field.Required(path.Child("level"), ""))
		default:
			errs = append(errs, field.NotSupported(path.Child("level"), r.Level, validLevels))
		}
		urls := path.Child("nonResourceURLs")
		for j, u := range r.NonResourceURLs {
			if u == "*" {
				continue
			}
			if !strings.HasPrefix(u, "/") {
				errs = append(errs, field.Invalid(urls.Index(j), u, "non-resource URL rules must begin with a '/' character"))
			}
			if u != "" && strings.ContainsRune(u[:len(u)-1], '*') {
				errs = append(errs, field.Invalid(urls.Index(j), u, "non-resource URL wildcards '*' must be the final character of the rule"))
			}
		}
		res := path.Child("resources")
		for _, gr := range r.Resources {
			if gr.Group != "" {
				if msgs := validation.NameIsDNSSubdomain(gr.Group, false); len(msgs) != 0 {
					errs = append(errs, field.Invalid(res.Child("group"), gr.Group, strings.Join(msgs, ",")))
				}
			}
			if len(gr.ResourceNames) > 0 && len(gr.Resources) == 0 {
				errs = append(errs, field.Invalid(res.Child("resourceNames"), gr.ResourceNames, "using resourceNames requires at least one resource"))
			}
		}
		errs = append(errs, validateOmitStages(r.OmitStages, path.Child("omitStages"))...)
		if len(r.NonResourceURLs) > 0 && (len(r.Resources) > 0 || len(r.Namespaces) > 0) {
			errs = append(errs, field.Invalid(urls, r.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
		}
	}
	return errs
}

func validateOmitStages(stages []Stage, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, s := range stages {
		if !slices.Contains(validOmitStages, string(s)) {
			errs = append(errs, field.Invalid(path.Index(i), string(s), "allowed stages are "+strings.Join(validOmitStages, ",")))
		}
	}
	return errs
}

// Decision is what the policy says of one request.
type Decision struct {
	Level Level
	// OmitStages are the stages not recorded: the policy's and the matching rule's.
	OmitStages []Stage
	// OmitManagedFields drops metadata.managedFields from the request and response
	// objects recorded.
	OmitManagedFields bool
}

// Omits reports whether stage s is not recorded.
func (d Decision) Omits(s Stage) bool { return slices.Contains(d.OmitStages, s) }

// Checker evaluates a Policy. It is read-only once built and safe for concurrent use.
type Checker struct {
	p Policy
}

// NewChecker returns the Checker of p; p is not kept.
func NewChecker(p *Policy) *Checker {
	c := &Checker{p: *p}
	c.p.Rules = make([]PolicyRule, len(p.Rules))
	for i, r := range p.Rules {
		r.OmitStages = unionStages(p.OmitStages, r.OmitStages)
		c.p.Rules[i] = r
	}
	return c
}

func unionStages(lists ...[]Stage) []Stage {
	var out []Stage
	for _, l := range lists {
		for _, s := range l {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// Decide returns the level of the first rule that matches a (None when none does, as
// upstream). a.User is the authenticated user; a zero User (a request that failed
// authentication) matches no rule that names users or groups.
func (c *Checker) Decide(a auth.Attributes) Decision {
	for i := range c.p.Rules {
		r := &c.p.Rules[i]
		if ruleMatches(r, &a) {
			omf := c.p.OmitManagedFields
			if r.OmitManagedFields != nil {
				omf = *r.OmitManagedFields
			}
			return Decision{Level: r.Level, OmitStages: r.OmitStages, OmitManagedFields: omf}
		}
	}
	return Decision{Level: LevelNone, OmitStages: c.p.OmitStages, OmitManagedFields: c.p.OmitManagedFields}
}

// ruleMatches is upstream's: users, then groups, then verbs; then either the resource
// selectors (namespaces, resources) or the non-resource URLs.
func ruleMatches(r *PolicyRule, a *auth.Attributes) bool {
	if len(r.Users) > 0 && (a.User.Name == "" || !slices.Contains(r.Users, a.User.Name)) {
		return false
	}
	if len(r.UserGroups) > 0 && !slices.ContainsFunc(a.User.Groups, func(g string) bool { return slices.Contains(r.UserGroups, g) }) {
		return false
	}
	if len(r.Verbs) > 0 && !slices.Contains(r.Verbs, a.Verb) {
		return false
	}
	if len(r.Namespaces) > 0 || len(r.Resources) > 0 {
		return resourceMatches(r, a)
	}
	if len(r.NonResourceURLs) > 0 {
		if a.ResourceRequest {
			return false
		}
		return slices.ContainsFunc(r.NonResourceURLs, func(spec string) bool { return pathMatches(a.Path, spec) })
	}
	return true
}

// pathMatches: "*", the exact path, or a prefix ending in "*".
func pathMatches(path, spec string) bool {
	if spec == "*" || spec == path {
		return true
	}
	return strings.HasSuffix(spec, "*") && strings.HasPrefix(path, strings.TrimRight(spec, "*"))
}

// resourceMatches matches namespaces ("" is a cluster-scoped resource) and resources:
// "pods", "pods/status", "*", "*/status" and "pods/*", limited to resourceNames when set.
func resourceMatches(r *PolicyRule, a *auth.Attributes) bool {
	if !a.ResourceRequest {
		return false
	}
	if len(r.Namespaces) > 0 && !slices.Contains(r.Namespaces, a.Namespace) {
		return false
	}
	if len(r.Resources) == 0 {
		return true
	}
	combined := a.Resource
	if a.Subresource != "" {
		combined = a.Resource + "/" + a.Subresource
	}
	for _, gr := range r.Resources {
		if gr.Group != a.APIGroup {
			continue
		}
		if len(gr.Resources) == 0 {
			return true
		}
		if len(gr.ResourceNames) > 0 && !slices.Contains(gr.ResourceNames, a.Name) {
			continue
		}
		for _, res := range gr.Resources {
			switch {
			case res == combined || res == "*":
				return true
			case a.Subresource != "" && strings.HasPrefix(res, "*/") && a.Subresource == strings.TrimPrefix(res, "*/"):
				return true
			case strings.HasSuffix(res, "/*") && a.Resource == strings.TrimSuffix(res, "/*"):
				return true
			}
		}
	}
	return false
}
