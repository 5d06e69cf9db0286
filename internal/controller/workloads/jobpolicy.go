package workloads

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// The Job's policies as upstream's Job controller applies them (pod_failure_policy.go,
// success_policy.go, indexed_job_utils.go): pure functions of the Job and its pods.

// Upstream's condition reasons and messages for the policies (k8s.io/api/batch/v1,
// job_controller.go, success_policy.go).
const (
	jobMsgMaxFailedIndexesExceeded = "Job has exceeded the specified maximal number of failed indexes"
	jobMsgFailedIndexes            = "Job has failed indexes"
	jobMsgSuccessPolicyMatched     = "Matched rules at index"
)

// intervals is a set of completion indexes as sorted, disjoint, non-adjacent closed
// intervals: what .status.completedIndexes and .status.failedIndexes hold ("1,3-5").
// Its size is bounded by the intervals, not by the indexes, so a Job of 100,000
// completions costs a sync what its distinct runs cost.
type intervals []interval

type interval struct{ first, last int }

// parseIntervals is upstream's parseIndexesFromString: "1,3-5" of indexes below
// completions; a part that does not parse is skipped, and parsing stops at the first part
// starting past the last index.
func parseIntervals(s string, completions int) intervals {
	if s == "" {
		return nil
	}
	var out intervals
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		if first >= completions {
			break
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil {
				continue
			}
			last = min(last, completions-1)
		}
		if n := len(out); n > 0 && out[n-1].last == first-1 {
			out[n-1].last = last
		} else {
			out = append(out, interval{first, last})
		}
	}
	return out
}

// with returns the union of s and the indexes ixs (in any order, repeats allowed).
func (s intervals) with(ixs ...int) intervals {
	if len(ixs) == 0 {
		return s
	}
	sorted := slices.Clone(ixs)
	slices.Sort(sorted)
	add := make(intervals, 0, len(sorted))
	for _, ix := range slices.Compact(sorted) {
		if n := len(add); n > 0 && add[n-1].last == ix-1 {
			add[n-1].last = ix
		} else {
			add = append(add, interval{ix, ix})
		}
	}
	return s.union(add)
}

// union returns the union of two interval sets.
func (s intervals) union(o intervals) intervals {
	all := append(slices.Clone(s), o...)
	slices.SortFunc(all, func(a, b interval) int { return a.first - b.first })
	var out intervals
	for _, iv := range all {
		if n := len(out); n > 0 && iv.first <= out[n-1].last+1 {
			out[n-1].last = max(out[n-1].last, iv.last)
		} else {
			out = append(out, iv)
		}
	}
	return out
}

// has reports whether ix is in s.
func (s intervals) has(ix int) bool {
	i, found := slices.BinarySearchFunc(s, ix, func(iv interval, ix int) int {
		switch {
		case iv.last < ix:
			return -1
		case iv.first > ix:
			return 1
		}
		return 0
	})
	return found && i < len(s)
}

// total is the number of indexes in s.
func (s intervals) total() int {
	n := 0
	for _, iv := range s {
		n += iv.last - iv.first + 1
	}
	return n
}

// String renders s as upstream does: "1,3-5,7".
func (s intervals) String() string {
	var b strings.Builder
	for i, iv := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(iv.first))
		if iv.last > iv.first {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(iv.last))
		}
	}
	return b.String()
}

// overlap is the number of indexes in both s and o.
func (s intervals) overlap(o intervals) int {
	n, i, j := 0, 0, 0
	for i < len(s) && j < len(o) {
		if d := min(s[i].last, o[j].last) - max(s[i].first, o[j].first) + 1; d > 0 {
			n += d
		}
		if s[i].last < o[j].last {
			i++
		} else {
			j++
		}
	}
	return n
}

// matchSuccessPolicy is upstream's matchSuccessPolicy: the message of the SuccessPolicy
// condition when a rule of the Job's success policy holds for the succeeded indexes.
func matchSuccessPolicy(p *batchv1.SuccessPolicy, completions int, succeeded intervals) (string, bool) {
	if p == nil || len(succeeded) == 0 {
		return "", false
	}
	for i, rule := range p.Rules {
		matched := false
		if rule.SucceededIndexes != nil {
			required := parseIntervals(*rule.SucceededIndexes, completions)
			if len(required) == 0 {
				continue
			}
			got := required.overlap(succeeded)
			matched = got == required.total() || (rule.SucceededCount != nil && got >= int(*rule.SucceededCount))
		} else if rule.SucceededCount != nil {
			matched = succeeded.total() >= int(*rule.SucceededCount)
		}
		if matched {
			return fmt.Sprintf("%s %d", jobMsgSuccessPolicyMatched, i), true
		}
	}
	return "", false
}

// podFailureAction is what a Job's pod failure policy makes of a failed pod: the action of
// the first rule it matches (none: counted), and for FailJob the condition's message.
type podFailureAction struct {
	action batchv1.PodFailurePolicyAction // "" when no rule matches
	msg    string                         // for FailJob
}

// counts reports whether the failure counts towards the backoff limits (all but Ignore).
func (a podFailureAction) counts() bool { return a.action != batchv1.PodFailurePolicyActionIgnore }

// matchPodFailurePolicy is upstream's matchPodFailurePolicy, with its messages.
func matchPodFailurePolicy(p *batchv1.PodFailurePolicy, pod *corev1.Pod) podFailureAction {
	if p == nil {
		return podFailureAction{}
	}
	for i, rule := range p.Rules {
		if rule.OnExitCodes != nil {
			if cs := exitCodeMatch(&pod.Status, rule.OnExitCodes); cs != nil {
				return podFailureAction{rule.Action, fmt.Sprintf("Container %s for pod %s/%s failed with exit code %v matching %v rule at index %d",
					cs.Name, pod.Namespace, pod.Name, cs.State.Terminated.ExitCode, rule.Action, i)}
			}
		} else if rule.OnPodConditions != nil {
			if c := conditionMatch(&pod.Status, rule.OnPodConditions); c != nil {
				return podFailureAction{rule.Action, fmt.Sprintf("Pod %s/%s has condition %v matching %v rule at index %d",
					pod.Namespace, pod.Name, c.Type, rule.Action, i)}
			}
		}
	}
	return podFailureAction{}
}

// exitCodeMatch is the first terminated container (then init container) with a non-zero
// exit code the requirement matches.
func exitCodeMatch(st *corev1.PodStatus, req *batchv1.PodFailurePolicyOnExitCodesRequirement) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{st.ContainerStatuses, st.InitContainerStatuses} {
		for i := range list {
			cs := &list[i]
			t := cs.State.Terminated
			if t == nil || t.ExitCode == 0 || (req.ContainerName != nil && *req.ContainerName != cs.Name) {
				continue
			}
			in := slices.Contains(req.Values, t.ExitCode)
			if (req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && in) || (req.Operator == batchv1.PodFailurePolicyOnExitCodesOpNotIn && !in) {
				return cs
			}
		}
	}
	return nil
}

// conditionMatch is the first of the pod's conditions a pattern matches.
func conditionMatch(st *corev1.PodStatus, patterns []batchv1.PodFailurePolicyOnPodConditionsPattern) *corev1.PodCondition {
	for i := range st.Conditions {
		for _, p := range patterns {
			if st.Conditions[i].Type == p.Type && st.Conditions[i].Status == p.Status {
				return &st.Conditions[i]
			}
		}
	}
	return nil
}

// indexFailureCounts are the counts a pod of an index carries in upstream's annotations:
// the failures counted against backoffLimitPerIndex, and those the pod failure policy
// ignored.
func indexFailureCounts(p *corev1.Pod) (counted, ignored int32) {
	return annotationInt32(p, batchv1.JobIndexFailureCountAnnotation), annotationInt32(p, batchv1.JobIndexIgnoredFailureCountAnnotation)
}

func annotationInt32(p *corev1.Pod, key string) int32 {
	n, err := strconv.ParseInt(p.Annotations[key], 10, 32)
	if err != nil || n < 0 {
		return 0
	}
	return int32(n)
}

// replacementFailureCounts is upstream's getNewIndexFailureCounts: the counts the pod
// replacing a failed pod of the same index carries.
func replacementFailureCounts(job *batchv1.Job, failed *corev1.Pod) (counted, ignored int32) {
	if failed == nil {
		return 0, 0
	}
	counted, ignored = indexFailureCounts(failed)
	if matchPodFailurePolicy(job.Spec.PodFailurePolicy, failed).counts() {
		counted++
	} else {
		ignored++
	}
	return counted, ignored
}

// indexFailed is upstream's isIndexFailed: a failed pod fails its index when the pod
// failure policy says FailIndex, or when its counted failure makes the index's count
// reach backoffLimitPerIndex.
func indexFailed(job *batchv1.Job, p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodFailed {
		return false
	}
	a := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p)
	if a.action == batchv1.PodFailurePolicyActionFailIndex {
		return true
	}
	counted, _ := indexFailureCounts(p)
	return a.counts() && counted >= *job.Spec.BackoffLimitPerIndex
}
