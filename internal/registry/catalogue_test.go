package registry

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestSetCustomIgnoresOlderStates: a late deletion of a CRD (an older revision) does not
// remove the resources of the CRD re-created under the same name.
func TestSetCustomIgnoresOlderStates(t *testing.T) {
	cat := NewCatalogue()
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	crd.Name = "widgets.example.com"
	widgets := []*Resource{{GVR: gvr, Kind: "Widget", CRD: crd}}

	cat.SetCustom(crd.Name, 10, widgets) // created
	cat.SetCustom(crd.Name, 12, nil)     // deleted
	cat.SetCustom(crd.Name, 15, widgets) // created again
	cat.SetCustom(crd.Name, 12, nil)     // the deletion, seen late
	cat.SetCustom(crd.Name, 11, widgets) // an old update, seen late
	if cat.Get(gvr) == nil {
		t.Fatal("the re-created CRD's resource is not served")
	}
	cat.SetCustom(crd.Name, 16, nil)
	if cat.Get(gvr) != nil {
		t.Fatal("the resource is served after a newer deletion")
	}
}

// TestKindOf: a typed object without type metadata is named by the resource serving its Go
// type, every built-in kind included; other types are not.
func TestKindOf(t *testing.T) {
	c := NewCatalogue()
	for _, r := range Builtins() {
		obj := reflect.New(r.Type).Interface().(runtime.Object)
		gvk, ok := c.KindOf(obj)
		if !ok || gvk.Kind != r.Kind {
			t.Errorf("%s: %v %v", r.GVR, gvk, ok)
		}
	}
	if gvk, ok := c.KindOf(&networkingv1.ServiceCIDR{}); !ok || gvk != networkingv1.SchemeGroupVersion.WithKind("ServiceCIDR") {
		t.Errorf("ServiceCIDR: %v %v", gvk, ok)
	}
	if gvk, ok := c.KindOf(&metav1.Status{}); ok {
		t.Errorf("Status is no resource's: %v", gvk)
	}
	if _, ok := c.KindOf((*corev1.Pod)(nil)); ok {
		t.Error("a nil pod has a kind")
	}
}
