package integration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/server/servertest"
)

// resizePod patches a pod through pods/resize (as `kubectl patch --subresource resize
// --type merge` does) and returns the answer.
func resizePod(ctx context.Context, s *servertest.Server, ns, name, patch string) (*corev1.Pod, error) {
	return s.Client.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "resize")
}

// reportStatus writes a pod's status as its node would: change edits the stored pod.
func reportStatus(t *testing.T, s *servertest.Server, ns, name string, change func(*corev1.Pod)) {
	t.Helper()
	ctx := ctxT(t)
	p, err := s.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	change(p)
	if _, err := s.Client.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("node's status write refused: %v", err)
	}
}

// running reports the container c running with allocated requests and actual resources.
func running(alloc corev1.ResourceList, actual corev1.ResourceRequirements) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name: "c", Image: "nginx", Ready: true,
			State:              corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}},
			AllocatedResources: alloc, Resources: &actual,
		}}
	}
}

// TestPodResizeQuota: a pod bound to a node is resized in place through pods/resize while
// its node reports what it allocated and what runs; quota charges the larger of spec,
// allocated and actual (requests; spec and actual for limits), a resize past hard is
// refused with upstream's text, a resize the node marks Infeasible stops counting its spec,
// and a node's report past hard is recorded (never refused). status.used is exact after
// every step.
func TestPodResizeQuota(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "rz")
	mkQuota(t, s, "rz", "q", map[string]string{"pods": "3", "requests.cpu": "2", "limits.cpu": "4"})
	p := podWith("web", rl("cpu", "500m"), rl("cpu", "1"))
	p.Spec.NodeName = "node-1"
	created, err := s.Client.CoreV1().Pods("rz").Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "rz", "q", map[string]string{"pods": "1", "requests.cpu": "500m", "limits.cpu": "1"})

	// 1. The node runs it as asked.
	reportStatus(t, s, "rz", "web", running(rl("cpu", "500m"), corev1.ResourceRequirements{Requests: rl("cpu", "500m"), Limits: rl("cpu", "1")}))
	expectUsed(t, s, "rz", "q", map[string]string{"requests.cpu": "500m", "limits.cpu": "1"})

	// 2. Resize up: charged at once by the spec; only resources change, generation bumps.
	got, err := resizePod(ctx, s, "rz", "web", `{"metadata":{"labels":{"ignored":"x"}},"spec":{"containers":[{"name":"c","image":"other","resources":{"requests":{"cpu":"1"},"limits":{"cpu":"2"}}}]}}`)
	if err != nil {
		t.Fatalf("resize: %v", err)
	}
	if got.Spec.Containers[0].Image != "nginx" || got.Labels["ignored"] != "" {
		t.Errorf("resize changed more than resources: image %q labels %v", got.Spec.Containers[0].Image, got.Labels)
	}
	if got.Generation != created.Generation+1 {
		t.Errorf("generation %d after resize, want %d", got.Generation, created.Generation+1)
	}
	expectUsed(t, s, "rz", "q", map[string]string{"requests.cpu": "1", "limits.cpu": "2"})

	// 3. Resize down: the node still has the larger allocation, which counts until it
	// reports the smaller one allocated and actuated.
	if _, err := resizePod(ctx, s, "rz", "web", `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"250m"},"limits":{"cpu":"1"}}}]}}`); err != nil {
		t.Fatalf("resize down: %v", err)
	}
	expectUsed(t, s, "rz", "q", map[string]string{"requests.cpu": "500m", "limits.cpu": "1"})
	reportStatus(t, s, "rz", "web", running(rl("cpu", "1"), corev1.ResourceRequirements{Requests: rl("cpu", "1"), Limits: rl("cpu", "2")}))
	expectUsed(t, s, "rz", "q", map[string]string{"requests.cpu": "1", "limits.cpu": "2"})
	reportStatus(t, s, "rz", "web", running(rl("cpu", "250m"), corev1.ResourceRequirements{Requests: rl("cpu", "1"), Limits: rl("cpu", "2")}))
	expectUsed(t, s, "rz", "q", map[string]string{"requests.cpu": "1", "limits.cpu": "2"})
	reportStatus(t, s, "rz", "web", running(rl("cpu", "250m"), corev1.ResourceRequirements{Requests: rl("cpu", "250m"), Limits: rl("cpu", "1")}))
	expectUsed(t, s, "rz", "q", map[string]string{"requests.cpu": "250m", "limits.cpu": "1"})

	// 4. A resize past hard is a request: refused with upstream's text, nothing changes.
	_, err = resizePod(ctx, s, "rz", "web", `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"3"},"limits":{"cpu":"4"}}}]}}`)
	expectForbidden(t, err, `pods "web" is forbidden: exceeded quota: q, requested: requests.cpu=2750m, used: requests.cpu=250m, limited: requests.cpu=2`)
	expectUsed(t, s, "rz", "q", map[string]string{"requests.cpu": "250m", "limits.cpu": "1"})

	// 5. A resize the node finds Infeasible stops counting its spec.
	if _, err := resizePod(ctx, s, "rz", "web", `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1500m"},"limits":{"cpu":"2"}}}]}}`); err != nil {
		t.Fatalf("resize: %v", err)
	}
	expectUsed(t, s, "rz", "q", map[string]string{"requests.cpu": "1500m", "limits.cpu": "2"})
	reportStatus(t, s, "rz", "web", func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodResizePending, Status: corev1.ConditionTrue,
			Reason: corev1.PodReasonInfeasible, Message: "Node didn't have enough capacity: cpu, requested: 1500, capacity: 1000", LastTransitionTime: metav1.Now()})
	})
	expectUsed(t, s, "rz", "q", map[string]string{"requests.cpu": "250m", "limits.cpu": "1"})

	// 6. A node's report past hard is a fact: recorded exactly, then requests are refused.
	reportStatus(t, s, "rz", "web", func(p *corev1.Pod) {
		p.Status.Conditions = nil
		running(rl("cpu", "3"), corev1.ResourceRequirements{Requests: rl("cpu", "3"), Limits: rl("cpu", "3")})(p)
	})
	expectUsed(t, s, "rz", "q", map[string]string{"requests.cpu": "3", "limits.cpu": "3"})
	_, err = s.Client.CoreV1().Pods("rz").Create(ctx, podWith("more", rl("cpu", "100m"), rl("cpu", "100m")), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "more" is forbidden: exceeded quota: q, requested: requests.cpu=100m, used: requests.cpu=3, limited: requests.cpu=2`)

	// 7. The pod's end credits everything.
	reportStatus(t, s, "rz", "web", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })
	expectUsed(t, s, "rz", "q", map[string]string{"pods": "0", "requests.cpu": "0", "limits.cpu": "0"})
}

// TestPodResizeValidation: pods/resize answers with upstream's field errors.
func TestPodResizeValidation(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "rv")
	if _, err := s.Client.CoreV1().Pods("rv").Create(ctx, podWith("web", rl("cpu", "500m", "memory", "64Mi"), rl("cpu", "1", "memory", "128Mi")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := resizePod(ctx, s, "rv", "web", `{"spec":{"containers":[{"name":"c","resources":{"limits":null}}]}}`)
	expectInvalid(t, err, `Pod "web" is invalid: spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed`)
	_, err = resizePod(ctx, s, "rv", "web", `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1","memory":"128Mi"}}}]}}`)
	expectInvalid(t, err, `Pod "web" is invalid: spec: Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing`)
	_, err = resizePod(ctx, s, "rv", "web", `{"spec":{"containers":[{"name":"c","resources":{"requests":{"ephemeral-storage":"1Gi"}}}]}}`)
	expectInvalid(t, err, `Pod "web" is invalid: spec: Forbidden: only cpu and memory resources are mutable`)
	if _, err := s.Client.CoreV1().Pods("rv").Get(ctx, "web", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	// Reading through the subresource answers the pod.
	if _, err := s.Client.CoreV1().RESTClient().Get().Namespace("rv").Resource("pods").Name("web").SubResource("resize").DoRaw(ctx); err != nil {
		t.Errorf("get pods/resize: %v", err)
	}
}

// TestPodEphemeralContainers: pods/ephemeralcontainers adds a debug container (as kubectl
// debug does), charges nothing, and refuses removing one with upstream's text.
func TestPodEphemeralContainers(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "ec")
	mkQuota(t, s, "ec", "q", map[string]string{"pods": "1", "requests.cpu": "500m"})
	if _, err := s.Client.CoreV1().Pods("ec").Create(ctx, podWith("web", rl("cpu", "500m"), nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := s.Client.CoreV1().Pods("ec").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "debugger", Image: "busybox", TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent, Stdin: true, TTY: true}}}
	got, err := s.Client.CoreV1().Pods("ec").UpdateEphemeralContainers(ctx, "web", p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("add ephemeral container: %v", err)
	}
	if len(got.Spec.EphemeralContainers) != 1 {
		t.Fatalf("ephemeral containers %v", got.Spec.EphemeralContainers)
	}
	expectUsed(t, s, "ec", "q", map[string]string{"pods": "1", "requests.cpu": "500m"})
	got.Spec.EphemeralContainers = nil
	_, err = s.Client.CoreV1().Pods("ec").UpdateEphemeralContainers(ctx, "web", got, metav1.UpdateOptions{})
	expectInvalid(t, err, "Pod \"web\" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers \"debugger\" may not be removed\n")
}

// TestPVCStatusReportPastHard: a CSI resizer's report of status.allocatedResources above
// hard is admitted and charged exactly (upstream never refuses a /status write for quota).
func TestPVCStatusReportPastHard(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "pv")
	mkQuota(t, s, "pv", "q", map[string]string{"requests.storage": "10Gi"})
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: rl("storage", "5Gi")},
	}}
	pvc, err := s.Client.CoreV1().PersistentVolumeClaims("pv").Create(ctx, pvc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "pv", "q", map[string]string{"requests.storage": "5Gi"})
	pvc.Status.Phase = corev1.ClaimBound
	pvc.Status.Capacity = rl("storage", "20Gi")
	pvc.Status.AllocatedResources = rl("storage", "20Gi")
	if _, err := s.Client.CoreV1().PersistentVolumeClaims("pv").UpdateStatus(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("status report refused: %v", err)
	}
	expectUsed(t, s, "pv", "q", map[string]string{"requests.storage": "20Gi"})
}
