package integration

import (
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestKindsAEventsShareStorage: events.k8s.io/v1 Events are core/v1 Events in another
// version: each is readable, listable, watchable and deletable through the other.
func TestKindsAEventsShareStorage(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "kinds-a-events"
	mkNamespace(t, s, ns)
	ctx := ctxT(t)
	core, ev := s.Client.CoreV1().Events(ns), s.Client.EventsV1().Events(ns)

	// A watch through events.k8s.io sees a core create.
	w, err := ev.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ts := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if _, err := core.Create(ctx, &corev1.Event{ObjectMeta: meta("legacy"), InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "p"},
		Reason: "Started", Message: "started container", Type: corev1.EventTypeNormal, Count: 3, FirstTimestamp: ts, LastTimestamp: ts,
		Source: corev1.EventSource{Component: "kubelet", Host: "node-1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-w.ResultChan():
		got, ok := e.Object.(*eventsv1.Event)
		if e.Type != watch.Added || !ok || got.Name != "legacy" || got.Note != "started container" {
			t.Errorf("watch event %s %#v", e.Type, e.Object)
		}
	case <-ctx.Done():
		t.Fatal("no watch event")
	}
	got, err := ev.Get(ctx, "legacy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Regarding.Name != "p" || got.Note != "started container" || got.DeprecatedCount != 3 || got.DeprecatedSource.Component != "kubelet" ||
		!got.DeprecatedFirstTimestamp.Equal(&ts) || got.Reason != "Started" || got.Type != "Normal" {
		t.Errorf("core event as events.k8s.io/v1: %+v", got)
	}

	// An events.k8s.io/v1 create is a core event.
	now := metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC))
	created, err := ev.Create(ctx, &eventsv1.Event{ObjectMeta: meta("modern"), EventTime: now, ReportingController: "example.com/ctl", ReportingInstance: "ctl-1",
		Action: "Scale", Reason: "Scaled", Note: "scaled to 3", Type: "Normal", Regarding: corev1.ObjectReference{Kind: "Deployment", Namespace: ns, Name: "web"},
		Series: &eventsv1.EventSeries{Count: 2, LastObservedTime: now}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := core.Get(ctx, "modern", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if legacy.Message != "scaled to 3" || legacy.ReportingController != "example.com/ctl" || legacy.InvolvedObject.Name != "web" || legacy.Series == nil ||
		legacy.Series.Count != 2 || legacy.Action != "Scale" || legacy.UID != created.UID || legacy.ResourceVersion != created.ResourceVersion {
		t.Errorf("events.k8s.io event as core: %+v", legacy)
	}
	l, err := ev.List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 2 {
		t.Fatalf("events.k8s.io list: %v %v", l, err)
	}
	cl, err := core.List(ctx, metav1.ListOptions{})
	if err != nil || len(cl.Items) != 2 {
		t.Fatalf("core list: %v %v", cl, err)
	}

	// An update through one version keeps what only the other expresses.
	created.Series.Count = 3
	if _, err := ev.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if legacy, err = core.Get(ctx, "modern", metav1.GetOptions{}); err != nil || legacy.Series.Count != 3 || legacy.ReportingInstance != "ctl-1" {
		t.Errorf("after update: %+v %v", legacy, err)
	}

	// events.k8s.io/v1's strict rules, with upstream's texts.
	_, err = ev.Create(ctx, &eventsv1.Event{ObjectMeta: meta("bad"), EventTime: now, ReportingController: "example.com/ctl", ReportingInstance: "ctl-1",
		Reason: "Scaled", Type: "Normal", DeprecatedCount: 4, Regarding: corev1.ObjectReference{Kind: "Deployment", Namespace: ns, Name: "web"}}, metav1.CreateOptions{})
	if want := `Event "bad" is invalid: [action: Required value, deprecatedCount: Invalid value: "": needs to be unset]`; !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("strict create: err = %v\nwant %s", err, want)
	}
	modern, err := ev.Get(ctx, "modern", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	modern.Note = "changed"
	_, err = ev.Update(ctx, modern, metav1.UpdateOptions{})
	if want := `Event "modern" is invalid: message: Invalid value: "changed": field is immutable`; !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("note update: err = %v\nwant %s", err, want)
	}

	// Deleting through one version deletes it for both.
	if err := ev.Delete(ctx, "legacy", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := core.Get(ctx, "legacy", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("core get after events.k8s.io delete: %v", err)
	}
}

// TestKindsAHPAVersions: autoscaling/v1 HorizontalPodAutoscalers are autoscaling/v2 ones
// converted as upstream converts them (the CPU target; the rest kept in annotations).
func TestKindsAHPAVersions(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "kinds-a-hpa"
	mkNamespace(t, s, ns)
	ctx := ctxT(t)
	v1c, v2c := s.Client.AutoscalingV1().HorizontalPodAutoscalers(ns), s.Client.AutoscalingV2().HorizontalPodAutoscalers(ns)

	created, err := v1c.Create(ctx, &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: meta("web"), Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
		MinReplicas:    ptr.To(int32(2)), MaxReplicas: 8, TargetCPUUtilizationPercentage: ptr.To(int32(60))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v2, err := v2c.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v2.Spec.ScaleTargetRef.Name != "web" || *v2.Spec.MinReplicas != 2 || v2.Spec.MaxReplicas != 8 || len(v2.Spec.Metrics) != 1 ||
		v2.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU || *v2.Spec.Metrics[0].Resource.Target.AverageUtilization != 60 || v2.UID != created.UID {
		t.Errorf("v1 create read as v2: %+v", v2.Spec)
	}
	// A v2 metric v1 cannot express survives a v1 update.
	v2.Spec.Metrics = append(v2.Spec.Metrics, autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "qps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("100"))}}})
	if _, err := v2c.Update(ctx, v2, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	v1, err := v1c.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *v1.Spec.TargetCPUUtilizationPercentage != 60 || v1.Annotations["autoscaling.alpha.kubernetes.io/metrics"] == "" {
		t.Errorf("v2 read as v1: %+v %v", v1.Spec, v1.Annotations)
	}
	v1.Spec.MaxReplicas = 9
	if _, err := v1c.Update(ctx, v1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if v2, err = v2c.Get(ctx, "web", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if v2.Spec.MaxReplicas != 9 || len(v2.Spec.Metrics) != 2 || v2.Spec.Metrics[1].Pods == nil || len(v2.Annotations) != 0 {
		t.Errorf("after v1 update: %+v annotations %v", v2.Spec, v2.Annotations)
	}
	// /status through v1.
	v1, _ = v1c.Get(ctx, "web", metav1.GetOptions{})
	v1.Status.CurrentReplicas, v1.Status.DesiredReplicas = 3, 4
	if _, err := v1c.UpdateStatus(ctx, v1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if v2, _ = v2c.Get(ctx, "web", metav1.GetOptions{}); v2.Status.CurrentReplicas != 3 || v2.Status.DesiredReplicas != 4 {
		t.Errorf("status via v1: %+v", v2.Status)
	}
	// Validation runs on the stored form, with its paths.
	_, err = v1c.Create(ctx, &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: meta("bad"), Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, MaxReplicas: 3, TargetCPUUtilizationPercentage: ptr.To(int32(0))}}, metav1.CreateOptions{})
	if want := `HorizontalPodAutoscaler.autoscaling "bad" is invalid: spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0`; !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("v1 invalid: err = %v\nwant %s", err, want)
	}
	// Deleting through v1 deletes it.
	if err := v1c.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := v2c.Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("v2 get after v1 delete: %v", err)
	}
}

// TestKindsAComponentStatuses: componentstatuses are synthesized as upstream words them
// (etcd-0 healthy from quotad's storage; the scheduler and controller manager absent),
// read-only, with the deprecation warning.
func TestKindsAComponentStatuses(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	cs := s.Client.CoreV1().ComponentStatuses()
	l, err := cs.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]corev1.ComponentCondition{}
	for _, c := range l.Items {
		got[c.Name] = c.Conditions[0]
	}
	want := map[string]corev1.ComponentCondition{
		"etcd-0": {Type: corev1.ComponentHealthy, Status: corev1.ConditionTrue, Message: "ok"},
		"scheduler": {Type: corev1.ComponentHealthy, Status: corev1.ConditionFalse,
			Message: `Get "https://127.0.0.1:10259/healthz": dial tcp 127.0.0.1:10259: connect: connection refused`},
		"controller-manager": {Type: corev1.ComponentHealthy, Status: corev1.ConditionFalse,
			Message: `Get "https://127.0.0.1:10257/healthz": dial tcp 127.0.0.1:10257: connect: connection refused`},
	}
	if len(got) != len(want) {
		t.Fatalf("component statuses: %+v", l.Items)
	}
	for name, c := range want {
		if got[name] != c {
			t.Errorf("%s: %+v, want %+v", name, got[name], c)
		}
	}
	one, err := cs.Get(ctx, "etcd-0", metav1.GetOptions{})
	if err != nil || one.Conditions[0].Message != "ok" {
		t.Errorf("get etcd-0: %+v %v", one, err)
	}
	if _, err := cs.Get(ctx, "kubelet", metav1.GetOptions{}); err == nil || err.Error() != "Component not found: kubelet" {
		t.Errorf("get unknown: %v", err)
	}
	if _, err := cs.Create(ctx, &corev1.ComponentStatus{ObjectMeta: meta("x")}, metav1.CreateOptions{}); !apierrors.IsMethodNotSupported(err) {
		t.Errorf("create: %v, want 405", err)
	}
}

// TestKindsAEventFieldSelectors: events.k8s.io/v1 field selectors use its field names.
func TestKindsAEventFieldSelectors(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	const ns = "kinds-a-evsel"
	mkNamespace(t, s, ns)
	ctx := ctxT(t)
	for _, name := range []string{"a", "b"} {
		if _, err := s.Client.CoreV1().Events(ns).Create(ctx, &corev1.Event{ObjectMeta: meta(name), Reason: "R",
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "pod-" + name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	l, err := s.Client.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=pod-b,reason=R"})
	if err != nil || len(l.Items) != 1 || l.Items[0].Name != "b" {
		t.Fatalf("regarding.name selector: %v %v", l, err)
	}
	if _, err := s.Client.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=pod-b"}); !apierrors.IsBadRequest(err) {
		t.Errorf("core field name on events.k8s.io: %v, want 400", err)
	}
}
