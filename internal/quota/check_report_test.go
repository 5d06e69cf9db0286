package quota_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/evaluator"
)

// TestCheckRequestRecordsReports: a write to /status reports facts (a node's pod phase
// and resize status, a CSI resizer's allocatedResources); it is charged exactly, never
// refused, even past hard, as upstream (which never evaluates /status in admission).
// The same change through the main resource or resize is a request and is refused.
func TestCheckRequestRecordsReports(t *testing.T) {
	reg := evaluator.NewRegistry()
	running := podOf("p", ctr(t, "c", []string{"cpu=500m"}, nil))
	running.Status.Phase = corev1.PodRunning
	goldPVC := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "ns"},
		Spec:       corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: rl(t, "storage=10Gi")}},
	}
	tests := []struct {
		name     string
		quotas   []corev1.ResourceQuota
		req      quota.Request
		wantUsed []string // nil: refused
	}{
		{
			name:   "pod Succeeded back to Running through status, past hard",
			quotas: []corev1.ResourceQuota{rq(t, "q", []string{"pods=2"}, []string{"pods=2"})},
			req: func() quota.Request {
				done := podOf("done", ctr(t, "c", nil, nil))
				done.Status.Phase = corev1.PodSucceeded
				again := done.DeepCopy()
				again.Status.Phase = corev1.PodRunning
				return update(podsGR, "status", again, done)
			}(),
			wantUsed: []string{"pods=3"},
		},
		{
			name:   "PVC allocatedResources past hard through status",
			quotas: []corev1.ResourceQuota{rq(t, "storage", []string{"requests.storage=15Gi"}, []string{"requests.storage=10Gi"})},
			req: func() quota.Request {
				old := goldPVC.DeepCopy()
				old.ResourceVersion = "4"
				allocated := old.DeepCopy()
				allocated.Status.AllocatedResources = rl(t, "storage=20Gi")
				return update(pvcGR, "status", allocated, old)
			}(),
			wantUsed: []string{"requests.storage=20Gi"},
		},
		{
			name:   "node reports allocated cpu past hard",
			quotas: []corev1.ResourceQuota{rq(t, "q", []string{"requests.cpu=1"}, []string{"requests.cpu=500m"})},
			req: func() quota.Request {
				reported := running.DeepCopy()
				reported.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", AllocatedResources: rl(t, "cpu=2")}}
				return update(podsGR, "status", reported, running)
			}(),
			wantUsed: []string{"requests.cpu=2"},
		},
		{
			name:   "node reports less: credited",
			quotas: []corev1.ResourceQuota{rq(t, "q", []string{"requests.cpu=1"}, []string{"requests.cpu=2"})},
			req: func() quota.Request {
				old := running.DeepCopy()
				old.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", AllocatedResources: rl(t, "cpu=2")}}
				reported := running.DeepCopy()
				reported.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", AllocatedResources: rl(t, "cpu=500m")}}
				return update(podsGR, "status", reported, old)
			}(),
			wantUsed: []string{"requests.cpu=500m"},
		},
		{
			name:   "resize past hard is a request: refused",
			quotas: []corev1.ResourceQuota{rq(t, "q", []string{"requests.cpu=1"}, []string{"requests.cpu=500m"})},
			req: func() quota.Request {
				bigger := running.DeepCopy()
				bigger.Spec.Containers[0].Resources.Requests = rl(t, "cpu=2")
				return update(podsGR, "resize", bigger, running)
			}(),
		},
		{
			name:   "the same through the main resource: refused",
			quotas: []corev1.ResourceQuota{rq(t, "q", []string{"pods=2"}, []string{"pods=2"})},
			req: func() quota.Request {
				done := podOf("done", ctr(t, "c", nil, nil))
				done.Status.Phase = corev1.PodSucceeded
				again := done.DeepCopy()
				again.Status.Phase = corev1.PodRunning
				return update(podsGR, "", again, done)
			}(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changed, err := quota.CheckRequest(tt.quotas, tt.req, reg, nil)
			if tt.wantUsed == nil {
				if err == nil {
					t.Fatalf("admitted, want refused")
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if len(changed) != 1 {
				t.Fatalf("changed %d quotas, want 1", len(changed))
			}
			if want := rl(t, tt.wantUsed...); !quota.Equals(changed[0].Status.Used, want) {
				t.Errorf("used %v, want %v", changed[0].Status.Used, want)
			}
		})
	}
}
