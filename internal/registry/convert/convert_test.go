package convert_test

import (
	"reflect"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/registry/convert"
)

func TestEventRoundTrip(t *testing.T) {
	ts := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	mt := metav1.NewMicroTime(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC))
	core := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "e", Namespace: "ns", Labels: map[string]string{"a": "b"}},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p"}, Reason: "R", Message: "M",
		Source: corev1.EventSource{Component: "c", Host: "h"}, FirstTimestamp: ts, LastTimestamp: ts, Count: 2, Type: "Warning",
		EventTime: mt, Series: &corev1.EventSeries{Count: 3, LastObservedTime: mt}, Action: "A",
		Related: &corev1.ObjectReference{Kind: "Node", Name: "n"}, ReportingController: "rc", ReportingInstance: "ri",
	}
	ev := convert.EventFromCore(core)
	if ev.Note != "M" || ev.Regarding.Name != "p" || ev.DeprecatedSource.Host != "h" || ev.DeprecatedCount != 2 || ev.Series.Count != 3 ||
		ev.Related.Name != "n" || ev.ReportingController != "rc" || ev.APIVersion != "events.k8s.io/v1" {
		t.Errorf("EventFromCore: %+v", ev)
	}
	back := convert.EventToCore(ev)
	core.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Event"))
	if !reflect.DeepEqual(back, core) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, core)
	}
	// The result shares nothing with the argument.
	ev.Labels["a"] = "changed"
	ev.Series.Count = 9
	if core.Labels["a"] != "b" || core.Series.Count != 3 {
		t.Error("EventFromCore shares state with its argument")
	}
	if e := convert.EventToCore(&eventsv1.Event{}); e.Series != nil || e.Related != nil {
		t.Errorf("empty event: %+v", e)
	}
}

func TestHPARoundTrip(t *testing.T) {
	pods := autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "qps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("100"))}}}
	v2 := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "h", Annotations: map[string]string{"keep": "me"}},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To(int32(2)), MaxReplicas: 5,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(int32(70))}}}, pods},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To(int32(60))}},
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 3, DesiredReplicas: 4,
			Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, Reason: "R"}},
			CurrentMetrics: []autoscalingv2.MetricStatus{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU,
					Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To(int32(42)), AverageValue: ptr.To(resource.MustParse("100m"))}}},
				{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricStatus{Metric: autoscalingv2.MetricIdentifier{Name: "qps"},
					Current: autoscalingv2.MetricValueStatus{AverageValue: ptr.To(resource.MustParse("7"))}}},
			}},
	}
	v1 := convert.HPAToV1(v2)
	if *v1.Spec.TargetCPUUtilizationPercentage != 70 || v1.Annotations[convert.MetricsAnnotation] == "" || v1.Annotations[convert.BehaviorAnnotation] == "" ||
		v1.Annotations[convert.ConditionsAnnotation] == "" || v1.Annotations["keep"] != "me" || v1.Status.DesiredReplicas != 4 {
		t.Errorf("HPAToV1: %+v %v", v1.Spec, v1.Annotations)
	}
	if *v1.Status.CurrentCPUUtilizationPercentage != 42 || v1.Annotations[convert.CurrentMetricsAnnotation] != `[{"type":"Pods","pods":{"metricName":"qps","currentAverageValue":"7"}}]` {
		t.Errorf("v1 status: %+v, current-metrics %s", v1.Status, v1.Annotations[convert.CurrentMetricsAnnotation])
	}
	if want := `[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"100"}}]`; v1.Annotations[convert.MetricsAnnotation] != want {
		t.Errorf("metrics annotation %s, want upstream's v1 form %s", v1.Annotations[convert.MetricsAnnotation], want)
	}
	if _, ok := v2.Annotations[convert.MetricsAnnotation]; ok {
		t.Error("HPAToV1 changed its argument")
	}
	back := convert.HPAToV2(v1)
	v2.SetGroupVersionKind(autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"))
	if m := back.Spec.Metrics[1]; m.Type != autoscalingv2.PodsMetricSourceType || m.Pods.Metric.Name != "qps" || m.Pods.Target.Type != autoscalingv2.AverageValueMetricType ||
		m.Pods.Target.AverageValue.String() != "100" {
		t.Errorf("pods metric lost: %+v", back.Spec.Metrics)
	}
	if len(back.Status.CurrentMetrics) != 2 || *back.Status.CurrentMetrics[0].Resource.Current.AverageUtilization != 42 ||
		back.Status.CurrentMetrics[1].Pods.Current.AverageValue.String() != "7" {
		t.Errorf("current metrics back: %+v", back.Status.CurrentMetrics)
	}
	back.Spec.Metrics[1] = pods
	if !reflect.DeepEqual(back.Spec, v2.Spec) || !reflect.DeepEqual(back.Annotations, v2.Annotations) || !reflect.DeepEqual(back.Status.Conditions, v2.Status.Conditions) {
		t.Errorf("round trip:\n got %+v %v\nwant %+v %v", back.Spec, back.Annotations, v2.Spec, v2.Annotations)
	}
	// A v1 object without annotations: only the CPU target.
	plain := convert.HPAToV2(&autoscalingv1.HorizontalPodAutoscaler{Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 3}})
	if len(plain.Spec.Metrics) != 0 || plain.Spec.Behavior != nil || plain.Annotations != nil {
		t.Errorf("plain v1: %+v", plain)
	}
	// A malformed annotation is ignored, never a panic.
	bad := convert.HPAToV2(&autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{convert.MetricsAnnotation: "{", convert.BehaviorAnnotation: "["}}})
	if len(bad.Spec.Metrics) != 0 || bad.Spec.Behavior != nil {
		t.Errorf("malformed annotations: %+v", bad.Spec)
	}
}
