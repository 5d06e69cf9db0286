package evaluator

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// The facts scope matching decides on, exported so that explanations (kubectl quota
// explain) can name them without deciding anything themselves.

// IsTerminating reports whether a pod is in the Terminating scope: spec.activeDeadlineSeconds
// is set and >= 0.
func IsTerminating(pod *corev1.Pod) bool { return isTerminating(pod) }

// UsesCrossNamespacePodAffinity reports whether a pod is in the CrossNamespacePodAffinity
// scope: a pod (anti-)affinity term, required or preferred, names namespaces or has a
// namespace selector.
func UsesCrossNamespacePodAffinity(pod *corev1.Pod) bool { return usesCrossNamespacePodAffinity(pod) }

// VolumeAttributesClassNames returns, sorted, the non-empty volume attributes class names a
// claim refers to (spec, status.currentVolumeAttributesClassName and the target of a
// modification in progress): what the VolumeAttributesClass scope matches against.
func VolumeAttributesClassNames(pvc *corev1.PersistentVolumeClaim) []string {
	return sets.List(volumeAttributesClassNames(pvc))
}
