package namespace

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The namespace conditions upstream's namespace deleter maintains
// (pkg/controller/namespace/deletion/status_condition_utils.go), in its order, with the
// reason and message of each one's "all is well" (False) variant.
var conditionTypes = []corev1.NamespaceConditionType{
	corev1.NamespaceDeletionDiscoveryFailure,
	corev1.NamespaceDeletionGVParsingFailure,
	corev1.NamespaceDeletionContentFailure,
	corev1.NamespaceContentRemaining,
	corev1.NamespaceFinalizersRemaining,
}

func okCondition(t corev1.NamespaceConditionType, now metav1.Time) corev1.NamespaceCondition {
	c := corev1.NamespaceCondition{Type: t, Status: corev1.ConditionFalse, LastTransitionTime: now}
	switch t {
	case corev1.NamespaceDeletionDiscoveryFailure:
		c.Reason, c.Message = "ResourcesDiscovered", "All resources successfully discovered"
	case corev1.NamespaceDeletionGVParsingFailure:
		c.Reason, c.Message = "ParsedGroupVersions", "All legacy kube types successfully parsed"
	case corev1.NamespaceDeletionContentFailure:
		c.Reason, c.Message = "ContentDeleted", "All content successfully deleted, may be waiting on finalization"
	case corev1.NamespaceContentRemaining, corev1.NamespaceFinalizersRemaining:
		c.Reason, c.Message = "ContentRemoved", "All content successfully removed"
	}
	return c
}

// contentReport is what one pass over a terminating namespace's content found: the
// objects left per group-resource, the finalizers holding them, and the errors listing
// or deleting them. (quotad's catalogue is in process, so discovery and group-version
// parsing cannot fail: those conditions are always their False variants.)
type contentReport struct {
	remaining  map[schema.GroupResource]int
	finalizers map[string]int
	errs       []error
}

func newContentReport() *contentReport {
	return &contentReport{remaining: map[schema.GroupResource]int{}, finalizers: map[string]int{}}
}

// done reports whether the namespace's content is gone without errors.
func (r *contentReport) done() bool { return len(r.errs) == 0 && len(r.remaining) == 0 }

// conditions returns the True conditions the report calls for, as upstream's
// ProcessContentTotals and makeDeleteContentCondition build them.
func (r *contentReport) conditions(now metav1.Time) []corev1.NamespaceCondition {
	var out []corev1.NamespaceCondition
	if len(r.errs) > 0 {
		msgs := make([]string, 0, len(r.errs))
		for _, e := range r.errs {
			msgs = append(msgs, e.Error())
		}
		sort.Strings(msgs)
		out = append(out, corev1.NamespaceCondition{
			Type: corev1.NamespaceDeletionContentFailure, Status: corev1.ConditionTrue, LastTransitionTime: now,
			Reason:  "ContentDeletionFailed",
			Message: fmt.Sprintf("Failed to delete all resource types, %d remaining: %v", len(r.errs), strings.Join(msgs, ", ")),
		})
	}
	if len(r.remaining) > 0 {
		var parts []string
		for gr, n := range r.remaining {
			if n > 0 {
				parts = append(parts, fmt.Sprintf("%s.%s has %d resource instances", gr.Resource, gr.Group, n))
			}
		}
		sort.Strings(parts)
		out = append(out, corev1.NamespaceCondition{
			Type: corev1.NamespaceContentRemaining, Status: corev1.ConditionTrue, LastTransitionTime: now,
			Reason:  "SomeResourcesRemain",
			Message: fmt.Sprintf("Some resources are remaining: %s", strings.Join(parts, ", ")),
		})
	}
	if len(r.finalizers) > 0 {
		var parts []string
		for f, n := range r.finalizers {
			if n > 0 {
				parts = append(parts, fmt.Sprintf("%s in %d resource instances", f, n))
			}
		}
		sort.Strings(parts)
		out = append(out, corev1.NamespaceCondition{
			Type: corev1.NamespaceFinalizersRemaining, Status: corev1.ConditionTrue, LastTransitionTime: now,
			Reason:  "SomeFinalizersRemain",
			Message: fmt.Sprintf("Some content in the namespace has finalizers remaining: %s", strings.Join(parts, ", ")),
		})
	}
	return out
}

// updateConditions is upstream's updateConditions: every deleter condition is set, to
// its True variant from current or else its False one; a condition keeps its
// lastTransitionTime unless its status changes. It reports whether st changed.
func updateConditions(st *corev1.NamespaceStatus, current []corev1.NamespaceCondition, now metav1.Time) bool {
	changed := false
	for _, t := range conditionTypes {
		want := okCondition(t, now)
		if c := findCondition(current, t); c != nil {
			want = *c
		}
		old := findCondition(st.Conditions, t)
		switch {
		case old == nil:
			st.Conditions = append(st.Conditions, want)
			changed = true
		case old.Status != want.Status || old.Reason != want.Reason || old.Message != want.Message:
			if old.Status != want.Status {
				old.LastTransitionTime = now
			}
			old.Status, old.Reason, old.Message = want.Status, want.Reason, want.Message
			changed = true
		}
	}
	return changed
}

func findCondition(cs []corev1.NamespaceCondition, t corev1.NamespaceConditionType) *corev1.NamespaceCondition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}
