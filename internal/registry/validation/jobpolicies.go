package validation

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/convert"
)

// A Job's failure and success policies: upstream's validatePodFailurePolicy and
// validateSuccessPolicy.

const (
	maxPodFailurePolicyRules             = 20
	maxPodFailurePolicyOnExitCodesValues = 255
	maxPodFailurePolicyOnPodConditions   = 20
	maxSuccessPolicyRules                = 20
	maxSucceededIndexesLength            = 64 * 1024
)

// The values upstream lists for the policies' enums, in its (sorted) order.
var (
	podFailurePolicyActions    = []string{"Count", "FailIndex", "FailJob", "Ignore"}
	podFailurePolicyOperators  = []string{"In", "NotIn"}
	podFailurePolicyConditions = []string{"False", "True", "Unknown"}
)

// podFailurePolicy validates spec.podFailurePolicy.
func podFailurePolicy(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	rp := p.Child("rules")
	if n := len(s.PodFailurePolicy.Rules); n > maxPodFailurePolicyRules {
		errs = append(errs, field.TooMany(rp, n, maxPodFailurePolicyRules))
	}
	names := sets.New[string]()
	for _, c := range s.Template.Spec.Containers {
		names.Insert(c.Name)
	}
	for _, c := range s.Template.Spec.InitContainers {
		names.Insert(c.Name)
	}
	for i := range s.PodFailurePolicy.Rules {
		errs = append(errs, podFailurePolicyRule(s, &s.PodFailurePolicy.Rules[i], rp.Index(i), names)...)
	}
	return errs
}

func podFailurePolicyRule(s *batchv1.JobSpec, r *batchv1.PodFailurePolicyRule, p *field.Path, names sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	ap := p.Child("action")
	switch {
	case r.Action == "":
		errs = append(errs, field.Required(ap, fmt.Sprintf("valid values: %q", podFailurePolicyActions)))
	case r.Action == batchv1.PodFailurePolicyActionFailIndex:
		if s.BackoffLimitPerIndex == nil {
			errs = append(errs, field.Invalid(ap, r.Action, "requires the backoffLimitPerIndex to be set"))
		}
	case !slices.Contains(podFailurePolicyActions, string(r.Action)):
		errs = append(errs, field.NotSupported(ap, r.Action, podFailurePolicyActions))
	}
	if e := r.OnExitCodes; e != nil {
		ep := p.Child("onExitCodes")
		op := ep.Child("operator")
		switch {
		case e.Operator == "":
			errs = append(errs, field.Required(op, fmt.Sprintf("valid values: %q", podFailurePolicyOperators)))
		case !slices.Contains(podFailurePolicyOperators, string(e.Operator)):
			errs = append(errs, field.NotSupported(op, e.Operator, podFailurePolicyOperators))
		}
		if e.ContainerName != nil && !names.Has(*e.ContainerName) {
			errs = append(errs, field.Invalid(ep.Child("containerName"), *e.ContainerName, "must be one of the container or initContainer names in the pod template"))
		}
		vp := ep.Child("values")
		if len(e.Values) == 0 {
			errs = append(errs, field.Invalid(vp, e.Values, "at least one value is required"))
		} else if len(e.Values) > maxPodFailurePolicyOnExitCodesValues {
			errs = append(errs, field.TooMany(vp, len(e.Values), maxPodFailurePolicyOnExitCodesValues))
		}
		ordered, seen := true, sets.New[int32]()
		for j, v := range e.Values {
			if e.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && v == 0 {
				errs = append(errs, field.Invalid(vp.Index(j), v, "must not be 0 for the In operator"))
			}
			if seen.Has(v) {
				errs = append(errs, field.Duplicate(vp.Index(j), v))
			} else {
				seen.Insert(v)
			}
			if j > 0 && e.Values[j-1] > v {
				ordered = false
			}
		}
		if !ordered {
			errs = append(errs, field.Invalid(vp, e.Values, "must be ordered"))
		}
	}
	if len(r.OnPodConditions) > 0 {
		cp := p.Child("onPodConditions")
		if n := len(r.OnPodConditions); n > maxPodFailurePolicyOnPodConditions {
			errs = append(errs, field.TooMany(cp, n, maxPodFailurePolicyOnPodConditions))
		}
		for j, c := range r.OnPodConditions {
			pp := cp.Index(j)
			errs = append(errs, qualifiedName(string(c.Type), pp.Child("type"))...)
			switch {
			case c.Status == "":
				errs = append(errs, field.Required(pp.Child("status"), fmt.Sprintf("valid values: %q", podFailurePolicyConditions)))
			case !slices.Contains(podFailurePolicyConditions, string(c.Status)):
				errs = append(errs, field.NotSupported(pp.Child("status"), c.Status, podFailurePolicyConditions))
			}
		}
	}
	if r.OnExitCodes != nil && len(r.OnPodConditions) > 0 {
		errs = append(errs, field.Invalid(p, field.OmitValueType{}, "specifying both OnExitCodes and OnPodConditions is not supported"))
	}
	if r.OnExitCodes == nil && len(r.OnPodConditions) == 0 {
		errs = append(errs, field.Invalid(p, field.OmitValueType{}, "specifying one of OnExitCodes and OnPodConditions is required"))
	}
	return errs
}

// successPolicy validates spec.successPolicy.
func successPolicy(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		return field.ErrorList{field.Invalid(p, convert.InternalJSON(*s.SuccessPolicy), "requires indexed completion mode")}
	}
	var errs field.ErrorList
	rp := p.Child("rules")
	rules := s.SuccessPolicy.Rules
	if len(rules) == 0 {
		errs = append(errs, field.Required(rp, "at least one rules must be specified when the successPolicy is specified"))
	}
	if len(rules) > maxSuccessPolicyRules {
		errs = append(errs, field.TooMany(rp, len(rules), maxSuccessPolicyRules))
	}
	var completions int32
	if s.Completions != nil {
		completions = *s.Completions
	}
	for i, r := range rules {
		ip := rp.Index(i)
		if r.SucceededCount == nil && r.SucceededIndexes == nil {
			errs = append(errs, field.Required(ip, "at least one of succeededCount or succeededIndexes must be specified"))
		}
		var total int32
		if r.SucceededIndexes != nil {
			sp := ip.Child("succeededIndexes")
			if len(*r.SucceededIndexes) > maxSucceededIndexesLength {
				errs = append(errs, field.TooLong(sp, "", maxSucceededIndexesLength))
			}
			var err error
			if total, err = indexesFormat(*r.SucceededIndexes, completions); err != nil {
				errs = append(errs, field.Invalid(sp, *r.SucceededIndexes, fmt.Sprintf("error parsing succeededIndexes: %s", err.Error())))
			}
		}
		if r.SucceededCount != nil {
			cp := ip.Child("succeededCount")
			errs = append(errs, nonnegative(int64(*r.SucceededCount), cp)...)
			if *r.SucceededCount > completions {
				errs = append(errs, field.Invalid(cp, *r.SucceededCount, fmt.Sprintf("must be less than or equal to %d (the number of specified completions)", completions)))
			}
			if r.SucceededIndexes != nil && *r.SucceededCount > total {
				errs = append(errs, field.Invalid(cp, *r.SucceededCount, fmt.Sprintf("must be less than or equal to %d (the number of indexes in the specified succeededIndexes field)", total)))
			}
		}
	}
	return errs
}

// indexesFormat is upstream's validateIndexesFormat: comma-separated indexes and intervals
// below completions, increasing; it returns how many indexes they hold.
func indexesFormat(s string, completions int32) (int32, error) {
	if s == "" {
		return 0, nil
	}
	var last *int32
	var total int32
	for _, interval := range strings.Split(s, ",") {
		x, y, err := indexInterval(interval, completions)
		if err != nil {
			return 0, err
		}
		if last != nil && *last >= x {
			return 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", *last, x)
		}
		total += y - x + 1
		last = &y
	}
	return total, nil
}

func indexInterval(s string, completions int32) (int32, int32, error) {
	limits := strings.Split(s, "-")
	if len(limits) > 2 {
		return 0, 0, fmt.Errorf("the fragment %q violates the requirement that an index interval can have at most two parts separated by '-'", s)
	}
	x, err := strconv.Atoi(limits[0])
	if err != nil {
		return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", limits[0])
	}
	if x >= int(completions) {
		return 0, 0, fmt.Errorf("too large index: %q", limits[0])
	}
	if len(limits) == 1 {
		return int32(x), int32(x), nil
	}
	y, err := strconv.Atoi(limits[1])
	if err != nil {
		return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", limits[1])
	}
	if y >= int(completions) {
		return 0, 0, fmt.Errorf("too large index: %q", limits[1])
	}
	if x >= y {
		return 0, 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", x, y)
	}
	return int32(x), int32(y), nil
}

// jobRestartPolicy is upstream's rule for a Job template's restart policy: OnFailure or
// Never (Always, the pod default, is asked to be chosen), Never with a pod failure policy.
func jobRestartPolicy(s *batchv1.JobSpec, p *field.Path) field.ErrorList {
	rp, fp := s.Template.Spec.RestartPolicy, p.Child("template", "spec", "restartPolicy")
	switch {
	case rp == corev1.RestartPolicyAlways || rp == "":
		return field.ErrorList{field.Required(fp, fmt.Sprintf("valid values: %q, %q", corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever))}
	case rp != corev1.RestartPolicyOnFailure && rp != corev1.RestartPolicyNever:
		return field.ErrorList{field.NotSupported(fp, rp, []string{string(corev1.RestartPolicyOnFailure), string(corev1.RestartPolicyNever)})}
	case s.PodFailurePolicy != nil && rp != corev1.RestartPolicyNever:
		return field.ErrorList{field.Invalid(fp, rp, fmt.Sprintf("only %q is supported when podFailurePolicy is specified", corev1.RestartPolicyNever))}
	}
	return nil
}
