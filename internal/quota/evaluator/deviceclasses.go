package evaluator

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DRA extended resources (KEP-5004): a DeviceClass backs the extended resource named by
// its spec.extendedResourceName and the implicit deviceclass.resource.kubernetes.io/<class>.
// Pods requesting either are charged requests.<name> by the pod evaluator (no class is
// consulted, as upstream); claims for the class are charged requests.<name> by the claim
// evaluator, which reads the classes through DeviceClasses.

// DeviceClasses gives the claim evaluator read access to the DRA device classes, as
// upstream's evaluator reads its DeviceClass informer. Implementations read a watch-fed
// cache (a running server) or storage (the checker); nil means no class exists.
type DeviceClasses interface {
	// DeviceClasses returns every stored DeviceClass. Callers do not modify them.
	DeviceClasses() ([]*resourcev1.DeviceClass, error)
}

// classMapping is upstream's extended resource cache, computed from a list of classes:
// the explicit extended resource name of each class, and the extended resource names some
// class backs (explicit names and deviceclass.resource.kubernetes.io/<class>).
type classMapping struct {
	byClass map[string]string
	backed  map[corev1.ResourceName]bool
}

// newClassMapping builds the mapping of classes (nil and empty lists map nothing).
func newClassMapping(classes []*resourcev1.DeviceClass) classMapping {
	m := classMapping{byClass: map[string]string{}, backed: map[corev1.ResourceName]bool{}}
	for _, c := range classes {
		m.backed[corev1.ResourceName(resourcev1.ResourceDeviceClassPrefix+c.Name)] = true
		if c.Spec.ExtendedResourceName != nil {
			m.byClass[c.Name] = *c.Spec.ExtendedResourceName
			m.backed[corev1.ResourceName(*c.Spec.ExtendedResourceName)] = true
		}
	}
	return m
}

// readClasses reads dc into a mapping (an empty one for nil).
func readClasses(dc DeviceClasses) (classMapping, error) {
	if dc == nil {
		return newClassMapping(nil), nil
	}
	classes, err := dc.DeviceClasses()
	if err != nil {
		return classMapping{}, err
	}
	return newClassMapping(classes), nil
}

// isDRAExtendedResourceName reports whether a pod's request name is the implicit
// extended resource of a device class, deviceclass.resource.kubernetes.io/<class> (with
// extended resource names, upstream's schedutil.IsDRAExtendedResourceName).
func isDRAExtendedResourceName(name corev1.ResourceName) bool {
	return strings.HasPrefix(string(name), resourcev1.ResourceDeviceClassPrefix)
}

// isPodOwnedExtendedResourceClaim reports whether claim is the one kube-scheduler creates
// for a pod's DRA-backed extended resource requests: annotated
// resource.kubernetes.io/extended-resource-claim=true and controlled by a v1 Pod.
func isPodOwnedExtendedResourceClaim(claim *resourcev1.ResourceClaim) bool {
	if claim.Annotations[resourcev1.ExtendedResourceClaimAnnotation] != "true" {
		return false
	}
	ref := metav1.GetControllerOfNoCopy(claim)
	return ref != nil && ref.Kind == "Pod" && ref.APIVersion == "v1"
}
