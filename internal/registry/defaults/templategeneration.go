package defaults

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// DaemonSetTemplateGenerationAnnotation carries a v1 DaemonSet's template generation
// (upstream's spec.templateGeneration of the internal type).
const DaemonSetTemplateGenerationAnnotation = "deprecated.daemonset.template.generation"

// DaemonSetTemplateGeneration is the template generation half of upstream's DaemonSet
// strategy: 1 on create (or the value given, when positive); on update the stored value,
// plus one when the pod template changes. old is nil on create.
func DaemonSetTemplateGeneration(ds, old *appsv1.DaemonSet) {
	gen := int64(1)
	if old == nil {
		if v, err := strconv.ParseInt(ds.Annotations[DaemonSetTemplateGenerationAnnotation], 10, 64); err == nil && v > 1 {
			gen = v
		}
	} else {
		if v, err := strconv.ParseInt(old.Annotations[DaemonSetTemplateGenerationAnnotation], 10, 64); err == nil && v > 0 {
			gen = v
		}
		if !apiequality.Semantic.DeepEqual(ds.Spec.Template, old.Spec.Template) {
			gen++
		}
	}
	if ds.Annotations == nil {
		ds.Annotations = map[string]string{}
	}
	ds.Annotations[DaemonSetTemplateGenerationAnnotation] = strconv.FormatInt(gen, 10)
}
