package registry

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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
