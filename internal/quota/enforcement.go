package quota

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Enforcement modes and warning thresholds are quotad's own, set per quota by annotation
// (a ResourceQuota's or a ClusterResourceQuota's metadata.annotations).
const (
	// EnforcementAnnotation selects what a quota does with a write that would take usage
	// above hard: Enforce (the default) refuses it with upstream's 403, Warn admits it and
	// gives the client a Warning, Audit admits it silently and records it in the audit log
	// and metrics. Usage stays exact in every mode; used may pass hard in Warn and Audit.
	EnforcementAnnotation = "quota.quotad.io/enforcement"
	// WarnAtAnnotation sets thresholds, as percentages of hard: "80%" for every resource of
	// the quota, "requests.cpu=90%" for one, or both comma-separated ("80%,requests.cpu=90%";
	// a resource's own threshold wins). A write that leaves usage of a resource it raised
	// above its threshold succeeds with a Warning.
	WarnAtAnnotation = "quota.quotad.io/warn-at"
)

// Enforcement is a quota's enforcement mode.
type Enforcement string

// The enforcement modes.
const (
	Enforce Enforcement = "Enforce"
	Warn    Enforcement = "Warn"
	Audit   Enforcement = "Audit"
)

// EnforcementOf returns the mode annotations select: Enforce when the annotation is absent
// or (a value stored before validation knew it) not one of the modes, so a quota never
// stops enforcing by a typo.
func EnforcementOf(annotations map[string]string) Enforcement {
	switch m := Enforcement(annotations[EnforcementAnnotation]); m {
	case Warn, Audit:
		return m
	}
	return Enforce
}

// WarnAt is a quota's parsed warn-at annotation: percentages of hard.
type WarnAt struct {
	// All applies to every resource without its own threshold; 0 is none.
	All int64
	// PerResource holds the thresholds of named resources.
	PerResource map[corev1.ResourceName]int64
}

// For returns the threshold of name in percent, 0 for none.
func (w WarnAt) For(name corev1.ResourceName) int64 {
	if p, ok := w.PerResource[name]; ok {
		return p
	}
	return w.All
}

// Empty reports whether no threshold is set.
func (w WarnAt) Empty() bool { return w.All == 0 && len(w.PerResource) == 0 }

// WarnAtOf parses the warn-at annotation of annotations; an absent or invalid value (one
// stored before validation knew it) sets no threshold.
func WarnAtOf(annotations map[string]string) WarnAt {
	s, ok := annotations[WarnAtAnnotation]
	if !ok {
		return WarnAt{}
	}
	w, err := ParseWarnAt(s)
	if err != nil {
		return WarnAt{}
	}
	return w
}

// ParseWarnAt parses a warn-at value: comma-separated items, each "<p>%" (every resource)
// or "<resource name>=<p>%", p an integer from 1 to 100. At most one item without a name,
// and each name once.
func ParseWarnAt(s string) (WarnAt, error) {
	var w WarnAt
	if strings.TrimSpace(s) == "" {
		return w, fmt.Errorf("must be a percentage such as \"80%%\" or a list such as \"80%%,requests.cpu=90%%\"")
	}
	items := strings.Split(s, ",")
	if len(items) > 64 {
		return WarnAt{}, fmt.Errorf("must have at most 64 items")
	}
	for _, item := range items {
		item = strings.TrimSpace(item)
		name, pct, named := strings.Cut(item, "=")
		if !named {
			pct, name = name, ""
		}
		p, err := parsePercent(strings.TrimSpace(pct))
		if err != nil {
			return WarnAt{}, fmt.Errorf("%q: %v", item, err)
		}
		if !named {
			if w.All != 0 {
				return WarnAt{}, fmt.Errorf("%q: only one threshold may apply to every resource", item)
			}
			w.All = p
			continue
		}
		rn := corev1.ResourceName(strings.TrimSpace(name))
		if errs := ValidateResourceQuotaResourceName(rn, field.NewPath("name")); len(errs) > 0 || rn == "" {
			return WarnAt{}, fmt.Errorf("%q: not a quota resource name", item)
		}
		if _, dup := w.PerResource[rn]; dup {
			return WarnAt{}, fmt.Errorf("%q: %s has more than one threshold", item, rn)
		}
		if w.PerResource == nil {
			w.PerResource = map[corev1.ResourceName]int64{}
		}
		w.PerResource[rn] = p
	}
	return w, nil
}

// parsePercent parses "<1..100>%".
func parsePercent(s string) (int64, error) {
	digits, ok := strings.CutSuffix(s, "%")
	if !ok || digits == "" || len(digits) > 3 {
		return 0, fmt.Errorf("must be a percentage from 1%% to 100%%")
	}
	p, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || p < 1 || p > 100 {
		return 0, fmt.Errorf("must be a percentage from 1%% to 100%%")
	}
	return p, nil
}

// String renders w as the annotation would hold it, names sorted.
func (w WarnAt) String() string {
	var parts []string
	if w.All != 0 {
		parts = append(parts, strconv.FormatInt(w.All, 10)+"%")
	}
	names := make([]string, 0, len(w.PerResource))
	for n := range w.PerResource {
		names = append(names, string(n))
	}
	slices.Sort(names)
	for _, n := range names {
		parts = append(parts, n+"="+strconv.FormatInt(w.PerResource[corev1.ResourceName(n)], 10)+"%")
	}
	return strings.Join(parts, ",")
}

// ValidateQuotaAnnotations validates quotad's own annotations of a quota's metadata
// (Unsupported value for an unknown mode, Invalid value for a malformed threshold).
func ValidateQuotaAnnotations(annotations map[string]string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if v, ok := annotations[EnforcementAnnotation]; ok {
		switch Enforcement(v) {
		case Enforce, Warn, Audit:
		default:
			errs = append(errs, field.NotSupported(fldPath.Key(EnforcementAnnotation), v, []string{string(Audit), string(Enforce), string(Warn)}))
		}
	}
	if v, ok := annotations[WarnAtAnnotation]; ok {
		if _, err := ParseWarnAt(v); err != nil {
			errs = append(errs, field.Invalid(fldPath.Key(WarnAtAnnotation), v, err.Error()))
		}
	}
	return errs
}

// WarnAtWarnings returns the warnings for a quota's warn-at annotation that is valid but
// names a resource hard does not limit (such a threshold would silently never warn):
// "quota.quotad.io/warn-at: limits.memory is not in the quota's hard limits; its threshold
// never applies", one per name, sorted.
func WarnAtWarnings(annotations map[string]string, hard corev1.ResourceList) []string {
	if _, ok := annotations[WarnAtAnnotation]; !ok {
		return nil
	}
	w := WarnAtOf(annotations)
	var names []string
	for n := range w.PerResource {
		if _, ok := hard[n]; !ok {
			names = append(names, string(n))
		}
	}
	slices.Sort(names)
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, WarnAtAnnotation+": "+n+" is not in the quota's hard limits; its threshold never applies")
	}
	return out
}
