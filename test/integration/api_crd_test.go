package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/server/servertest"
)

// widgetCRD returns a CRD with a structural schema, /status and /scale.
func widgetCRD(plural, kind string, scope apiextensionsv1.ResourceScope) *apiextensionsv1.CustomResourceDefinition {
	obj := func(props map[string]apiextensionsv1.JSONSchemaProps) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props}
	}
	sel := ".status.selector"
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Singular: kind[:1] + kind[1:], Kind: kind, ListKind: kind + "List"},
			Scope: scope,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   obj(map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "integer"}, "replicas": {Type: "integer"}, "color": {Type: "string"}}),
						"status": obj(map[string]apiextensionsv1.JSONSchemaProps{"phase": {Type: "string"}, "replicas": {Type: "integer"}, "selector": {Type: "string"}}),
					},
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{
					Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
					Scale:  &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: &sel},
				},
			}},
		},
	}
}

func cr(kind, name string, spec map[string]interface{}) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "example.com/v1", "kind": kind,
		"metadata": map[string]interface{}{"name": name},
		"spec":     spec,
	}}
}

// TestCustomResources creates namespaced and cluster-scoped CRDs with the apiextensions
// clientset and walks their custom resources through the dynamic client.
func TestCustomResources(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "crs")
	ext, err := apiextensions.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	crds := ext.ApiextensionsV1().CustomResourceDefinitions()
	for _, tc := range []struct {
		plural, kind string
		scope        apiextensionsv1.ResourceScope
		ns           string
	}{
		{"widgets", "Widget", apiextensionsv1.NamespaceScoped, "crs"},
		{"gadgets", "Gadget", apiextensionsv1.ClusterScoped, ""},
	} {
		t.Run(tc.plural, func(t *testing.T) {
			created, err := crds.Create(ctx, widgetCRD(tc.plural, tc.kind, tc.scope), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			established := false
			for _, c := range created.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					established = true
				}
			}
			if !established || created.Status.AcceptedNames.Kind != tc.kind {
				t.Errorf("CRD status %+v", created.Status)
			}
			// Discovery lists the new resource with its subresources.
			rl, err := s.Client.Discovery().ServerResourcesForGroupVersion("example.com/v1")
			if err != nil {
				t.Fatal(err)
			}
			found := map[string]bool{}
			for _, r := range rl.APIResources {
				found[r.Name] = r.Namespaced == (tc.ns != "")
			}
			if !found[tc.plural] || !found[tc.plural+"/status"] || !found[tc.plural+"/scale"] {
				t.Errorf("discovery of example.com/v1: %v", found)
			}
			gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: tc.plural}
			var c dynamic.ResourceInterface = s.Dynamic.Resource(gvr)
			if tc.ns != "" {
				c = s.Dynamic.Resource(gvr).Namespace(tc.ns)
			}
			walkCustomResource(t, ctx, c, tc.kind)

			// Deleting the CRD deletes its custom resources, then the CRD.
			for _, n := range []string{"a", "b"} {
				if _, err := c.Create(ctx, cr(tc.kind, n, map[string]interface{}{"size": int64(1)}), metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			w, err := crds.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + created.Name})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			if err := crds.Delete(ctx, created.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			for {
				if ev := nextEvent(t, w); ev.Type == watch.Deleted {
					break
				}
			}
			if _, err := c.List(ctx, metav1.ListOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("list after the CRD is gone: %v", err)
			}
			// Re-creating the CRD serves an empty resource: the old objects are gone.
			if _, err := crds.Create(ctx, widgetCRD(tc.plural, tc.kind, tc.scope), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			l, err := c.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("list after re-creating the CRD: %v", err)
			}
			if len(l.Items) != 0 {
				t.Errorf("%d custom resources after re-creating the CRD, want none", len(l.Items))
			}
		})
	}
}

// walkCustomResource checks CRUD, the status split, generation, scale and patches.
func walkCustomResource(t *testing.T, ctx context.Context, c dynamic.ResourceInterface, kind string) {
	t.Helper()
	created, err := c.Create(ctx, cr(kind, "w", map[string]interface{}{"size": int64(3), "replicas": int64(1)}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.GetUID() == "" || created.GetResourceVersion() == "" || created.GetGeneration() != 1 {
		t.Errorf("created: uid %q rv %q generation %d", created.GetUID(), created.GetResourceVersion(), created.GetGeneration())
	}
	// Status sent on create is dropped (the resource has /status).
	withStatus := cr(kind, "s", nil)
	withStatus.Object["status"] = map[string]interface{}{"phase": "Ready"}
	ws, err := c.Create(ctx, withStatus, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ws.Object["status"]; ok {
		t.Errorf("create kept status: %v", ws.Object["status"])
	}
	if _, err := c.Create(ctx, cr(kind, "w", nil), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("duplicate create: %v", err)
	}
	got, err := c.Get(ctx, "w", metav1.GetOptions{})
	if err != nil || got.GetResourceVersion() != created.GetResourceVersion() {
		t.Fatalf("get: %v", err)
	}
	if size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); size != 3 {
		t.Errorf("spec.size = %d", size)
	}
	l, err := c.List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 2 || l.GetResourceVersion() == "" {
		t.Fatalf("list: %v %d items", err, len(l.Items))
	}
	// Label-only update: generation stays; spec update: generation 2.
	got.SetLabels(map[string]string{"a": "b"})
	up, err := c.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil || up.GetGeneration() != 1 || up.GetResourceVersion() == got.GetResourceVersion() {
		t.Fatalf("label update: %v generation %d", err, up.GetGeneration())
	}
	_ = unstructured.SetNestedField(up.Object, int64(4), "spec", "size")
	_ = unstructured.SetNestedField(up.Object, "Ready", "status", "phase")
	up2, err := c.Update(ctx, up, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if size, _, _ := unstructured.NestedInt64(up2.Object, "spec", "size"); size != 4 || up2.GetGeneration() != 2 {
		t.Errorf("spec update: size %d generation %d", size, up2.GetGeneration())
	}
	if _, ok, _ := unstructured.NestedString(up2.Object, "status", "phase"); ok {
		t.Errorf("main resource stored status: %v", up2.Object["status"])
	}
	// /status stores status and ignores spec.
	_ = unstructured.SetNestedField(up2.Object, int64(99), "spec", "size")
	_ = unstructured.SetNestedField(up2.Object, "Ready", "status", "phase")
	_ = unstructured.SetNestedField(up2.Object, "app=w", "status", "selector")
	_ = unstructured.SetNestedField(up2.Object, int64(1), "status", "replicas")
	st, err := c.UpdateStatus(ctx, up2, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	phase, _, _ := unstructured.NestedString(st.Object, "status", "phase")
	size, _, _ := unstructured.NestedInt64(st.Object, "spec", "size")
	if phase != "Ready" || size != 4 || st.GetGeneration() != 2 {
		t.Errorf("/status: phase %q size %d generation %d", phase, size, st.GetGeneration())
	}
	// /scale.
	sc, err := c.Get(ctx, "w", metav1.GetOptions{}, "scale")
	if err != nil {
		t.Fatal(err)
	}
	if sc.GetKind() != "Scale" || sc.GetAPIVersion() != "autoscaling/v1" {
		t.Errorf("scale kind %s/%s", sc.GetAPIVersion(), sc.GetKind())
	}
	specReplicas, _, _ := unstructured.NestedInt64(sc.Object, "spec", "replicas")
	statusReplicas, _, _ := unstructured.NestedInt64(sc.Object, "status", "replicas")
	selector, _, _ := unstructured.NestedString(sc.Object, "status", "selector")
	if specReplicas != 1 || statusReplicas != 1 || selector != "app=w" {
		t.Errorf("scale: spec %d status %d selector %q", specReplicas, statusReplicas, selector)
	}
	if _, err := c.Patch(ctx, "w", types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{}, "scale"); err != nil {
		t.Fatal(err)
	}
	scaled, err := c.Get(ctx, "w", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(scaled.Object, "spec", "replicas"); r != 5 || scaled.GetGeneration() != 3 {
		t.Errorf("after scale: replicas %d generation %d", r, scaled.GetGeneration())
	}
	// Patches: JSON and merge work; strategic merge is 415 with upstream's text.
	_, err = c.Patch(ctx, "w", types.JSONPatchType, []byte(`[{"op":"remove","path":"/spec/missing"}]`), metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) || err.Error() != "the server rejected our request due to an error in our request" {
		t.Errorf("JSON patch remove of a missing path: %v, want 422", err)
	}
	p, err := c.Patch(ctx, "w", types.JSONPatchType, []byte(`[{"op":"add","path":"/spec/color","value":"red"}]`), metav1.PatchOptions{})
	if color, _, _ := unstructured.NestedString(p.Object, "spec", "color"); err != nil || color != "red" {
		t.Errorf("JSON patch: %v %q", err, color)
	}
	p, err = c.Patch(ctx, "w", types.MergePatchType, []byte(`{"spec":{"color":"blue"}}`), metav1.PatchOptions{})
	if color, _, _ := unstructured.NestedString(p.Object, "spec", "color"); err != nil || color != "blue" {
		t.Errorf("merge patch: %v %q", err, color)
	}
	_, err = c.Patch(ctx, "w", types.StrategicMergePatchType, []byte(`{"spec":{"color":"green"}}`), metav1.PatchOptions{})
	want := "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
	if !apierrors.IsUnsupportedMediaType(err) || err.Error() != want {
		t.Errorf("strategic merge patch on a custom resource:\n got %v\nwant %s", err, want)
	}
	// Server-side apply: the object was written without it, so its fields are owned by
	// "before-first-apply" and changing one conflicts unless forced.
	applied := []byte(`{"apiVersion":"example.com/v1","kind":"` + kind + `","metadata":{"name":"w"},"spec":{"color":"green"}}`)
	_, err = c.Patch(ctx, "w", types.ApplyPatchType, applied, metav1.PatchOptions{FieldManager: "test"})
	want = `Apply failed with 1 conflict: conflict with "before-first-apply" using example.com/v1: .spec.color`
	if !apierrors.IsConflict(err) || err.Error() != want {
		t.Errorf("apply changing a field written before:\n got %v\nwant 409 %s", err, want)
	}
	force := true
	p, err = c.Patch(ctx, "w", types.ApplyPatchType, applied, metav1.PatchOptions{FieldManager: "test", Force: &force})
	if err != nil {
		t.Fatalf("apply patch: %v", err)
	}
	if color, _, _ := unstructured.NestedString(p.Object, "spec", "color"); color != "green" {
		t.Errorf("apply patch: color %q", color)
	}
	// Stale update.
	_, err = c.Update(ctx, got, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		t.Errorf("stale update: %v", err)
	}
	// An update without a resourceVersion: custom resources allow none (kube-apiserver
	// v1.37.2's answer), and nothing is written.
	unversioned := got.DeepCopy()
	unversioned.SetResourceVersion("")
	unversioned.Object["spec"] = map[string]interface{}{"color": "blue"}
	_, err = c.Update(ctx, unversioned, metav1.UpdateOptions{})
	if want := `.example.com "w" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`; !apierrors.IsInvalid(err) || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("update without a resourceVersion:\n got %v\nwant 422 %s", err, want)
	}
	// Delete: answered with a Status, as upstream answers for custom resources.
	for _, n := range []string{"w", "s"} {
		if err := c.Delete(ctx, n, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Get(ctx, n, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("after delete: %v", err)
		}
	}
}

// TestCustomResourceFieldValidation: unknown fields of custom resources are pruned by the
// structural schema, and reported under Strict and Warn with upstream's texts.
func TestCustomResourceFieldValidation(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	ext, err := apiextensions.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	crd := widgetCRD("widgets", "Widget", apiextensionsv1.NamespaceScoped)
	preserve := true
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["extra"] = apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["items"] = apiextensionsv1.JSONSchemaProps{Type: "array",
		Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"name": {Type: "string"}}}}}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ws := &warnings{}
	cfg := rest.CopyConfig(s.Config)
	cfg.WarningHandler = ws
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := dyn.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}).Namespace("default")
	obj := func(name string) *unstructured.Unstructured {
		u := cr("Widget", name, map[string]interface{}{
			"size": int64(1), "foo": "x",
			"extra": map[string]interface{}{"anything": map[string]interface{}{"goes": true}},
			"items": []interface{}{map[string]interface{}{"name": "a", "bad": int64(1)}},
		})
		_ = unstructured.SetNestedField(u.Object, "y", "metadata", "bogus")
		return u
	}
	const unknown = `unknown field "metadata.bogus", unknown field "spec.foo", unknown field "spec.items[0].bad"`
	_, err = c.Create(ctx, obj("strict"), metav1.CreateOptions{FieldValidation: "Strict"})
	if want := `Widget in version "v1" cannot be handled as a Widget: strict decoding error: ` + unknown; !apierrors.IsBadRequest(err) || err.Error() != want {
		t.Errorf("strict:\n got %v\nwant %s", err, want)
	}
	ws.take()
	for _, tc := range []struct{ fv, warn string }{
		{"Warn", `unknown field "metadata.bogus"|unknown field "spec.foo"|unknown field "spec.items[0].bad"`},
		{"Ignore", ""},
	} {
		got, err := c.Create(ctx, obj("w-"+strings.ToLower(tc.fv)), metav1.CreateOptions{FieldValidation: tc.fv})
		if err != nil {
			t.Fatalf("%s: %v", tc.fv, err)
		}
		if w := strings.Join(ws.take(), "|"); w != tc.warn {
			t.Errorf("%s warnings %q, want %q", tc.fv, w, tc.warn)
		}
		spec, _, _ := unstructured.NestedMap(got.Object, "spec")
		md, _, _ := unstructured.NestedMap(got.Object, "metadata")
		if _, ok := spec["foo"]; ok {
			t.Errorf("%s: spec.foo kept", tc.fv)
		}
		if _, ok := md["bogus"]; ok {
			t.Errorf("%s: metadata.bogus kept", tc.fv)
		}
		if goes, _, _ := unstructured.NestedBool(got.Object, "spec", "extra", "anything", "goes"); !goes {
			t.Errorf("%s: x-kubernetes-preserve-unknown-fields subtree pruned: %v", tc.fv, spec)
		}
		items, _, _ := unstructured.NestedSlice(got.Object, "spec", "items")
		if len(items) != 1 || fmt.Sprint(items[0]) != "map[name:a]" {
			t.Errorf("%s: items %v", tc.fv, items)
		}
	}
}
