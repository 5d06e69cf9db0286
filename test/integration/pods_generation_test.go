package integration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestPodGeneration: pods track metadata.generation as upstream's strategy does. Created at
// 1; every spec change bumps it, through the pod itself, pods/resize and
// pods/ephemeralcontainers; metadata, pods/status and pods/binding never do; a first
// deletion mark does (graceful or held by a finalizer). pods/status keeps the stored
// observedGeneration of the status and of each condition when a write leaves them 0, and
// refuses negative ones with upstream's text.
func TestPodGeneration(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	const ns = "gen"
	mkNamespace(t, s, ns)
	pods := s.Client.CoreV1().Pods(ns)
	want := func(what string, p *corev1.Pod, gen int64) {
		t.Helper()
		if p.Generation != gen {
			t.Errorf("%s: generation %d, want %d", what, p.Generation, gen)
		}
	}
	get := func() *corev1.Pod {
		t.Helper()
		p, err := pods.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	// 1. Create, then metadata and spec changes through the pod itself.
	p, err := pods.Create(ctx, podWith("web", rl("cpu", "100m"), rl("cpu", "200m")), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want("created", p, 1)
	p.Labels = map[string]string{"a": "b"}
	p, err = pods.Update(ctx, p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want("labelled", p, 1)
	p.Spec.ActiveDeadlineSeconds = ptr.To[int64](3600)
	p, err = pods.Update(ctx, p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want("spec changed", p, 2)

	// 2. pods/binding does not count.
	if err := pods.Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want("bound", get(), 2)

	// 3. pods/status: generation kept; observed generations kept when left 0.
	p = get()
	running(rl("cpu", "100m"), corev1.ResourceRequirements{Requests: rl("cpu", "100m"), Limits: rl("cpu", "200m")})(p)
	p.Status.ObservedGeneration = 2
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, ObservedGeneration: 2}, {Type: "example.com/gate", Status: corev1.ConditionFalse, ObservedGeneration: 1}}
	p, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want("status reported", p, 2)
	p.Status.ObservedGeneration = 0
	p.Status.Conditions = []corev1.PodCondition{{Type: "example.com/gate", Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	p, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status.ObservedGeneration != 2 || p.Status.Conditions[0].ObservedGeneration != 1 || p.Status.Conditions[1].ObservedGeneration != 2 {
		t.Errorf("observed generations left 0 not kept: status %d, conditions %+v", p.Status.ObservedGeneration, p.Status.Conditions)
	}
	want("status reported again", p, 2)
	bad := p.DeepCopy()
	bad.Status.ObservedGeneration = -1
	bad.Status.Conditions[1].ObservedGeneration = -2
	_, err = pods.UpdateStatus(ctx, bad, metav1.UpdateOptions{})
	expectInvalid(t, err, `Pod "web" is invalid: [status.conditions[1].observedGeneration: Invalid value: -2: must be a non-negative integer, status.observedGeneration: Invalid value: -1: must be a non-negative integer]`)

	// 4. pods/resize and pods/ephemeralcontainers change the spec.
	p, err = resizePod(ctx, s, ns, "web", `{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"150m"},"limits":{"cpu":"200m"}}}]}}`)
	if err != nil {
		t.Fatalf("resize: %v", err)
	}
	want("resized", p, 3)
	p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "debugger", Image: "busybox", TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent}}}
	p, err = pods.UpdateEphemeralContainers(ctx, "web", p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("ephemeral container: %v", err)
	}
	want("debugged", p, 4)
	// An ephemeral-containers write that changes nothing bumps nothing.
	p, err = pods.UpdateEphemeralContainers(ctx, "web", p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want("debugged again, unchanged", p, 4)

	// 5. A graceful deletion marks it once; a shorter one does not count again.
	if err := pods.Delete(ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](60)}); err != nil {
		t.Fatal(err)
	}
	p = get()
	if p.DeletionTimestamp == nil {
		t.Fatal("a bound pod's graceful delete did not mark it")
	}
	want("deleting", p, 5)
	if err := pods.Delete(ctx, "web", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](30)}); err != nil {
		t.Fatal(err)
	}
	want("deleting sooner", get(), 5)

	// 6. An unbound pod held by a finalizer is marked at once, and counts it too.
	held := podWith("held", nil, nil)
	held.Finalizers = []string{"example.com/hold"}
	if _, err := pods.Create(ctx, held, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	h, err := pods.Get(ctx, "held", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h.DeletionTimestamp == nil {
		t.Fatal("the held pod is not marked deleting")
	}
	want("held, deleting", h, 2)
	if _, err := pods.Patch(ctx, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}
