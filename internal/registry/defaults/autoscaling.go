package defaults

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
)

// defaultCPUUtilization is upstream's target when an autoscaler names no metric.
const defaultCPUUtilization = 80

// HorizontalPodAutoscaler sets upstream's autoscaling/v2 defaults: one replica
// at least, a CPU utilization target of 80% without metrics, and, when a
// behavior is given, its missing rules.
func HorizontalPodAutoscaler(h *autoscalingv2.HorizontalPodAutoscaler) {
	if h.Spec.MinReplicas == nil {
		one := int32(1)
		h.Spec.MinReplicas = &one
	}
	if len(h.Spec.Metrics) == 0 {
		u := int32(defaultCPUUtilization)
		h.Spec.Metrics = []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &u}},
		}}
	}
	if b := h.Spec.Behavior; b != nil {
		b.ScaleUp = scalingRules(b.ScaleUp, 0, []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		})
		b.ScaleDown = scalingRules(b.ScaleDown, -1, []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		})
	}
}

// scalingRules is upstream's GenerateHPAScaleUpRules/GenerateHPAScaleDownRules:
// window (-1: left unset) and policies fill what r leaves out; selectPolicy is Max.
func scalingRules(r *autoscalingv2.HPAScalingRules, window int32, policies []autoscalingv2.HPAScalingPolicy) *autoscalingv2.HPAScalingRules {
	if r == nil {
		r = &autoscalingv2.HPAScalingRules{}
	}
	if r.StabilizationWindowSeconds == nil && window >= 0 {
		w := window
		r.StabilizationWindowSeconds = &w
	}
	if r.SelectPolicy == nil {
		m := autoscalingv2.MaxChangePolicySelect
		r.SelectPolicy = &m
	}
	if r.Policies == nil {
		r.Policies = policies
	}
	return r
}

// HorizontalPodAutoscalerV1 sets the defaults an autoscaling/v1 HorizontalPodAutoscaler
// reads back with upstream: one replica at least, and (as its stored v2 form defaults to
// one) a CPU utilization target of 80% when it names no metric.
func HorizontalPodAutoscalerV1(h *autoscalingv1.HorizontalPodAutoscaler) {
	if h.Spec.MinReplicas == nil {
		one := int32(1)
		h.Spec.MinReplicas = &one
	}
	if _, other := h.Annotations["autoscaling.alpha.kubernetes.io/metrics"]; h.Spec.TargetCPUUtilizationPercentage == nil && !other {
		u := int32(defaultCPUUtilization)
		h.Spec.TargetCPUUtilizationPercentage = &u
	}
}
