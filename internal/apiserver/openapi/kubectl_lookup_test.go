package openapi

// These tests parse the documents with the libraries kubectl 1.32 itself uses
// (k8s.io/client-go/openapi3, k8s.io/kube-openapi/pkg/spec3,
// k8s.io/apimachinery/pkg/util/strategicpatch) and repeat the lookups kubectl performs:
//   - cli-runtime's queryParamVerifierV3.HasSupport: the first PATCH operation whose
//     x-kubernetes-group-version-kind is the kind must list a "fieldValidation" parameter;
//   - kubectl apply's Patcher.gvkSupportsPatchOpenAPIV3: that PATCH operation must accept
//     application/strategic-merge-patch+json;
//   - Patcher.buildStrategicMergePatchFromOpenAPIV3: the component schema whose
//     x-kubernetes-group-version-kind list holds the kind is the root of
//     strategicpatch.PatchMetaFromOpenAPIV3.

import (
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi3"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// kubectlRoot serves the documents over HTTP and returns client-go's openapi3.Root on
// them, built exactly as kubectl builds it (discovery client → OpenAPIV3 → NewRoot).
func kubectlRoot(t *testing.T, docs *Documents) openapi3.Root {
	t.Helper()
	srv := httptest.NewServer(docs)
	t.Cleanup(srv.Close)
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return openapi3.NewRoot(dc.OpenAPIV3())
}

func gvkExtensionSingle(ext spec.Extensions, gvk schema.GroupVersionKind) bool {
	var m map[string]string
	if err := ext.GetObject("x-kubernetes-group-version-kind", &m); err != nil {
		return false
	}
	return m["group"] == gvk.Group && m["version"] == gvk.Version && m["kind"] == gvk.Kind
}

func gvkExtensionList(ext spec.Extensions, gvk schema.GroupVersionKind) bool {
	var list []map[string]string
	if err := ext.GetObject("x-kubernetes-group-version-kind", &list); err != nil {
		return false
	}
	for _, m := range list {
		if m["group"] == gvk.Group && m["version"] == gvk.Version && m["kind"] == gvk.Kind {
			return true
		}
	}
	return false
}

// patchOperation returns the PATCH operation kubectl finds for gvk (the first in map order,
// so every one must behave the same: they are all checked).
func patchOperations(doc *spec3.OpenAPI, gvk schema.GroupVersionKind) []*spec3.Operation {
	var ops []*spec3.Operation
	for _, p := range doc.Paths.Paths {
		if p.Patch != nil && gvkExtensionSingle(p.Patch.Extensions, gvk) {
			ops = append(ops, p.Patch)
		}
	}
	return ops
}

func supportsFieldValidation(op *spec3.Operation) bool {
	for _, param := range op.Parameters {
		if param.Name == "fieldValidation" {
			return true
		}
	}
	return false
}

func supportsStrategicPatch(op *spec3.Operation) bool {
	if op.RequestBody == nil || op.RequestBody.Content == nil {
		return false
	}
	_, ok := op.RequestBody.Content["application/strategic-merge-patch+json"]
	return ok
}

// patchMeta is Patcher.buildStrategicMergePatchFromOpenAPIV3's lookup.
func patchMeta(doc *spec3.OpenAPI, gvk schema.GroupVersionKind) (strategicpatch.LookupPatchMeta, bool) {
	for _, s := range doc.Components.Schemas {
		if gvkExtensionList(s.Extensions, gvk) {
			return strategicpatch.PatchMetaFromOpenAPIV3{Schema: s, SchemaList: doc.Components.Schemas}, true
		}
	}
	return nil, false
}

func TestKubectlLookups(t *testing.T) {
	root := kubectlRoot(t, mustBuild(t))
	gvs, err := root.GroupVersions()
	if err != nil {
		t.Fatal(err)
	}
	if len(gvs) != len(mustBuild(t).Paths) {
		t.Fatalf("GroupVersions %v", gvs)
	}
	tests := []struct {
		gvk       schema.GroupVersionKind
		strategic bool
	}{
		{corev1.SchemeGroupVersion.WithKind("Pod"), true},
		{corev1.SchemeGroupVersion.WithKind("ResourceQuota"), true},
		{corev1.SchemeGroupVersion.WithKind("Namespace"), true},
		{corev1.SchemeGroupVersion.WithKind("LimitRange"), true},
		{appsv1.SchemeGroupVersion.WithKind("Deployment"), true},
		{schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, true},
		{schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, true},
		{schema.GroupVersionKind{Group: "stable.example.com", Version: "v1", Kind: "CronTab"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.gvk.Kind, func(t *testing.T) {
			doc, err := root.GVSpec(tt.gvk.GroupVersion())
			if err != nil {
				t.Fatalf("GVSpec: %v", err)
			}
			if doc.Paths == nil || doc.Components == nil {
				t.Fatal("document without paths or components")
			}
			ops := patchOperations(doc, tt.gvk)
			if len(ops) == 0 {
				t.Fatal("no PATCH operation for the kind")
			}
			for _, op := range ops {
				if !supportsFieldValidation(op) {
					t.Errorf("PATCH %s: no fieldValidation: kubectl would validate on the client", op.OperationId)
				}
				if supportsStrategicPatch(op) != tt.strategic {
					t.Errorf("PATCH %s: strategic merge patch = %v, want %v", op.OperationId, !tt.strategic, tt.strategic)
				}
			}
			if _, ok := patchMeta(doc, tt.gvk); !ok {
				t.Error("no component schema with the kind's x-kubernetes-group-version-kind")
			}
		})
	}
	if _, err := root.GVSpec(schema.GroupVersion{Group: "missing.example.com", Version: "v1"}); err == nil {
		t.Error("GVSpec of an unserved group-version succeeded")
	}
}

// TestStrategicMergePatch computes three-way patches from the OpenAPI v3 document the way
// kubectl apply does and checks them against the patches computed from the Go structs
// (what kubectl falls back to when the document is unusable), byte for byte, with
// kubectl apply's default --overwrite=true.
func TestStrategicMergePatch(t *testing.T) {
	root := kubectlRoot(t, mustBuild(t))
	tests := []struct {
		name                        string
		gvk                         schema.GroupVersionKind
		obj                         runtime.Object
		original, modified, current string
		want                        string
		contains                    []string
	}{
		{
			name:     "pod containers merged by name",
			gvk:      corev1.SchemeGroupVersion.WithKind("Pod"),
			obj:      &corev1.Pod{},
			original: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","image":"a:1"},{"name":"b","image":"b:1"}]}}`,
			modified: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","image":"a:2","resources":{"limits":{"cpu":"1"}}},{"name":"c","image":"c:1"}]}}`,
			current:  `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"x":"y"}},"spec":{"containers":[{"name":"a","image":"a:1","terminationMessagePath":"/dev/termination-log"},{"name":"b","image":"b:1"}]}}`,
			want:     `{"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"c"}],"containers":[{"image":"a:2","name":"a","resources":{"limits":{"cpu":"1"}}},{"image":"c:1","name":"c"},{"$patch":"delete","name":"b"}]}}`,
		},
		{
			name:     "pod env, ports and volumes",
			gvk:      corev1.SchemeGroupVersion.WithKind("Pod"),
			obj:      &corev1.Pod{},
			original: `{"spec":{"containers":[{"name":"a","env":[{"name":"A","value":"1"}],"ports":[{"containerPort":80}]}],"volumes":[{"name":"v","emptyDir":{}}]}}`,
			modified: `{"spec":{"containers":[{"name":"a","env":[{"name":"B","value":"2"}],"ports":[{"containerPort":80},{"containerPort":443}]}],"volumes":[{"name":"v","configMap":{"name":"cm"}}]}}`,
			current:  `{"spec":{"containers":[{"name":"a","env":[{"name":"A","value":"1"}],"ports":[{"containerPort":80,"protocol":"TCP"}]}],"volumes":[{"name":"v","emptyDir":{}}]}}`,
			contains: []string{`"$setElementOrder/env":[{"name":"B"}]`, `"$setElementOrder/ports":[{"containerPort":80},{"containerPort":443}]`, `"$retainKeys":["configMap","name"]`},
		},
		{
			name:     "quota hard map",
			gvk:      corev1.SchemeGroupVersion.WithKind("ResourceQuota"),
			obj:      &corev1.ResourceQuota{},
			original: `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":{"pods":"10","requests.cpu":"1"}}}`,
			modified: `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":{"pods":"5","limits.memory":"2Gi"},"scopes":["BestEffort"]}}`,
			current:  `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q","resourceVersion":"7"},"spec":{"hard":{"pods":"10","requests.cpu":"1"}},"status":{"used":{"pods":"1"}}}`,
			want:     `{"spec":{"hard":{"limits.memory":"2Gi","pods":"5","requests.cpu":null},"scopes":["BestEffort"]}}`,
		},
		{
			name:     "deployment template and retainKeys strategy",
			gvk:      appsv1.SchemeGroupVersion.WithKind("Deployment"),
			obj:      &appsv1.Deployment{},
			original: `{"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}},"template":{"spec":{"containers":[{"name":"n","image":"nginx:1"}]}}}}`,
			modified: `{"spec":{"strategy":{"type":"Recreate"},"template":{"metadata":{"labels":{"app":"n"}},"spec":{"containers":[{"name":"n","image":"nginx:2"}]}}}}`,
			current:  `{"spec":{"replicas":3,"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1,"maxUnavailable":"25%"}},"template":{"spec":{"containers":[{"name":"n","image":"nginx:1"}]}}}}`,
			contains: []string{`"$retainKeys":["type"]`, `"$setElementOrder/containers":[{"name":"n"}]`},
		},
		{
			name:     "finalizers and owner references",
			gvk:      corev1.SchemeGroupVersion.WithKind("ResourceQuota"),
			obj:      &corev1.ResourceQuota{},
			original: `{"metadata":{"finalizers":["a"],"ownerReferences":[{"uid":"1","name":"x","kind":"K","apiVersion":"v1"}]}}`,
			modified: `{"metadata":{"finalizers":["b"],"ownerReferences":[{"uid":"2","name":"y","kind":"K","apiVersion":"v1"}]}}`,
			current:  `{"metadata":{"finalizers":["a","c"],"ownerReferences":[{"uid":"1","name":"x","kind":"K","apiVersion":"v1"}]}}`,
			contains: []string{`"$deleteFromPrimitiveList/finalizers":["a"]`, `"$setElementOrder/ownerReferences":[{"uid":"2"}]`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := root.GVSpec(tt.gvk.GroupVersion())
			if err != nil {
				t.Fatal(err)
			}
			meta, ok := patchMeta(doc, tt.gvk)
			if !ok {
				t.Fatal("no schema for the kind")
			}
			got, err := strategicpatch.CreateThreeWayMergePatch([]byte(tt.original), []byte(tt.modified), []byte(tt.current), meta, true)
			if err != nil {
				t.Fatalf("patch from OpenAPI v3: %v", err)
			}
			structMeta, err := strategicpatch.NewPatchMetaFromStruct(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			fromStruct, err := strategicpatch.CreateThreeWayMergePatch([]byte(tt.original), []byte(tt.modified), []byte(tt.current), structMeta, true)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(fromStruct) {
				t.Errorf("patch from OpenAPI v3:\n%s\nfrom Go structs:\n%s", got, fromStruct)
			}
			for _, c := range tt.contains {
				if !strings.Contains(string(got), c) {
					t.Errorf("patch %s lacks %s", got, c)
				}
			}
			if tt.want != "" && string(got) != tt.want {
				t.Errorf("patch:\n got %s\nwant %s", got, tt.want)
			}
			// The patch must apply to the current object.
			if _, err := strategicpatch.StrategicMergePatchUsingLookupPatchMeta([]byte(tt.current), got, meta); err != nil {
				t.Errorf("applying the patch: %v", err)
			}
		})
	}
}

// TestSpec3RoundTrip checks that kube-openapi's spec3 types read every document without
// losing operations or schemas (kubectl decodes with them).
func TestSpec3RoundTrip(t *testing.T) {
	for gvPath, d := range mustBuild(t).Paths {
		var doc spec3.OpenAPI
		if err := json.Unmarshal(d.JSON, &doc); err != nil {
			t.Fatalf("%s: %v", gvPath, err)
		}
		var raw struct {
			Paths      map[string]map[string]json.RawMessage `json:"paths"`
			Components struct {
				Schemas map[string]json.RawMessage `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(d.JSON, &raw); err != nil {
			t.Fatal(err)
		}
		if doc.Version != "3.0.0" {
			t.Errorf("%s: openapi %q", gvPath, doc.Version)
		}
		if len(doc.Paths.Paths) != len(raw.Paths) || len(doc.Components.Schemas) != len(raw.Components.Schemas) {
			t.Errorf("%s: spec3 read %d paths and %d schemas of %d and %d", gvPath,
				len(doc.Paths.Paths), len(doc.Components.Schemas), len(raw.Paths), len(raw.Components.Schemas))
		}
		for p, item := range doc.Paths.Paths {
			ops := map[string]*spec3.Operation{"get": item.Get, "put": item.Put, "post": item.Post, "patch": item.Patch, "delete": item.Delete}
			for method := range raw.Paths[p] {
				if method == "parameters" {
					continue
				}
				if ops[method] == nil {
					t.Errorf("%s: %s %s lost", gvPath, method, p)
				}
			}
		}
		pod, ok := doc.Components.Schemas["io.k8s.api.core.v1.PodSpec"]
		if gvPath == "api/v1" && (!ok || !reflect.DeepEqual(pod.Properties["containers"].Extensions["x-kubernetes-patch-merge-key"], "name")) {
			t.Errorf("PodSpec.containers patch merge key not read by spec3")
		}
	}
}
