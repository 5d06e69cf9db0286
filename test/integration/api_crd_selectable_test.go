package integration

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestCustomResourceSelectableFields: a CRD version's selectableFields are field selector
// labels of its custom resources, for lists and watches, as apiextensions-apiserver serves
// them (a missing field is ""); other labels are refused with upstream's 400; a CRD naming a
// field that cannot be selected is refused with upstream's 422.
func TestCustomResourceSelectableFields(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "sel")
	ext, err := apiextensions.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	crds := ext.ApiextensionsV1().CustomResourceDefinitions()
	crd := widgetCRD("paints", "Paint", apiextensionsv1.NamespaceScoped)
	crd.Spec.Versions[0].SelectableFields = []apiextensionsv1.SelectableField{{JSONPath: ".spec.color"}, {JSONPath: ".spec.size"}}
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "paints"}
	c := s.Dynamic.Resource(gvr).Namespace("sel")
	w, err := c.Watch(ctx, metav1.ListOptions{FieldSelector: "spec.color=blue"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for name, spec := range map[string]map[string]interface{}{
		"sky":   {"color": "blue", "size": int64(3)},
		"sea":   {"color": "blue", "size": int64(7)},
		"grass": {"color": "green", "size": int64(3)},
		"plain": {"size": int64(1)},
	} {
		if _, err := c.Create(ctx, cr("Paint", name, spec), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for sel, want := range map[string][]string{
		"spec.color=blue":                     {"sea", "sky"},
		"spec.color!=blue":                    {"grass", "plain"},
		"spec.size=3":                         {"grass", "sky"},
		"spec.color=blue,spec.size=3":         {"sky"},
		"spec.color=":                         {"plain"},
		"metadata.name=sea,spec.size=7":       {"sea"},
		"metadata.namespace=sel,spec.size!=3": {"plain", "sea"},
	} {
		if got := listNames(t, ctx, c, sel); !slices.Equal(got, want) {
			t.Errorf("field selector %q: %v, want %v", sel, got, want)
		}
	}
	// The watch saw the blue ones only.
	var seen []string
	for len(seen) < 2 {
		ev := nextEvent(t, w)
		if ev.Type != watch.Added {
			t.Fatalf("event %s", ev.Type)
		}
		seen = append(seen, ev.Object.(*unstructured.Unstructured).GetName())
	}
	sort.Strings(seen)
	if !slices.Equal(seen, []string{"sea", "sky"}) {
		t.Errorf("watch with spec.color=blue saw %v", seen)
	}
	// A field that is not selectable: upstream's 400.
	_, err = c.List(ctx, metav1.ListOptions{FieldSelector: "spec.replicas=1"})
	if !apierrors.IsBadRequest(err) || err.Error() != "field label not supported: spec.replicas" {
		t.Errorf("unselectable field: %v", err)
	}

	// CRDs whose selectable fields cannot be served: upstream's 422s.
	bad := widgetCRD("bads", "Bad", apiextensionsv1.NamespaceScoped)
	bad.Spec.Versions[0].SelectableFields = []apiextensionsv1.SelectableField{
		{JSONPath: ".spec.nope"}, {JSONPath: ".spec"}, {JSONPath: ".spec.color"}, {JSONPath: ".spec.color"}, {JSONPath: ""}, {JSONPath: ".spec.list[0]"},
	}
	_, err = crds.Create(ctx, bad, metav1.CreateOptions{})
	want := `CustomResourceDefinition.apiextensions.k8s.io "bads.example.com" is invalid: [` +
		`spec.versions[0].selectableFields[0].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field, ` +
		`spec.versions[0].selectableFields[1].jsonPath: Invalid value: ".spec": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed., ` +
		`spec.versions[0].selectableFields[3].jsonPath: Duplicate value: ".spec.color", ` +
		`spec.versions[0].selectableFields[4].jsonPath: Required value, ` +
		`spec.versions[0].selectableFields[5].jsonPath: Invalid value: ".spec.list[0]": is an invalid path: array notation is not allowed]`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("invalid selectable fields:\n got %v\nwant %s", err, want)
	}
	tooMany := widgetCRD("manys", "Many", apiextensionsv1.NamespaceScoped)
	props := tooMany.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	for i := 0; i < 9; i++ {
		name := fmt.Sprintf("f%d", i)
		props.Properties[name] = apiextensionsv1.JSONSchemaProps{Type: "string"}
		tooMany.Spec.Versions[0].SelectableFields = append(tooMany.Spec.Versions[0].SelectableFields, apiextensionsv1.SelectableField{JSONPath: ".spec." + name})
	}
	_, err = crds.Create(ctx, tooMany, metav1.CreateOptions{})
	want = `CustomResourceDefinition.apiextensions.k8s.io "manys.example.com" is invalid: spec.versions[0].selectableFields: Too many: 9: must have at most 8 items`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("nine selectable fields:\n got %v\nwant %s", err, want)
	}
	if _, err := crds.Get(ctx, "bads.example.com", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused CRD was stored: %v", err)
	}
}

func listNames(t *testing.T, ctx context.Context, c dynamic.ResourceInterface, sel string) []string {
	t.Helper()
	l, err := c.List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		t.Fatalf("list with %q: %v", sel, err)
	}
	var out []string
	for _, o := range l.Items {
		out = append(out, o.GetName())
	}
	sort.Strings(out)
	return out
}
