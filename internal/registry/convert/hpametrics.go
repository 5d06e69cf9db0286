package convert

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
)

// metricsToV1 writes v2 metrics in the autoscaling/v1 form upstream keeps in the
// metrics annotation.
func metricsToV1(in []autoscalingv2.MetricSpec) []autoscalingv1.MetricSpec {
	out := make([]autoscalingv1.MetricSpec, 0, len(in))
	for _, m := range in {
		o := autoscalingv1.MetricSpec{Type: autoscalingv1.MetricSourceType(m.Type)}
		switch {
		case m.Object != nil:
			s := &autoscalingv1.ObjectMetricSource{
				Target:     autoscalingv1.CrossVersionObjectReference{Kind: m.Object.DescribedObject.Kind, Name: m.Object.DescribedObject.Name, APIVersion: m.Object.DescribedObject.APIVersion},
				MetricName: m.Object.Metric.Name, Selector: m.Object.Metric.Selector, AverageValue: m.Object.Target.AverageValue,
			}
			if m.Object.Target.Value != nil {
				s.TargetValue = *m.Object.Target.Value
			}
			o.Object = s
		case m.Pods != nil:
			s := &autoscalingv1.PodsMetricSource{MetricName: m.Pods.Metric.Name, Selector: m.Pods.Metric.Selector}
			if m.Pods.Target.AverageValue != nil {
				s.TargetAverageValue = *m.Pods.Target.AverageValue
			}
			o.Pods = s
		case m.Resource != nil:
			o.Resource = &autoscalingv1.ResourceMetricSource{Name: m.Resource.Name,
				TargetAverageUtilization: m.Resource.Target.AverageUtilization, TargetAverageValue: m.Resource.Target.AverageValue}
		case m.ContainerResource != nil:
			o.ContainerResource = &autoscalingv1.ContainerResourceMetricSource{Name: m.ContainerResource.Name, Container: m.ContainerResource.Container,
				TargetAverageUtilization: m.ContainerResource.Target.AverageUtilization, TargetAverageValue: m.ContainerResource.Target.AverageValue}
		case m.External != nil:
			o.External = &autoscalingv1.ExternalMetricSource{MetricName: m.External.Metric.Name, MetricSelector: m.External.Metric.Selector,
				TargetValue: m.External.Target.Value, TargetAverageValue: m.External.Target.AverageValue}
		}
		out = append(out, o)
	}
	return out
}

// metricsToV2 reads the autoscaling/v1 form of the metrics annotation back into v2 metrics.
func metricsToV2(in []autoscalingv1.MetricSpec) []autoscalingv2.MetricSpec {
	out := make([]autoscalingv2.MetricSpec, 0, len(in))
	for _, m := range in {
		o := autoscalingv2.MetricSpec{Type: autoscalingv2.MetricSourceType(m.Type)}
		switch {
		case m.Object != nil:
			s := &autoscalingv2.ObjectMetricSource{
				DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: m.Object.Target.Kind, Name: m.Object.Target.Name, APIVersion: m.Object.Target.APIVersion},
				Metric:          autoscalingv2.MetricIdentifier{Name: m.Object.MetricName, Selector: m.Object.Selector},
			}
			v := m.Object.TargetValue
			s.Target = autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: &v}
			if m.Object.AverageValue != nil {
				s.Target = autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: m.Object.AverageValue}
			}
			o.Object = s
		case m.Pods != nil:
			v := m.Pods.TargetAverageValue
			o.Pods = &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: m.Pods.MetricName, Selector: m.Pods.Selector},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &v}}
		case m.Resource != nil:
			o.Resource = &autoscalingv2.ResourceMetricSource{Name: m.Resource.Name, Target: resourceTarget(m.Resource.TargetAverageUtilization, m.Resource.TargetAverageValue)}
		case m.ContainerResource != nil:
			o.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{Name: m.ContainerResource.Name, Container: m.ContainerResource.Container,
				Target: resourceTarget(m.ContainerResource.TargetAverageUtilization, m.ContainerResource.TargetAverageValue)}
		case m.External != nil:
			s := &autoscalingv2.ExternalMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: m.External.MetricName, Selector: m.External.MetricSelector}}
			if m.External.TargetValue != nil {
				s.Target = autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: m.External.TargetValue}
			}
			if m.External.TargetAverageValue != nil {
				s.Target = autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: m.External.TargetAverageValue}
			}
			o.External = s
		}
		out = append(out, o)
	}
	return out
}

// resourceTarget is the v2 target of a v1 resource metric: a utilization, else an average value.
func resourceTarget(util *int32, avg *resource.Quantity) autoscalingv2.MetricTarget {
	switch {
	case util != nil:
		return autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: util}
	case avg != nil:
		return autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: avg}
	}
	return autoscalingv2.MetricTarget{}
}

// statusToV1 writes v2 current metrics in the autoscaling/v1 form upstream keeps in the
// current-metrics annotation.
func statusToV1(in []autoscalingv2.MetricStatus) []autoscalingv1.MetricStatus {
	out := make([]autoscalingv1.MetricStatus, 0, len(in))
	for _, m := range in {
		o := autoscalingv1.MetricStatus{Type: autoscalingv1.MetricSourceType(m.Type)}
		deref := func(q *resource.Quantity) resource.Quantity {
			if q == nil {
				return resource.Quantity{}
			}
			return *q
		}
		switch {
		case m.Object != nil:
			o.Object = &autoscalingv1.ObjectMetricStatus{
				Target:     autoscalingv1.CrossVersionObjectReference{Kind: m.Object.DescribedObject.Kind, Name: m.Object.DescribedObject.Name, APIVersion: m.Object.DescribedObject.APIVersion},
				MetricName: m.Object.Metric.Name, Selector: m.Object.Metric.Selector, CurrentValue: deref(m.Object.Current.Value), AverageValue: m.Object.Current.AverageValue,
			}
		case m.Pods != nil:
			o.Pods = &autoscalingv1.PodsMetricStatus{MetricName: m.Pods.Metric.Name, Selector: m.Pods.Metric.Selector, CurrentAverageValue: deref(m.Pods.Current.AverageValue)}
		case m.Resource != nil:
			o.Resource = &autoscalingv1.ResourceMetricStatus{Name: m.Resource.Name, CurrentAverageUtilization: m.Resource.Current.AverageUtilization,
				CurrentAverageValue: deref(m.Resource.Current.AverageValue)}
		case m.ContainerResource != nil:
			o.ContainerResource = &autoscalingv1.ContainerResourceMetricStatus{Name: m.ContainerResource.Name, Container: m.ContainerResource.Container,
				CurrentAverageUtilization: m.ContainerResource.Current.AverageUtilization, CurrentAverageValue: deref(m.ContainerResource.Current.AverageValue)}
		case m.External != nil:
			o.External = &autoscalingv1.ExternalMetricStatus{MetricName: m.External.Metric.Name, MetricSelector: m.External.Metric.Selector,
				CurrentValue: deref(m.External.Current.Value), CurrentAverageValue: m.External.Current.AverageValue}
		}
		out = append(out, o)
	}
	return out
}

// statusToV2 reads the autoscaling/v1 form of the current-metrics annotation back.
func statusToV2(in []autoscalingv1.MetricStatus) []autoscalingv2.MetricStatus {
	out := make([]autoscalingv2.MetricStatus, 0, len(in))
	for _, m := range in {
		o := autoscalingv2.MetricStatus{Type: autoscalingv2.MetricSourceType(m.Type)}
		ref := func(q resource.Quantity) *resource.Quantity { return &q }
		switch {
		case m.Object != nil:
			o.Object = &autoscalingv2.ObjectMetricStatus{
				DescribedObject: autoscalingv2.CrossVersionObjectReference{Kind: m.Object.Target.Kind, Name: m.Object.Target.Name, APIVersion: m.Object.Target.APIVersion},
				Metric:          autoscalingv2.MetricIdentifier{Name: m.Object.MetricName, Selector: m.Object.Selector},
				Current:         autoscalingv2.MetricValueStatus{Value: ref(m.Object.CurrentValue), AverageValue: m.Object.AverageValue},
			}
		case m.Pods != nil:
			o.Pods = &autoscalingv2.PodsMetricStatus{Metric: autoscalingv2.MetricIdentifier{Name: m.Pods.MetricName, Selector: m.Pods.Selector},
				Current: autoscalingv2.MetricValueStatus{AverageValue: ref(m.Pods.CurrentAverageValue)}}
		case m.Resource != nil:
			o.Resource = &autoscalingv2.ResourceMetricStatus{Name: m.Resource.Name,
				Current: autoscalingv2.MetricValueStatus{AverageUtilization: m.Resource.CurrentAverageUtilization, AverageValue: ref(m.Resource.CurrentAverageValue)}}
		case m.ContainerResource != nil:
			o.ContainerResource = &autoscalingv2.ContainerResourceMetricStatus{Name: m.ContainerResource.Name, Container: m.ContainerResource.Container,
				Current: autoscalingv2.MetricValueStatus{AverageUtilization: m.ContainerResource.CurrentAverageUtilization, AverageValue: ref(m.ContainerResource.CurrentAverageValue)}}
		case m.External != nil:
			o.External = &autoscalingv2.ExternalMetricStatus{Metric: autoscalingv2.MetricIdentifier{Name: m.External.MetricName, Selector: m.External.MetricSelector},
				Current: autoscalingv2.MetricValueStatus{Value: ref(m.External.CurrentValue), AverageValue: m.External.CurrentAverageValue}}
		}
		out = append(out, o)
	}
	return out
}
