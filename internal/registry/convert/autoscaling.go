package convert

import (
	"encoding/json"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
)

// Annotations in which autoscaling/v1 carries what only autoscaling/v2 expresses
// (upstream's names).
const (
	MetricsAnnotation        = "autoscaling.alpha.kubernetes.io/metrics"
	BehaviorAnnotation       = "autoscaling.alpha.kubernetes.io/behavior"
	ConditionsAnnotation     = "autoscaling.alpha.kubernetes.io/conditions"
	CurrentMetricsAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics"
)

// isCPUUtilization reports whether m is a CPU utilization target, which v1's
// targetCPUUtilizationPercentage expresses.
func isCPUUtilization(m *autoscalingv2.MetricSpec) bool {
	return m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU &&
		m.Resource.Target.Type == autoscalingv2.UtilizationMetricType && m.Resource.Target.AverageUtilization != nil
}

// HPAToV2 converts an autoscaling/v1 HorizontalPodAutoscaler into autoscaling/v2: the CPU
// target becomes a Resource metric, the annotations give back the other metrics, the
// behavior and the status conditions (and are dropped).
func HPAToV2(in *autoscalingv1.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	h := in.DeepCopy()
	out := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: h.ObjectMeta}
	out.Spec = autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: h.Spec.ScaleTargetRef.Kind, Name: h.Spec.ScaleTargetRef.Name, APIVersion: h.Spec.ScaleTargetRef.APIVersion},
		MinReplicas:    h.Spec.MinReplicas,
		MaxReplicas:    h.Spec.MaxReplicas,
	}
	var other []autoscalingv2.MetricSpec
	if v, ok := out.Annotations[MetricsAnnotation]; ok {
		var v1 []autoscalingv1.MetricSpec
		if json.Unmarshal([]byte(v), &v1) == nil { // a malformed annotation carries no metrics
			other = metricsToV2(v1)
		}
	}
	if t := h.Spec.TargetCPUUtilizationPercentage; t != nil {
		u := *t
		out.Spec.Metrics = append(out.Spec.Metrics, autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &u}}})
	}
	out.Spec.Metrics = append(out.Spec.Metrics, other...)
	if v, ok := out.Annotations[BehaviorAnnotation]; ok {
		b := &autoscalingv2.HorizontalPodAutoscalerBehavior{}
		if json.Unmarshal([]byte(v), b) == nil {
			out.Spec.Behavior = b
		}
	}
	out.Status = autoscalingv2.HorizontalPodAutoscalerStatus{
		ObservedGeneration: h.Status.ObservedGeneration, LastScaleTime: h.Status.LastScaleTime,
		CurrentReplicas: h.Status.CurrentReplicas, DesiredReplicas: h.Status.DesiredReplicas,
	}
	if c := h.Status.CurrentCPUUtilizationPercentage; c != nil {
		u := *c
		out.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: &u}}}}
	}
	if v, ok := out.Annotations[CurrentMetricsAnnotation]; ok {
		var v1 []autoscalingv1.MetricStatus
		if json.Unmarshal([]byte(v), &v1) == nil {
			out.Status.CurrentMetrics = append(out.Status.CurrentMetrics, statusToV2(v1)...)
		}
	}
	if v, ok := out.Annotations[ConditionsAnnotation]; ok {
		_ = json.Unmarshal([]byte(v), &out.Status.Conditions)
	}
	out.Annotations = withoutKeys(out.Annotations, MetricsAnnotation, BehaviorAnnotation, ConditionsAnnotation, CurrentMetricsAnnotation)
	out.SetGroupVersionKind(autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"))
	return out
}

// HPAToV1 converts an autoscaling/v2 HorizontalPodAutoscaler into autoscaling/v1: the first
// CPU utilization metric becomes targetCPUUtilizationPercentage; the other metrics, the
// behavior and the status conditions go into annotations.
func HPAToV1(in *autoscalingv2.HorizontalPodAutoscaler) *autoscalingv1.HorizontalPodAutoscaler {
	h := in.DeepCopy()
	out := &autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: h.ObjectMeta}
	out.Spec = autoscalingv1.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: h.Spec.ScaleTargetRef.Kind, Name: h.Spec.ScaleTargetRef.Name, APIVersion: h.Spec.ScaleTargetRef.APIVersion},
		MinReplicas:    h.Spec.MinReplicas,
		MaxReplicas:    h.Spec.MaxReplicas,
	}
	var other []autoscalingv2.MetricSpec
	for i := range h.Spec.Metrics {
		m := &h.Spec.Metrics[i]
		if out.Spec.TargetCPUUtilizationPercentage == nil && isCPUUtilization(m) {
			u := *m.Resource.Target.AverageUtilization
			out.Spec.TargetCPUUtilizationPercentage = &u
			continue
		}
		other = append(other, *m)
	}
	ann := map[string]string{}
	if len(other) > 0 {
		b, _ := json.Marshal(metricsToV1(other))
		ann[MetricsAnnotation] = string(b)
	}
	if h.Spec.Behavior != nil {
		b, _ := json.Marshal(h.Spec.Behavior)
		ann[BehaviorAnnotation] = string(b)
	}
	var otherCurrent []autoscalingv2.MetricStatus
	for _, m := range h.Status.CurrentMetrics {
		if !(m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU && m.Resource.Current.AverageUtilization != nil) {
			otherCurrent = append(otherCurrent, m)
		}
	}
	if len(otherCurrent) > 0 {
		b, _ := json.Marshal(statusToV1(otherCurrent))
		ann[CurrentMetricsAnnotation] = string(b)
	}
	if len(h.Status.Conditions) > 0 {
		b, _ := json.Marshal(h.Status.Conditions)
		ann[ConditionsAnnotation] = string(b)
	}
	if len(ann) > 0 {
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		for k, v := range ann {
			out.Annotations[k] = v
		}
	}
	out.Status = autoscalingv1.HorizontalPodAutoscalerStatus{
		ObservedGeneration: h.Status.ObservedGeneration, LastScaleTime: h.Status.LastScaleTime,
		CurrentReplicas: h.Status.CurrentReplicas, DesiredReplicas: h.Status.DesiredReplicas,
	}
	for _, m := range h.Status.CurrentMetrics {
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU && m.Resource.Current.AverageUtilization != nil {
			u := *m.Resource.Current.AverageUtilization
			out.Status.CurrentCPUUtilizationPercentage = &u
			break
		}
	}
	out.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"))
	return out
}

func withoutKeys(m map[string]string, keys ...string) map[string]string {
	for _, k := range keys {
		delete(m, k)
	}
	if len(m) == 0 {
		return nil
	}
	return m
}
