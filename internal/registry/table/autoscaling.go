package table

import (
	"fmt"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// hpaPrinter prints NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE.
func hpaPrinter() Printer {
	return typedPrinter(autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"), func() *autoscalingv2.HorizontalPodAutoscaler { return &autoscalingv2.HorizontalPodAutoscaler{} },
		func() []metav1.TableColumnDefinition {
			spec := autoscalingv2.HorizontalPodAutoscalerSpec{}.SwaggerDoc()
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Reference", Type: "string", Description: spec["scaleTargetRef"]},
				{Name: "Targets", Type: "string", Description: spec["metrics"]},
				{Name: "MinPods", Type: "string", Description: spec["minReplicas"]},
				{Name: "MaxPods", Type: "string", Description: spec["maxReplicas"]},
				{Name: "Replicas", Type: "string", Description: autoscalingv2.HorizontalPodAutoscalerStatus{}.SwaggerDoc()["currentReplicas"]},
				ageColumn(),
			}
		},
		func(h *autoscalingv2.HorizontalPodAutoscaler, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			min := "<unset>"
			if h.Spec.MinReplicas != nil {
				min = fmt.Sprintf("%d", *h.Spec.MinReplicas)
			}
			ref := h.Spec.ScaleTargetRef.Kind + "/" + h.Spec.ScaleTargetRef.Name
			return []interface{}{h.Name, ref, hpaMetrics(h.Spec.Metrics, h.Status.CurrentMetrics), min,
				int64(h.Spec.MaxReplicas), int64(h.Status.CurrentReplicas), since(h.CreationTimestamp, now)}, nil
		})
}

// hpaMetrics is upstream's formatHPAMetrics: "current/target" of the first two
// metrics, "<unknown>" for a current value not reported yet.
func hpaMetrics(specs []autoscalingv2.MetricSpec, statuses []autoscalingv2.MetricStatus) string {
	if len(specs) == 0 {
		return "<none>"
	}
	const max = 2
	list := make([]string, 0, len(specs))
	qty := func(q interface{ String() string }, ok bool) string {
		if !ok {
			return "<unknown>"
		}
		return q.String()
	}
	for i, s := range specs {
		var st *autoscalingv2.MetricStatus
		if i < len(statuses) {
			st = &statuses[i]
		}
		switch {
		case s.Type == autoscalingv2.ExternalMetricSourceType && s.External != nil:
			list = append(list, valueOrAverage(s.External.Target, st != nil && st.External != nil, func() autoscalingv2.MetricValueStatus { return st.External.Current }, qty))
		case s.Type == autoscalingv2.PodsMetricSourceType && s.Pods != nil:
			cur, ok := "<unknown>", st != nil && st.Pods != nil && st.Pods.Current.AverageValue != nil
			if ok {
				cur = st.Pods.Current.AverageValue.String()
			}
			list = append(list, fmt.Sprintf("%s/%s", cur, qty(s.Pods.Target.AverageValue, s.Pods.Target.AverageValue != nil)))
		case s.Type == autoscalingv2.ObjectMetricSourceType && s.Object != nil:
			list = append(list, valueOrAverage(s.Object.Target, st != nil && st.Object != nil, func() autoscalingv2.MetricValueStatus { return st.Object.Current }, qty))
		case s.Type == autoscalingv2.ResourceMetricSourceType && s.Resource != nil:
			has := st != nil && st.Resource != nil
			var cur autoscalingv2.MetricValueStatus
			if has {
				cur = st.Resource.Current
			}
			list = append(list, resourceTarget(s.Resource.Name.String(), s.Resource.Target, has, cur))
		case s.Type == autoscalingv2.ContainerResourceMetricSourceType && s.ContainerResource != nil:
			has := st != nil && st.ContainerResource != nil
			var cur autoscalingv2.MetricValueStatus
			if has {
				cur = st.ContainerResource.Current
			}
			list = append(list, resourceTarget(s.ContainerResource.Name.String(), s.ContainerResource.Target, has, cur))
		default:
			list = append(list, "<unknown type>")
		}
	}
	if len(list) > max {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:max], ", "), len(list)-max)
	}
	return strings.Join(list, ", ")
}

func valueOrAverage(t autoscalingv2.MetricTarget, has bool, cur func() autoscalingv2.MetricValueStatus, qty func(interface{ String() string }, bool) string) string {
	if t.AverageValue != nil {
		ok := has && cur().AverageValue != nil
		c := "<unknown>"
		if ok {
			c = cur().AverageValue.String()
		}
		return fmt.Sprintf("%s/%s (avg)", c, t.AverageValue.String())
	}
	c := "<unknown>"
	if has && cur().Value != nil {
		c = cur().Value.String()
	}
	return fmt.Sprintf("%s/%s", c, qty(t.Value, t.Value != nil))
}

func resourceTarget(name string, t autoscalingv2.MetricTarget, has bool, cur autoscalingv2.MetricValueStatus) string {
	if t.AverageValue != nil {
		c := "<unknown>"
		if has && cur.AverageValue != nil {
			c = cur.AverageValue.String()
		}
		return fmt.Sprintf("%s: %s/%s", name, c, t.AverageValue.String())
	}
	c := "<unknown>"
	if has && cur.AverageUtilization != nil {
		c = fmt.Sprintf("%d%%", *cur.AverageUtilization)
	}
	target := "<auto>"
	if t.AverageUtilization != nil {
		target = fmt.Sprintf("%d%%", *t.AverageUtilization)
	}
	return fmt.Sprintf("%s: %s/%s", name, c, target)
}
