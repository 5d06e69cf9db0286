package validation

import (
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/convert"
)

// RuntimeClass validates a node.k8s.io RuntimeClass (upstream
// ValidateRuntimeClass): the handler is a DNS label, the overhead a valid
// resource list, the scheduling constraints valid labels and tolerations.
func RuntimeClass(rc *nodev1.RuntimeClass) field.ErrorList {
	errs := objectMeta(&rc.ObjectMeta, false, nameIsDNSSubdomain, metaPath)
	errs = append(errs, nameErrs(nameIsDNSLabel, rc.Handler, field.NewPath("handler"))...)
	if rc.Overhead != nil {
		errs = append(errs, resourceRequirements(&corev1.ResourceRequirements{Limits: rc.Overhead.PodFixed}, containerResourceName, nil, field.NewPath("overhead"))...)
	}
	if rc.Scheduling != nil {
		sp := field.NewPath("scheduling")
		if rc.Scheduling.NodeSelector != nil {
			errs = append(errs, metav1validation.ValidateLabels(rc.Scheduling.NodeSelector, sp.Child("nodeSelector"))...)
		}
		tp := sp.Child("tolerations")
		errs = append(errs, tolerations(rc.Scheduling.Tolerations, tp)...)
		seen := map[corev1.Toleration]bool{}
		for i, t := range rc.Scheduling.Tolerations {
			k := corev1.Toleration{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: t.Effect}
			if seen[k] {
				errs = append(errs, field.Duplicate(tp.Index(i), convert.InternalJSON(t)))
			}
			seen[k] = true
		}
	}
	return errs
}

// RuntimeClassUpdate validates an update of a RuntimeClass: the new object's
// validity, and the handler is immutable.
func RuntimeClassUpdate(n, o *nodev1.RuntimeClass) field.ErrorList {
	errs := RuntimeClass(n)
	errs = append(errs, objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
	return append(errs, immutable(n.Handler, o.Handler, field.NewPath("handler"))...)
}
