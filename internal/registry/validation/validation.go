package validation

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Name rules of the served kinds (upstream ValidateXxxName).
var (
	nameIsDNSSubdomain = apimachineryvalidation.NameIsDNSSubdomain
	nameIsDNSLabel     = apimachineryvalidation.NameIsDNSLabel
	nameIsDNS1035Label = apimachineryvalidation.NameIsDNS1035Label
)

// NameFunc validates an object name; prefix is true for generateName
// prefixes, which may end in a dash.
type NameFunc func(name string, prefix bool) []string

// NameRule returns the name rule upstream applies to the kind of obj:
// DNS-1035 label for Services, DNS-1123 label for Namespaces and
// StatefulSets, DNS-1123 subdomain otherwise. Name generation uses it to
// check generateName.
func NameRule(obj runtime.Object) NameFunc {
	switch obj.(type) {
	case *corev1.Service:
		return nameIsDNS1035Label
	case *corev1.Namespace, *appsv1.StatefulSet:
		return nameIsDNSLabel
	case *rbacv1.Role, *rbacv1.ClusterRole, *rbacv1.RoleBinding, *rbacv1.ClusterRoleBinding:
		return rbacName
	}
	return nameIsDNSSubdomain
}

// standardFinalizers are the finalizer names allowed without a "/".
var standardFinalizers = map[string]bool{
	string(corev1.FinalizerKubernetes): true,
	metav1.FinalizerOrphanDependents:   true,
	metav1.FinalizerDeleteDependents:   true,
}

// kubeFinalizerName is upstream's validateKubeFinalizerName.
func kubeFinalizerName(s string, p *field.Path) field.ErrorList {
	if !strings.Contains(s, "/") && !standardFinalizers[s] {
		return field.ErrorList{field.Invalid(p, s, "name is neither a standard finalizer name nor is it fully qualified")}
	}
	return nil
}

// objectMeta is upstream core ValidateObjectMeta: the generic metadata
// rules plus the Kubernetes finalizer-name rule.
func objectMeta(m *metav1.ObjectMeta, namespaced bool, nameFn NameFunc, p *field.Path) field.ErrorList {
	errs := apimachineryvalidation.ValidateObjectMeta(m, namespaced, apimachineryvalidation.ValidateNameFunc(nameFn), p)
	for i := range m.Finalizers {
		errs = append(errs, kubeFinalizerName(m.Finalizers[i], p.Child("finalizers").Index(i))...)
	}
	return errs
}

// objectMetaUpdate is upstream core ValidateObjectMetaUpdate.
func objectMetaUpdate(n, o *metav1.ObjectMeta, p *field.Path) field.ErrorList {
	errs := apimachineryvalidation.ValidateObjectMetaUpdate(n, o, p)
	for i := range n.Finalizers {
		errs = append(errs, kubeFinalizerName(n.Finalizers[i], p.Child("finalizers").Index(i))...)
	}
	return errs
}

var metaPath = field.NewPath("metadata")
