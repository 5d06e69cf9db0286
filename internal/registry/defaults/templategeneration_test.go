package defaults

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDaemonSetTemplateGeneration(t *testing.T) {
	ds := func(gen, image string) *appsv1.DaemonSet {
		d := &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}}}}
		if gen != "" {
			d.ObjectMeta = metav1.ObjectMeta{Annotations: map[string]string{DaemonSetTemplateGenerationAnnotation: gen}}
		}
		return d
	}
	tests := []struct {
		name     string
		obj, old *appsv1.DaemonSet
		want     string
	}{
		{"create", ds("", "a"), nil, "1"},
		{"create with a given generation", ds("4", "a"), nil, "4"},
		{"create with a bad value", ds("x", "a"), nil, "1"},
		{"update, same template", ds("", "a"), ds("3", "a"), "3"},
		{"update, user value ignored", ds("9", "a"), ds("3", "a"), "3"},
		{"update, template changed", ds("3", "b"), ds("3", "a"), "4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			DaemonSetTemplateGeneration(tt.obj, tt.old)
			if got := tt.obj.Annotations[DaemonSetTemplateGenerationAnnotation]; got != tt.want {
				t.Errorf("generation = %q, want %q", got, tt.want)
			}
		})
	}
}
