package validation

import (
	"errors"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/convert"
)

// validMetricSourceTypes is upstream's list of metric source types, sorted.
var validMetricSourceTypes = []string{
	string(autoscalingv2.ContainerResourceMetricSourceType), string(autoscalingv2.ExternalMetricSourceType),
	string(autoscalingv2.ObjectMetricSourceType), string(autoscalingv2.PodsMetricSourceType), string(autoscalingv2.ResourceMetricSourceType),
}

// HorizontalPodAutoscaler validates an autoscaling/v2 HorizontalPodAutoscaler
// (upstream ValidateHorizontalPodAutoscaler, with 1.37's scale to zero).
func HorizontalPodAutoscaler(h *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	errs := objectMeta(&h.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	return append(errs, hpaSpec(&h.Spec, field.NewPath("spec"))...)
}

// HorizontalPodAutoscalerUpdate validates an update of a HorizontalPodAutoscaler.
func HorizontalPodAutoscalerUpdate(n, o *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, hpaSpec(&n.Spec, field.NewPath("spec"))...)
	// What /status writes (upstream's ValidateHorizontalPodAutoscalerStatusUpdate).
	sp := field.NewPath("status")
	errs = append(errs, nonnegative(int64(n.Status.CurrentReplicas), sp.Child("currentReplicas"))...)
	return append(errs, nonnegative(int64(n.Status.DesiredReplicas), sp.Child("desiredReplicas"))...)
}

func hpaSpec(s *autoscalingv2.HorizontalPodAutoscalerSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	// 1.37 scales to zero (HPAScaleToZero): minReplicas may be 0, with an Object or
	// External metric (below).
	if s.MinReplicas != nil && s.MaxReplicas < *s.MinReplicas {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), s.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	rp := p.Child("scaleTargetRef")
	ref := s.ScaleTargetRef
	if ref.Kind == "" {
		errs = append(errs, field.Required(rp.Child("kind"), ""))
	} else {
		errs = append(errs, pathSegment(ref.Kind, rp.Child("kind"))...)
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(rp.Child("name"), ""))
	} else {
		errs = append(errs, pathSegment(ref.Name, rp.Child("name"))...)
	}
	// A ReplicationController's group is the core one; every other target names its group.
	if err := apiVersionOf(ref.APIVersion, ref.Kind == "ReplicationController"); err != nil {
		errs = append(errs, field.Invalid(rp.Child("apiVersion"), ref.APIVersion, err.Error()))
	}
	objectOrExternal := false
	for i := range s.Metrics {
		errs = append(errs, metricSpec(&s.Metrics[i], p.Child("metrics").Index(i))...)
		objectOrExternal = objectOrExternal || s.Metrics[i].Type == autoscalingv2.ObjectMetricSourceType || s.Metrics[i].Type == autoscalingv2.ExternalMetricSourceType
	}
	if s.MinReplicas != nil && *s.MinReplicas == 0 && !objectOrExternal {
		errs = append(errs, field.Forbidden(p.Child("metrics"), "must specify at least one Object or External metric to support scaling to zero replicas"))
	}
	// The bounds upstream's declarative validation checks (1.37): after the others, in the
	// order of the fields.
	if s.MinReplicas != nil && *s.MinReplicas < 0 {
		errs = append(errs, field.Invalid(p.Child("minReplicas"), *s.MinReplicas, "must be greater than or equal to 0"))
	}
	switch {
	case s.MaxReplicas == 0:
		errs = append(errs, field.Required(p.Child("maxReplicas"), ""))
	case s.MaxReplicas < 0:
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), s.MaxReplicas, "must be greater than or equal to 1"))
	}
	return errs
}

// apiVersionOf is upstream's ValidateAPIVersion of a scale target: a group/version, with a
// group unless emptyGroup.
func apiVersionOf(v string, emptyGroup bool) error {
	gv, err := schema.ParseGroupVersion(v)
	if err != nil {
		return err
	}
	if !emptyGroup && gv.Group == "" {
		return errors.New("apiVersion must specify API group")
	}
	return nil
}

func metricSpec(m *autoscalingv2.MetricSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if m.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric source type"))
	}
	if !sets.New(validMetricSourceTypes...).Has(string(m.Type)) {
		errs = append(errs, field.NotSupported(p.Child("type"), m.Type, validMetricSourceTypes))
	}
	present := sets.New[string]()
	if m.Object != nil {
		present.Insert("object")
	}
	if m.Pods != nil {
		present.Insert("pods")
	}
	if m.Resource != nil {
		present.Insert("resource")
		if present.Len() == 1 {
			errs = append(errs, resourceMetricSource(m.Resource.Name, m.Resource.Target, p.Child("resource"))...)
		}
	}
	if m.External != nil {
		present.Insert("external")
	}
	if m.ContainerResource != nil {
		present.Insert("containerResource")
		if present.Len() == 1 {
			cp := p.Child("containerResource")
			if m.ContainerResource.Container == "" {
				errs = append(errs, field.Required(cp.Child("container"), "must specify a container"))
			} else {
				errs = append(errs, nameErrs(nameIsDNSLabel, m.ContainerResource.Container, cp.Child("container"))...)
			}
			errs = append(errs, resourceMetricSource(m.ContainerResource.Name, m.ContainerResource.Target, cp)...)
		}
	}
	var expected string
	missing := func(set bool, name string) {
		expected = name
		if !set {
			errs = append(errs, field.Required(p.Child(name), "must populate information for the given metric source"))
		}
	}
	switch m.Type {
	case autoscalingv2.ObjectMetricSourceType:
		missing(m.Object != nil, "object")
	case autoscalingv2.PodsMetricSourceType:
		missing(m.Pods != nil, "pods")
	case autoscalingv2.ResourceMetricSourceType:
		missing(m.Resource != nil, "resource")
	case autoscalingv2.ContainerResourceMetricSourceType:
		missing(m.ContainerResource != nil, "containerResource")
	case autoscalingv2.ExternalMetricSourceType:
		missing(m.External != nil, "external")
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), m.Type, validMetricSourceTypes))
	}
	if present.Len() != 1 {
		present.Delete(expected)
		for _, t := range sets.List(present) {
			errs = append(errs, field.Forbidden(p.Child(t), "must populate the given metric source only"))
		}
	}
	return errs
}

func resourceMetricSource(name interface{ String() string }, t autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name.String() == "" {
		errs = append(errs, field.Required(p.Child("name"), "must specify a resource name"))
	}
	tp := p.Child("target")
	errs = append(errs, metricTarget(t, tp)...)
	if t.AverageUtilization == nil && t.AverageValue == nil {
		errs = append(errs, field.Required(tp.Child("averageUtilization"), "must set either a target raw value or a target utilization"))
	}
	if t.AverageUtilization != nil && t.AverageValue != nil {
		errs = append(errs, field.Forbidden(tp.Child("averageValue"), "may not set both a target raw value and a target utilization"))
	}
	return errs
}

func metricTarget(t autoscalingv2.MetricTarget, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Type == "" {
		errs = append(errs, field.Required(p.Child("type"), "must specify a metric target type"))
	}
	if t.Type != autoscalingv2.UtilizationMetricType && t.Type != autoscalingv2.ValueMetricType && t.Type != autoscalingv2.AverageValueMetricType {
		errs = append(errs, field.Invalid(p.Child("type"), t.Type, "must be either Utilization, Value, or AverageValue"))
	}
	if t.AverageUtilization != nil && *t.AverageUtilization < 1 {
		errs = append(errs, field.Invalid(p.Child("averageUtilization"), t.AverageUtilization, "must be greater than 0"))
	}
	if t.Value != nil && t.Value.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("value"), t.Value, "must be positive"))
	}
	if t.AverageValue != nil && t.AverageValue.Sign() != 1 {
		errs = append(errs, field.Invalid(p.Child("averageValue"), t.AverageValue, "must be positive"))
	}
	return errs
}

// HorizontalPodAutoscalerV1 validates an autoscaling/v1 HorizontalPodAutoscaler as
// upstream does: in its stored (v2) form, so paths are those of v2.
func HorizontalPodAutoscalerV1(h *autoscalingv1.HorizontalPodAutoscaler) field.ErrorList {
	return HorizontalPodAutoscaler(convert.HPAToV2(h))
}

// HorizontalPodAutoscalerV1Update validates an update of an autoscaling/v1 HorizontalPodAutoscaler.
func HorizontalPodAutoscalerV1Update(n, o *autoscalingv1.HorizontalPodAutoscaler) field.ErrorList {
	return HorizontalPodAutoscalerUpdate(convert.HPAToV2(n), convert.HPAToV2(o))
}
