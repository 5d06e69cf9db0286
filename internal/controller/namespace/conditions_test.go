package namespace

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestConditions pins upstream's namespace deletion conditions, byte for byte
// (pkg/controller/namespace/deletion/status_condition_utils.go).
func TestConditions(t *testing.T) {
	ok := map[corev1.NamespaceConditionType][2]string{
		corev1.NamespaceDeletionDiscoveryFailure: {"ResourcesDiscovered", "All resources successfully discovered"},
		corev1.NamespaceDeletionGVParsingFailure: {"ParsedGroupVersions", "All legacy kube types successfully parsed"},
		corev1.NamespaceDeletionContentFailure:   {"ContentDeleted", "All content successfully deleted, may be waiting on finalization"},
		corev1.NamespaceContentRemaining:         {"ContentRemoved", "All content successfully removed"},
		corev1.NamespaceFinalizersRemaining:      {"ContentRemoved", "All content successfully removed"},
	}
	for _, tc := range []struct {
		name   string
		report *contentReport
		// want holds the True conditions: type → reason, message.
		want map[corev1.NamespaceConditionType][2]string
	}{
		{name: "empty", report: newContentReport()},
		{
			name: "held by finalizers",
			report: &contentReport{
				remaining:  map[schema.GroupResource]int{{Resource: "pods"}: 1, {Group: "example.com", Resource: "widgets"}: 2},
				finalizers: map[string]int{"example.com/x": 2, "example.com/a": 1},
			},
			want: map[corev1.NamespaceConditionType][2]string{
				corev1.NamespaceContentRemaining:    {"SomeResourcesRemain", "Some resources are remaining: pods. has 1 resource instances, widgets.example.com has 2 resource instances"},
				corev1.NamespaceFinalizersRemaining: {"SomeFinalizersRemain", "Some content in the namespace has finalizers remaining: example.com/a in 1 resource instances, example.com/x in 2 resource instances"},
			},
		},
		{
			name: "delete errors",
			report: &contentReport{
				remaining:  map[schema.GroupResource]int{{Resource: "configmaps"}: 1},
				finalizers: map[string]int{},
				errs: []error{
					&remainingError{ns: "n", gvr: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}},
					errors.New(`pods "p" is forbidden: no`),
				},
			},
			want: map[corev1.NamespaceConditionType][2]string{
				corev1.NamespaceDeletionContentFailure: {"ContentDeletionFailed", `Failed to delete all resource types, 2 remaining: pods "p" is forbidden: no, unexpected items still remain in namespace: n for gvr: /v1, Resource=configmaps`},
				corev1.NamespaceContentRemaining:       {"SomeResourcesRemain", "Some resources are remaining: configmaps. has 1 resource instances"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := metav1.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
			var st corev1.NamespaceStatus
			if !updateConditions(&st, tc.report.conditions(now), now) {
				t.Fatal("first update reported no change")
			}
			if len(st.Conditions) != len(conditionTypes) {
				t.Fatalf("%d conditions, want %d", len(st.Conditions), len(conditionTypes))
			}
			for i, c := range st.Conditions {
				if c.Type != conditionTypes[i] {
					t.Errorf("condition %d is %s, want %s", i, c.Type, conditionTypes[i])
				}
				status, rm := corev1.ConditionFalse, ok[c.Type]
				if w, isTrue := tc.want[c.Type]; isTrue {
					status, rm = corev1.ConditionTrue, w
				}
				if c.Status != status || c.Reason != rm[0] || c.Message != rm[1] || !c.LastTransitionTime.Equal(&now) {
					t.Errorf("%s = %s %q %q at %v; want %s %q %q", c.Type, c.Status, c.Reason, c.Message, c.LastTransitionTime, status, rm[0], rm[1])
				}
			}
			// The same report again changes nothing; a cleared report turns every condition
			// False, moving lastTransitionTime only for those whose status changed.
			later := metav1.NewTime(now.Add(time.Minute))
			if updateConditions(&st, tc.report.conditions(later), later) {
				t.Error("an identical report changed the status")
			}
			changed := updateConditions(&st, newContentReport().conditions(later), later)
			if changed != (len(tc.want) > 0) {
				t.Errorf("clearing reported changed=%v", changed)
			}
			for _, c := range st.Conditions {
				moved := !c.LastTransitionTime.Equal(&now)
				if _, wasTrue := tc.want[c.Type]; c.Status != corev1.ConditionFalse || c.Reason != ok[c.Type][0] || c.Message != ok[c.Type][1] || moved != wasTrue {
					t.Errorf("after clearing %s = %s %q %q at %v", c.Type, c.Status, c.Reason, c.Message, c.LastTransitionTime)
				}
			}
		})
	}
}
