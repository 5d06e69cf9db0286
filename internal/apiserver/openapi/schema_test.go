package openapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// built caches one Build of the fixture for the read-only tests.
var built = sync.OnceValues(func() (*Documents, error) { return Build(served()) })

func mustBuild(t testing.TB) *Documents {
	t.Helper()
	docs, err := built()
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return docs
}

// document returns the parsed document of a group-version path.
func document(t testing.TB, gvPath string) map[string]any {
	t.Helper()
	doc, ok := mustBuild(t).Paths[gvPath]
	if !ok {
		t.Fatalf("no document for %q", gvPath)
	}
	var m map[string]any
	if err := json.Unmarshal(doc.JSON, &m); err != nil {
		t.Fatalf("%s: %v", gvPath, err)
	}
	return m
}

// lookup follows a "/"-separated path of object keys and array indexes.
func lookup(v any, path string) (any, bool) {
	for _, key := range strings.Split(path, "/") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[key]; !ok {
				return nil, false
			}
		case []any:
			i := 0
			for _, c := range key {
				if c < '0' || c > '9' {
					return nil, false
				}
				i = i*10 + int(c-'0')
			}
			if i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

const (
	schemas = "components/schemas/"
	core    = schemas + "io.k8s.api.core.v1."
	meta    = schemas + "io.k8s.apimachinery.pkg.apis.meta.v1."
	refMeta = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1."
)

func TestSchemas(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		path string
		want string // JSON; empty means the path must be absent
	}{
		// Strategic-merge metadata from the struct tags.
		{"containers merge strategy", "api/v1", core + "PodSpec/properties/containers/x-kubernetes-patch-strategy", `"merge"`},
		{"containers merge key", "api/v1", core + "PodSpec/properties/containers/x-kubernetes-patch-merge-key", `"name"`},
		{"containers list type", "api/v1", core + "PodSpec/properties/containers/x-kubernetes-list-type", `"map"`},
		{"containers list keys", "api/v1", core + "PodSpec/properties/containers/x-kubernetes-list-map-keys", `["name"]`},
		{"containers items", "api/v1", core + "PodSpec/properties/containers/items",
			`{"allOf":[{"$ref":"#/components/schemas/io.k8s.api.core.v1.Container"}],"default":{}}`},
		{"volumes retainKeys", "api/v1", core + "PodSpec/properties/volumes/x-kubernetes-patch-strategy", `"merge,retainKeys"`},
		{"container ports keys (override)", "api/v1", core + "Container/properties/ports/x-kubernetes-list-map-keys", `["containerPort","protocol"]`},
		{"service ports keys (override)", "api/v1", core + "ServiceSpec/properties/ports/x-kubernetes-list-map-keys", `["port","protocol"]`},
		{"finalizers set", "api/v1", meta + "ObjectMeta/properties/finalizers/x-kubernetes-list-type", `"set"`},
		{"finalizers merge", "api/v1", meta + "ObjectMeta/properties/finalizers/x-kubernetes-patch-strategy", `"merge"`},
		{"ownerReferences keyed by uid", "api/v1", meta + "ObjectMeta/properties/ownerReferences/x-kubernetes-list-map-keys", `["uid"]`},
		{"command has no list type", "api/v1", core + "Container/properties/command/x-kubernetes-list-type", ``},
		{"deployment strategy retainKeys", "apis/apps/v1", schemas + "io.k8s.api.apps.v1.DeploymentSpec/properties/strategy",
			`{"allOf":[{"$ref":"#/components/schemas/io.k8s.api.apps.v1.DeploymentStrategy"}],"default":{},"description":"The deployment strategy to use to replace existing pods with new ones.","x-kubernetes-patch-strategy":"retainKeys"}`},

		// Quantities and int-or-string.
		{"limits is a map of Quantity", "api/v1", core + "ResourceRequirements/properties/limits/additionalProperties",
			`{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity"}`},
		{"limits is an object", "api/v1", core + "ResourceRequirements/properties/limits/type", `"object"`},
		{"quota hard is a map of Quantity", "api/v1", core + "ResourceQuotaSpec/properties/hard/additionalProperties",
			`{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity"}`},
		{"Quantity is number or string", "api/v1", schemas + "io.k8s.apimachinery.pkg.api.resource.Quantity",
			`{"oneOf":[{"type":"string"},{"type":"number"}]}`},
		{"IntOrString", "apis/apps/v1", schemas + "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
			`{"format":"int-or-string","oneOf":[{"type":"integer"},{"type":"string"}]}`},
		{"maxSurge refs IntOrString", "apis/apps/v1", schemas + "io.k8s.api.apps.v1.RollingUpdateDeployment/properties/maxSurge/allOf/0/$ref",
			`"#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString"`},

		// Object metadata, times, bytes, raw objects.
		{"Pod metadata refs ObjectMeta", "api/v1", core + "Pod/properties/metadata",
			`{"allOf":[{"$ref":"#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}],"default":{},"description":"Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"}`},
		{"Pod apiVersion from TypeMeta", "api/v1", core + "Pod/properties/apiVersion/type", `"string"`},
		{"Pod has gvk", "api/v1", core + "Pod/x-kubernetes-group-version-kind", `[{"group":"","kind":"Pod","version":"v1"}]`},
		{"PodList has gvk", "api/v1", core + "PodList/x-kubernetes-group-version-kind", `[{"group":"","kind":"PodList","version":"v1"}]`},
		{"PodList requires items", "api/v1", core + "PodList/required", `["items"]`},
		{"Deployment gvk", "apis/apps/v1", schemas + "io.k8s.api.apps.v1.Deployment/x-kubernetes-group-version-kind",
			`[{"group":"apps","kind":"Deployment","version":"v1"}]`},
		{"Scale gvk", "apis/apps/v1", schemas + "io.k8s.api.autoscaling.v1.Scale/x-kubernetes-group-version-kind",
			`[{"group":"autoscaling","kind":"Scale","version":"v1"}]`},
		{"Status gvk", "apis/apps/v1", meta + "Status/x-kubernetes-group-version-kind", `[{"group":"","kind":"Status","version":"v1"}]`},
		{"Time", "api/v1", meta + "Time", `{"format":"date-time","type":"string"}`},
		{"MicroTime", "api/v1", meta + "MicroTime", `{"format":"date-time","type":"string"}`},
		{"creationTimestamp has no default", "api/v1", meta + "ObjectMeta/properties/creationTimestamp/default", ``},
		{"secret data is bytes", "api/v1", core + "Secret/properties/data/additionalProperties", `{"format":"byte","type":"string"}`},
		{"labels values default", "api/v1", meta + "ObjectMeta/properties/labels/additionalProperties", `{"default":"","type":"string"}`},
		{"FieldsV1 is an object", "api/v1", meta + "FieldsV1/type", `"object"`},

		// Required fields and defaults as kube-openapi infers them.
		{"container name required", "api/v1", core + "Container/required", `["name"]`},
		{"container name default", "api/v1", core + "Container/properties/name/default", `""`},
		{"podspec requires containers", "api/v1", core + "PodSpec/required", `["containers"]`},
		{"pod has no required", "api/v1", core + "Pod/required", ``},
		{"int32 formats", "api/v1", core + "ContainerPort/properties/containerPort", `{"default":0,"description":"Number of port to expose on the pod's IP address. This must be a valid port number, 0 \u003c x \u003c 65536.","format":"int32","type":"integer"}`},
		{"pointer int64", "api/v1", core + "PodSpec/properties/activeDeadlineSeconds/format", `"int64"`},

		// Recursive and self-describing apiextensions types.
		{"JSONSchemaProps recursion", "apis/apiextensions.k8s.io/v1", schemas + "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps/properties/properties/additionalProperties",
			`{"allOf":[{"$ref":"#/components/schemas/io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"}],"default":{}}`},
		{"JSONSchemaProps not", "apis/apiextensions.k8s.io/v1", schemas + "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps/properties/not",
			`{"$ref":"#/components/schemas/io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"}`},
		{"JSON is any value", "apis/apiextensions.k8s.io/v1", schemas + "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON", `{}`},
		{"JSONSchemaPropsOrArray is any value", "apis/apiextensions.k8s.io/v1", schemas + "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray", `{}`},
		{"x-kubernetes-validations keyed by rule", "apis/apiextensions.k8s.io/v1", schemas + "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps/properties/x-kubernetes-validations/x-kubernetes-list-map-keys", `["rule"]`},

		// Custom resources.
		{"CR metadata", "apis/stable.example.com/v1", schemas + "com.example.stable.v1.CronTab/properties/metadata/allOf/0/$ref", `"` + refMeta + `ObjectMeta"`},
		{"CR gvk", "apis/stable.example.com/v1", schemas + "com.example.stable.v1.CronTab/x-kubernetes-group-version-kind",
			`[{"group":"stable.example.com","kind":"CronTab","version":"v1"}]`},
		{"CR list gvk", "apis/stable.example.com/v1", schemas + "com.example.stable.v1.CronTabList/x-kubernetes-group-version-kind",
			`[{"group":"stable.example.com","kind":"CronTabList","version":"v1"}]`},
		{"CR list items", "apis/stable.example.com/v1", schemas + "com.example.stable.v1.CronTabList/properties/items/items/$ref",
			`"#/components/schemas/com.example.stable.v1.CronTab"`},
		{"CR schema kept", "apis/stable.example.com/v1", schemas + "com.example.stable.v1.CronTab/properties/spec/properties/size/x-kubernetes-int-or-string", `true`},
		{"CR description kept", "apis/stable.example.com/v1", schemas + "com.example.stable.v1.CronTab/description", `"CronTab runs a command on a schedule."`},
		{"CR list type kept", "apis/stable.example.com/v1", schemas + "com.example.stable.v1.CronTab/properties/spec/properties/ports/x-kubernetes-list-map-keys", `["name"]`},
		{"CR status preserved", "apis/stable.example.com/v1", schemas + "com.example.stable.v1.CronTab/properties/status/x-kubernetes-preserve-unknown-fields", `true`},
		{"CR doc has no core kinds", "apis/stable.example.com/v1", core + "Pod", ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := lookup(document(t, tt.doc), tt.path)
			expectAt(t, tt.path, got, ok, tt.want)
		})
	}
}

// expectAt checks what a document holds at path (got, ok: as a lookup returns them)
// against want, JSON ("" for absent).
func expectAt(t *testing.T, path string, got any, ok bool, want string) {
	t.Helper()
	if want == "" {
		if ok {
			t.Fatalf("%s: want absent, got %v", path, got)
		}
		return
	}
	if !ok {
		t.Fatalf("%s: absent", path)
	}
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want: %v", err)
	}
	if !reflect.DeepEqual(got, w) {
		g, _ := json.Marshal(got)
		t.Fatalf("%s:\n got %s\nwant %s", path, g, want)
	}
}

func TestDeleteOptionsKinds(t *testing.T) {
	got, ok := lookup(document(t, "api/v1"), meta+"DeleteOptions/x-kubernetes-group-version-kind")
	if !ok {
		t.Fatal("DeleteOptions has no x-kubernetes-group-version-kind")
	}
	var groups []string
	for _, g := range got.([]any) {
		m := g.(map[string]any)
		if m["kind"] != "DeleteOptions" {
			t.Errorf("kind %v", m["kind"])
		}
		groups = append(groups, m["group"].(string)+"/"+m["version"].(string))
	}
	want := []string{"/v1", "apiextensions.k8s.io/v1", "apps/v1", "batch/v1", "scheduling.k8s.io/v1", "storage.k8s.io/v1"}
	if !reflect.DeepEqual(groups, want) {
		t.Fatalf("DeleteOptions kinds %v, want %v", groups, want)
	}
}

// TestRefsResolve checks that every $ref of every document names one of its schemas.
func TestRefsResolve(t *testing.T) {
	for gvPath := range mustBuild(t).Paths {
		doc := document(t, gvPath)
		schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
		var walk func(v any, at string)
		walk = func(v any, at string) {
			switch x := v.(type) {
			case map[string]any:
				for k, c := range x {
					if ref, isRef := c.(string); isRef && k == "$ref" {
						name, ok := strings.CutPrefix(ref, "#/components/schemas/")
						if _, found := schemas[name]; !ok || !found {
							t.Errorf("%s: %s: dangling $ref %v", gvPath, at, c)
						}
						continue
					}
					walk(c, at+"/"+k)
				}
			case []any:
				for _, c := range x {
					walk(c, at+"[]")
				}
			}
		}
		walk(doc, "")
	}
}

// Local types exercising the reflection rules directly.
type (
	testInner struct {
		Value string `json:"value"`
	}
	testEmbedded struct {
		Shared string `json:"shared,omitempty"`
	}
	testTree struct {
		testEmbedded `json:",inline"`
		Name         string               `json:"name"`
		Children     []testTree           `json:"children,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
		Parent       *testTree            `json:"parent,omitempty"`
		ByName       map[string]testInner `json:"byName,omitempty"`
		Tags         []string             `json:"tags,omitempty" patchStrategy:"merge"`
		Skipped      string               `json:"-"`
		hidden       string
		Count        int64   `json:"count"`
		Ratio        float64 `json:"ratio,omitempty"`
		Enabled      bool    `json:"enabled"`
		Raw          []byte  `json:"raw,omitempty"`
	}
	testBadKey struct {
		M map[int]string `json:"m"`
	}
	testBadKind struct {
		C chan int `json:"c"`
	}
)

func TestDefinitions(t *testing.T) {
	d := newDefinitions(false)
	name, err := d.define(reflect.TypeFor[testTree]())
	if err != nil {
		t.Fatal(err)
	}
	if want := "com.github.quotad.quotad.internal.apiserver.openapi.testTree"; name != want {
		t.Fatalf("name %q, want %q", name, want)
	}
	raw, err := d.define(reflect.TypeFor[runtime.RawExtension]())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(map[string]any{"tree": d.schemas[name], "raw": d.schemas[raw]})
	ref := "#/components/schemas/" + name
	inner := "#/components/schemas/com.github.quotad.quotad.internal.apiserver.openapi.testInner"
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ path, want string }{
		{"tree/type", `"object"`},
		{"tree/required", `["name","count","enabled"]`},
		{"tree/properties/shared", `{"type":"string"}`},
		{"tree/properties/name", `{"default":"","type":"string"}`},
		{"tree/properties/children", `{"items":{"allOf":[{"$ref":"` + ref + `"}],"default":{}},"type":"array","x-kubernetes-list-map-keys":["name"],"x-kubernetes-list-type":"map","x-kubernetes-patch-merge-key":"name","x-kubernetes-patch-strategy":"merge"}`},
		{"tree/properties/parent", `{"$ref":"` + ref + `"}`},
		{"tree/properties/byName", `{"additionalProperties":{"allOf":[{"$ref":"` + inner + `"}],"default":{}},"type":"object"}`},
		{"tree/properties/tags", `{"items":{"default":"","type":"string"},"type":"array","x-kubernetes-list-type":"set","x-kubernetes-patch-strategy":"merge"}`},
		{"tree/properties/count", `{"default":0,"format":"int64","type":"integer"}`},
		{"tree/properties/ratio", `{"format":"double","type":"number"}`},
		{"tree/properties/enabled", `{"default":false,"type":"boolean"}`},
		{"tree/properties/raw", `{"format":"byte","type":"string"}`},
		{"raw/type", `"object"`},
	}
	for _, tt := range tests {
		v, ok := lookup(m, tt.path)
		if !ok {
			t.Errorf("%s: absent", tt.path)
			continue
		}
		var w any
		if err := json.Unmarshal([]byte(tt.want), &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(v, w) {
			g, _ := json.Marshal(v)
			t.Errorf("%s:\n got %s\nwant %s", tt.path, g, tt.want)
		}
	}
	props := m["tree"].(map[string]any)["properties"].(map[string]any)
	for _, absent := range []string{"Skipped", "-", "hidden", "testEmbedded"} {
		if _, ok := props[absent]; ok {
			t.Errorf("property %q should not be published", absent)
		}
	}
	if _, ok := props["raw"]; !ok {
		t.Error("raw missing")
	}

	for _, bad := range []reflect.Type{reflect.TypeFor[testBadKey](), reflect.TypeFor[testBadKind]()} {
		if _, err := newDefinitions(false).define(bad); err == nil {
			t.Errorf("define(%v) succeeded, want an error", bad)
		}
	}
}
