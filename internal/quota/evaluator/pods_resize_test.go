package evaluator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestPodUsageResize: upstream's 1.37 charging rule for a pod whose node reports what it
// allocated (containerStatuses[].allocatedResources) and what runs (.resources): requests
// are the larger of the aggregated spec, allocated and actual; limits of spec and actual;
// a resize marked Infeasible counts no spec. Pod-level resources count by spec.
func TestPodUsageResize(t *testing.T) {
	type status struct {
		alloc, actualReq, actualLim []string
		none                        bool // no resources reported (no actual)
	}
	tests := []struct {
		name       string
		req, lim   []string
		st         *status // nil: no container status
		infeasible bool
		want       string
	}{
		{name: "no status: spec", req: []string{"cpu=500m"}, lim: []string{"cpu=1"},
			want: "count/pods=1 cpu=500m limits.cpu=1 pods=1 requests.cpu=500m"},
		{name: "as allocated", req: []string{"cpu=500m"}, lim: []string{"cpu=1"},
			st:   &status{alloc: []string{"cpu=500m"}, actualReq: []string{"cpu=500m"}, actualLim: []string{"cpu=1"}},
			want: "count/pods=1 cpu=500m limits.cpu=1 pods=1 requests.cpu=500m"},
		{name: "resized up, not yet allocated: spec", req: []string{"cpu=2"}, lim: []string{"cpu=3"},
			st:   &status{alloc: []string{"cpu=500m"}, actualReq: []string{"cpu=500m"}, actualLim: []string{"cpu=1"}},
			want: "count/pods=1 cpu=2 limits.cpu=3 pods=1 requests.cpu=2"},
		{name: "resized down, allocated still larger", req: []string{"cpu=250m"}, lim: []string{"cpu=500m"},
			st:   &status{alloc: []string{"cpu=1"}, actualReq: []string{"cpu=500m"}, actualLim: []string{"cpu=1"}},
			want: "count/pods=1 cpu=1 limits.cpu=1 pods=1 requests.cpu=1"},
		{name: "resized down, allocated, actual still larger", req: []string{"cpu=250m"}, lim: []string{"cpu=500m"},
			st:   &status{alloc: []string{"cpu=250m"}, actualReq: []string{"cpu=750m"}, actualLim: []string{"cpu=2"}},
			want: "count/pods=1 cpu=750m limits.cpu=2 pods=1 requests.cpu=750m"},
		{name: "allocated without actual counts as actual", req: []string{"cpu=250m"}, lim: nil,
			st:   &status{alloc: []string{"cpu=2"}, none: true},
			want: "count/pods=1 cpu=2 pods=1 requests.cpu=2"},
		{name: "memory max per name", req: []string{"cpu=1", "memory=1Gi"}, lim: nil,
			st:   &status{alloc: []string{"cpu=500m", "memory=2Gi"}, actualReq: []string{"cpu=250m", "memory=512Mi"}},
			want: "count/pods=1 cpu=1 memory=2Gi pods=1 requests.cpu=1 requests.memory=2Gi"},
		{name: "infeasible: spec not counted", req: []string{"cpu=4"}, lim: []string{"cpu=4"},
			st:         &status{alloc: []string{"cpu=500m"}, actualReq: []string{"cpu=500m"}, actualLim: []string{"cpu=1"}},
			infeasible: true,
			want:       "count/pods=1 cpu=500m limits.cpu=1 pods=1 requests.cpu=500m"},
		{name: "infeasible without status: nothing", req: []string{"cpu=4"}, lim: []string{"cpu=4"},
			infeasible: true,
			want:       "count/pods=1 pods=1"},
		{name: "infeasible, allocated larger than actual", req: []string{"cpu=4"}, lim: []string{"cpu=4"},
			st:         &status{alloc: []string{"cpu=1"}, actualReq: []string{"cpu=500m"}, actualLim: []string{"cpu=1"}},
			infeasible: true,
			want:       "count/pods=1 cpu=1 limits.cpu=1 pods=1 requests.cpu=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
				Resources: corev1.ResourceRequirements{Requests: rl(t, tt.req...), Limits: rl(t, tt.lim...)}}}}}
			if tt.lim == nil {
				pod.Spec.Containers[0].Resources.Limits = nil
			}
			if tt.st != nil {
				cs := corev1.ContainerStatus{Name: "c", AllocatedResources: rl(t, tt.st.alloc...)}
				if !tt.st.none {
					cs.Resources = &corev1.ResourceRequirements{Requests: rl(t, tt.st.actualReq...)}
					if tt.st.actualLim != nil {
						cs.Resources.Limits = rl(t, tt.st.actualLim...)
					}
				}
				pod.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
			}
			if tt.infeasible {
				pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible}}
			}
			got, err := Pods{}.Usage(pod)
			if err != nil {
				t.Fatal(err)
			}
			if show(got) != tt.want {
				t.Errorf("usage %s, want %s", show(got), tt.want)
			}
		})
	}
}
