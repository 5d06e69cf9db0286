package registry

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestSpecChanged: generation moves with the spec only, compared semantically.
func TestSpecChanged(t *testing.T) {
	replicas := func(n int32) *int32 { return &n }
	base := func() *appsv1.Deployment {
		d := &appsv1.Deployment{}
		d.Name = "d"
		d.Spec.Replicas = replicas(1)
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "nginx", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
		}}}
		return d
	}
	cr := func(spec, status int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]interface{}{"name": "w"},
			"spec": map[string]interface{}{"size": spec}, "status": map[string]interface{}{"seen": status},
		}}
	}
	cases := []struct {
		name   string
		change func(d *appsv1.Deployment)
		want   bool
	}{
		{"nothing", func(d *appsv1.Deployment) {}, false},
		{"replicas", func(d *appsv1.Deployment) { d.Spec.Replicas = replicas(2) }, true},
		{"labels and status", func(d *appsv1.Deployment) { d.Labels = map[string]string{"a": "b"}; d.Status.Replicas = 3 }, false},
		{"same quantity written otherwise", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1000m")
		}, false},
		{"empty instead of nil", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Volumes = []corev1.Volume{} }, false},
		{"image", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:2" }, true},
	}
	for _, c := range cases {
		d := base()
		c.change(d)
		if got := specChanged(d, base()); got != c.want {
			t.Errorf("%s: specChanged = %v, want %v", c.name, got, c.want)
		}
	}
	if !specChanged(cr(2, 0), cr(1, 0)) {
		t.Error("custom resource spec change not seen")
	}
	if specChanged(cr(1, 5), cr(1, 0)) {
		t.Error("custom resource status change counted as a spec change")
	}
}
