package validation

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// widgetsCRD exercises every schema feature the validator maps.
const widgetsCRD = `
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.selector}
    schema:
      openAPIV3Schema:
        type: object
        required: [spec]
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 1, maximum: 10}
              replicas: {type: integer}
              color: {type: string, enum: [red, green]}
              level: {type: integer, enum: [1, 2, 3]}
              name: {type: string, maxLength: 5, pattern: '^[a-z]+$'}
              email: {type: string, format: email}
              weird: {type: string, format: not-a-format}
              short: {type: string, format: k8s-short-name}
              ratio: {type: number, multipleOf: 0.5}
              port: {x-kubernetes-int-or-string: true}
              maybe: {type: string, nullable: true}
              tags: {type: array, maxItems: 2, minItems: 1, items: {type: string}, x-kubernetes-list-type: set}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer, maximum: 100}
              pairs:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [a, b]
                items:
                  type: object
                  properties:
                    a: {type: string}
                    b: {type: integer}
              labels: {type: object, maxProperties: 2, additionalProperties: {type: string, maxLength: 3}}
              strict:
                type: object
                additionalProperties: false
                properties:
                  x: {type: string}
              choice:
                type: object
                oneOf:
                - required: [a]
                - required: [b]
                properties:
                  a: {type: string}
                  b: {type: string}
              template:
                type: object
                x-kubernetes-embedded-resource: true
                x-kubernetes-preserve-unknown-fields: true
              free:
                type: object
                x-kubernetes-preserve-unknown-fields: true
          status:
            type: object
            properties:
              phase: {type: string, enum: [Ready, Pending]}
              replicas: {type: integer, minimum: 0}
              selector: {type: string}
              count: {type: integer}
`

const gadgetsCRD = `
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Cluster
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
`

func crdYAML(t *testing.T, y string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict([]byte(y), crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

// cr decodes a custom resource as the HTTP edge does (integers are int64).
func cr(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	return u
}

const (
	widget   = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default, resourceVersion: '1'}\n"
	widgetTM = "apiVersion: example.com/v1\nkind: Widget\n"
)

func customErrs(t *testing.T, got []string, want []string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// The texts below were checked against upstream's apiextensions-apiserver
// customresource strategy (v0.37.0) on the same CRD and objects.
func TestCustomValidate(t *testing.T) {
	widgets := crdYAML(t, widgetsCRD)
	gadgets := crdYAML(t, gadgetsCRD)
	for _, tc := range []struct {
		name string
		crd  *apiextensionsv1.CustomResourceDefinition
		obj  string
		want []string
	}{
		{"valid", widgets, widget + "spec: {size: 3, port: http, maybe: null, weird: anything, tags: [a], free: {x: [1, {y: z}]}}", nil},
		{"name", widgets, widgetTM + "metadata: {name: W_x, namespace: default}\nspec: {size: 1}", []string{
			`metadata.name: Invalid value: "W_x": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`}},
		{"metadata", widgets, widgetTM + "metadata: {name: w, generateName: 'A_', namespace: Bad_NS, labels: {'-x': 'y'}, annotations: {'A B': c}}\nspec: {size: 1}", []string{
			`metadata.generateName: Invalid value: "A_": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
			`metadata.namespace: Invalid value: "Bad_NS": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
			`metadata.labels: Invalid value: "-x": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
			`metadata.annotations: Invalid value: "A B": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`}},
		{"namespace required", widgets, widgetTM + "metadata: {name: w}\nspec: {size: 1}", []string{`metadata.namespace: Required value`}},
		{"cluster-scoped with namespace", gadgets, "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g, namespace: x}\nspec: {size: a}", []string{
			`metadata.namespace: Forbidden: not allowed on this type`,
			`spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`}},
		{"type meta", widgets, "apiVersion: example.com/v2\nkind: Other\nmetadata: {name: W_x}\nspec: {size: x}", []string{
			`kind: Invalid value: "Other": must be Widget`,
			`apiVersion: Invalid value: "example.com/v2": must be example.com/v1`}},
		{"type string", widgets, widget + "spec: {size: big}", []string{`spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`}},
		{"type object", widgets, widget + "spec: {size: {a: 1}}", []string{`spec.size: Invalid value: "object": spec.size in body must be of type integer: "object"`}},
		{"type number", widgets, widget + "spec: {size: 1.5}", []string{
			`<nil>: Invalid value: "": Checked value must be of type integer (default format) in spec.size`,
			`spec.size: Invalid value: "number": spec.size in body must be of type integer: "number"`}},
		{"null", widgets, widget + "spec: {size: 1, color: null}", []string{
			`spec.color: Invalid value: "null": spec.color in body must be of type string: "null"`,
			`spec.color: Unsupported value: null: supported values: "red", "green"`}},
		{"required", widgets, widget + "spec: {}", []string{`spec.size: Required value`}},
		{"required root", widgets, widget, []string{`spec: Required value`}},
		{"minimum", widgets, widget + "spec: {size: 0}", []string{`spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1`}},
		{"maximum", widgets, widget + "spec: {size: 11}", []string{`spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10`}},
		{"enum string", widgets, widget + "spec: {size: 1, color: blue}", []string{`spec.color: Unsupported value: "blue": supported values: "red", "green"`}},
		{"enum integer", widgets, widget + "spec: {size: 1, level: 7}", []string{`spec.level: Unsupported value: 7: supported values: "1", "2", "3"`}},
		{"maxLength", widgets, widget + "spec: {size: 1, name: abcdefg}", []string{`spec.name: Too long: may not be more than 5 bytes`}},
		{"pattern", widgets, widget + "spec: {size: 1, name: AB}", []string{`spec.name: Invalid value: "AB": spec.name in body should match '^[a-z]+$'`}},
		{"format", widgets, widget + "spec: {size: 1, email: nope}", []string{`spec.email: Invalid value: "nope": spec.email in body must be of type email: "nope"`}},
		{"k8s format", widgets, widget + "spec: {size: 1, short: Bad_Name}", []string{`spec.short: Invalid value: "Bad_Name": spec.short in body must be of type k8s-short-name: "Bad_Name"`}},
		{"multipleOf", widgets, widget + "spec: {size: 1, ratio: 0.3}", []string{`spec.ratio: Invalid value: 0.3: spec.ratio in body should be a multiple of 0.5`}},
		{"int-or-string", widgets, widget + "spec: {size: 1, port: true}", []string{`spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"`}},
		{"maxItems", widgets, widget + "spec: {size: 1, tags: [a, b, c]}", []string{`spec.tags: Too many: 3: must have at most 2 items`}},
		{"minItems", widgets, widget + "spec: {size: 1, tags: []}", []string{`spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items`}},
		{"list-type set", widgets, widget + "spec: {size: 1, tags: [a, a]}", []string{`spec.tags[1]: Duplicate value: "a"`}},
		{"list-type map", widgets, widget + "spec: {size: 1, ports: [{name: a, port: 1}, {name: a, port: 2}, {name: a}]}", []string{`spec.ports[1]: Duplicate value: {"name":"a"}`}},
		{"list-type map keys", widgets, widget + "spec: {size: 1, pairs: [{a: x, b: 1}, {a: x, b: 1}, {a: x, b: 2}]}", []string{`spec.pairs[1]: Duplicate value: {"a":"x","b":1}`}},
		{"list-type map item", widgets, widget + "spec: {size: 1, ports: [1, {port: 101}]}", []string{
			`spec.ports[0]: Invalid value: "integer": spec.ports[0] in body must be of type object: "integer"`,
			`spec.ports[1].name: Required value`,
			`spec.ports[1].port: Invalid value: 101: spec.ports[1].port in body should be less than or equal to 100`,
			`spec.ports[0]: Invalid value: 1: must be an object for an array of list-type map`}},
		{"additionalProperties", widgets, widget + "spec: {size: 1, labels: {a: abcd, b: x, c: 'y'}}", []string{
			`spec.labels: Too many: 3: must have at most 2 items`,
			`spec.labels.a: Too long: may not be more than 3 bytes`}},
		{"additionalProperties false", widgets, widget + "spec: {size: 1, strict: {x: a, q: b}}", []string{`spec.strict: Invalid value: "q": spec.strict.q in body is a forbidden property`}},
		{"oneOf", widgets, widget + "spec: {size: 1, choice: {}}", []string{
			`<nil>: Invalid value: "": "spec.choice" must validate one and only one schema (oneOf). Found none valid`,
			`spec.choice.a: Required value`}},
		{"embedded resource", widgets, widget + "spec: {size: 1, template: {metadata: {name: X_y, namespace: Bad}}}", []string{
			`spec.template.apiVersion: Required value`,
			`spec.template.kind: Required value`,
			`spec.template.metadata.namespace: Invalid value: "Bad": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`}},
		{"embedded type meta", widgets, widget + "spec: {size: 1, template: {apiVersion: 'a/b/c', kind: 'bad kind', metadata: {generateName: 'a/'}}}", []string{
			`spec.template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c`,
			`spec.template.kind: Invalid value: "bad kind": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
			`spec.template.metadata.generateName: Invalid value: "a/": may not contain '/'`}},
		{"scale replicas", widgets, widget + "spec: {size: 1, replicas: many}", []string{
			`spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`,
			`.spec.replicas: Invalid value: 0: .spec.replicas accessor error: many is of the type string, expected int64`}},
		{"scale negative", widgets, widget + "spec: {size: 1, replicas: -1}", []string{`.spec.replicas: Invalid value: -1: should be a non-negative integer`}},
		{"scale too large", widgets, widget + "spec: {size: 1, replicas: 3000000000}", []string{`.spec.replicas: Invalid value: 3000000000: should be less than or equal to 2147483647`}},
		{"spec not an object", widgets, widget + "spec: 5", []string{
			`spec: Invalid value: "integer": spec in body must be of type object: "integer"`,
			`.spec.replicas: Invalid value: 0: .spec.replicas accessor error: 5 is of the type int64, expected map[string]interface{}`}},
		{"sorted by field", widgets, widget + "spec: {size: x, color: blue, name: toolongname, tags: [a, b, c], strict: {q: 1}}", []string{
			`spec.color: Unsupported value: "blue": supported values: "red", "green"`,
			`spec.name: Too long: may not be more than 5 bytes`,
			`spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`,
			`spec.strict: Invalid value: "q": spec.strict.q in body is a forbidden property`,
			`spec.tags: Too many: 3: must have at most 2 items`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := cr(t, tc.obj)
			before := obj.DeepCopy()
			customErrs(t, errStrings(NewCustom().Validate(tc.crd, "v1", obj)), tc.want)
			if diff := cmp.Diff(before.Object, obj.Object); diff != "" {
				t.Errorf("Validate changed the object:\n%s", diff)
			}
		})
	}
}

func TestCustomValidateUpdate(t *testing.T) {
	widgets := crdYAML(t, widgetsCRD)
	for _, tc := range []struct {
		name, obj, old string
		want           []string
	}{
		{"unchanged invalid values ratchet", widget + "spec: {size: 0, color: blue, labels: {a: abcd}, port: true, tags: [a, b, c], free: {x: 1}}",
			widget + "spec: {size: 0, color: blue, labels: {a: abcd}, port: true, tags: [a, b, c], free: {x: 1}}", nil},
		// As upstream: a field the schema does not specify cannot be correlated, so its
		// parent never counts as unchanged.
		{"unspecified fields do not ratchet", widget + "spec: {size: 1, strict: {q: 1}}", widget + "spec: {size: 1, strict: {q: 1}}", []string{
			`spec.strict: Invalid value: "q": spec.strict.q in body is a forbidden property`}},
		{"changed value is checked", widget + "spec: {size: 0, color: pink}", widget + "spec: {size: 0, color: blue}", []string{
			`spec.color: Unsupported value: "pink": supported values: "red", "green"`}},
		{"new invalid value", widget + "spec: {size: 20}", widget + "spec: {size: 2}", []string{
			`spec.size: Invalid value: 20: spec.size in body should be less than or equal to 10`}},
		{"map list items correlate by key", widget + "spec: {size: 1, ports: [{name: b, port: 500}, {name: a, port: 200}]}",
			widget + "spec: {size: 1, ports: [{name: a, port: 200}]}", []string{
				`spec.ports[0].port: Invalid value: 500: spec.ports[0].port in body should be less than or equal to 100`}},
		{"atomic list changed", widget + "spec: {size: 1, tags: [a, b, d]}", widget + "spec: {size: 1, tags: [a, b, c]}", []string{
			`spec.tags: Too many: 3: must have at most 2 items`}},
		{"additional property ratchets per key", widget + "spec: {size: 1, labels: {a: abcd, b: toolong}}", widget + "spec: {size: 1, labels: {a: abcd}}", []string{
			`spec.labels.b: Too long: may not be more than 3 bytes`}},
		{"required missing before", widget + "spec: {color: red}", widget + "spec: {color: red}", nil},
		{"required missing, sibling changed", widget + "spec: {color: red}", widget + "spec: {color: green}", []string{`spec.size: Required value`}},
		{"duplicates kept", widget + "spec: {size: 1, tags: [a, a]}", widget + "spec: {size: 1, tags: [b, b]}", nil},
		{"new duplicates", widget + "spec: {size: 1, tags: [a, a]}", widget + "spec: {size: 1, tags: [a]}", []string{`spec.tags[1]: Duplicate value: "a"`}},
		{"embedded resources are not ratcheted", widget + "spec: {size: 1, template: {}}", widget + "spec: {size: 1, template: {}}", []string{
			`spec.template.apiVersion: Required value`, `spec.template.kind: Required value`}},
		{"resourceVersion", widgetTM + "metadata: {name: w, namespace: default}\nspec: {size: 1}", widget + "spec: {size: 1}", []string{
			`metadata.resourceVersion: Invalid value: "": must be specified for an update`}},
		{"name immutable", widgetTM + "metadata: {name: w2, namespace: default, resourceVersion: '1'}\nspec: {size: 1}", widget + "spec: {size: 1}", []string{
			`metadata.name: Invalid value: "w2": field is immutable`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, old := cr(t, tc.obj), cr(t, tc.old)
			customErrs(t, errStrings(NewCustom().ValidateUpdate(widgets, "v1", obj, old)), tc.want)
		})
	}
}

func TestCustomValidateStatusUpdate(t *testing.T) {
	widgets := crdYAML(t, widgetsCRD)
	for _, tc := range []struct {
		name, obj, old string
		want           []string
	}{
		{"status against the status schema", widget + "spec: {size: 1}\nstatus: {phase: Weird, replicas: -1, count: x}", widget + "spec: {size: 1}", []string{
			`status.count: Invalid value: "string": count in body must be of type integer: "string"`,
			`status.phase: Unsupported value: "Weird": supported values: "Ready", "Pending"`,
			`status.replicas: Invalid value: -1: replicas in body should be greater than or equal to 0`,
			`.status.replicas: Invalid value: -1: should be a non-negative integer`}},
		{"status not an object", widget + "spec: {size: 1}\nstatus: 5", widget + "spec: {size: 1}", []string{
			`status: Invalid value: "integer":  in body must be of type object: "integer"`,
			`.status.replicas: Invalid value: 0: .status.replicas accessor error: 5 is of the type int64, expected map[string]interface{}`,
			`.status.selector: Invalid value: "": .status.selector accessor error: 5 is of the type int64, expected map[string]interface{}`}},
		{"unchanged invalid status ratchets", widget + "spec: {size: 1}\nstatus: {phase: Weird, count: 1}", widget + "spec: {size: 1}\nstatus: {phase: Weird, count: 2}", nil},
		{"spec is not validated", widget + "spec: {size: 99}\nstatus: {phase: Ready}", widget + "spec: {size: 99}", nil},
		{"status removed", widget + "spec: {size: 1}", widget + "spec: {size: 1}\nstatus: {phase: Ready}", nil},
		{"list types of the whole object", widget + "spec: {size: 1, tags: [a, a]}\nstatus: {phase: Ready}", widget + "spec: {size: 1, tags: [a]}", []string{
			`spec.tags[1]: Duplicate value: "a"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, old := cr(t, tc.obj), cr(t, tc.old)
			customErrs(t, errStrings(NewCustom().ValidateStatusUpdate(widgets, "v1", obj, old)), tc.want)
		})
	}
}

// TestCustomCache: a CRD object is compiled once; a new object for the same
// CRD (the catalogue builds one on every change) is compiled again.
func TestCustomCache(t *testing.T) {
	c := NewCustom()
	v1 := crdYAML(t, gadgetsCRD)
	obj := cr(t, "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\nspec: {size: a}")
	if errs := c.Validate(v1, "v1", obj); len(errs) != 1 {
		t.Fatalf("errors %v", errs)
	}
	first := c.compiled[customKey{"gadgets.example.com", "v1"}]
	c.Validate(v1, "v1", obj)
	if c.compiled[customKey{"gadgets.example.com", "v1"}] != first {
		t.Errorf("the same CRD object was compiled again")
	}
	v2 := crdYAML(t, strings.Replace(gadgetsCRD, "{size: {type: integer}}", "{size: {type: string}}", 1))
	if errs := c.Validate(v2, "v1", obj); len(errs) != 0 {
		t.Errorf("changed CRD: errors %v", errs)
	}
	if len(c.compiled) != 1 {
		t.Errorf("cache holds %d entries, want 1", len(c.compiled))
	}
}

// TestCustomConcurrent: one Custom serves concurrent validations of CRD
// objects that change under it (run with -race).
func TestCustomConcurrent(t *testing.T) {
	c := NewCustom()
	crds := []*apiextensionsv1.CustomResourceDefinition{crdYAML(t, widgetsCRD), crdYAML(t, widgetsCRD)}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				obj := cr(t, widget+"spec: {size: big}")
				old := cr(t, widget+"spec: {size: 1}")
				if errs := c.ValidateUpdate(crds[(i+j)%2], "v1", obj, old); len(errs) != 1 {
					t.Errorf("errors %v", errs)
					return
				}
			}
		}(i)
	}
	wg.Wait()
}

// TestCustomBrokenSchema: a schema kube-openapi cannot use is an internal
// error, not a panic.
func TestCustomBrokenSchema(t *testing.T) {
	crd := crdYAML(t, gadgetsCRD)
	ref := "#/definitions/x"
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = apiextensionsv1.JSONSchemaProps{Ref: &ref}
	obj := cr(t, "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\nspec: {size: 1}")
	errs := NewCustom().Validate(crd, "v1", obj)
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "<nil>: Internal error: the server could not properly serve the CR schema") {
		t.Errorf("errors %v", errs)
	}
}

// TestConvertSchema pins the CRD schema conversion: int-or-string, nullable,
// the preserve-unknown-fields and list extensions, JSON values and stripped
// formats.
func TestConvertSchema(t *testing.T) {
	props := &apiextensionsv1.JSONSchemaProps{
		Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"port":  {XIntOrString: true, Format: "int-or-string"},
			"n":     {Type: "integer", Format: "int32", Enum: []apiextensionsv1.JSON{{Raw: []byte(`1`)}, {Raw: []byte(`null`)}}},
			"f":     {Type: "number", Format: "int32"},
			"s":     {Type: "string", Format: "date-time", Nullable: true, Default: &apiextensionsv1.JSON{Raw: []byte(`"x"`)}},
			"o":     {Type: "object", Format: "email", XPreserveUnknownFields: ptr(true)},
			"items": {Type: "array", XListType: ptr("map"), XListMapKeys: []string{"name"}, Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}},
		},
	}
	s, err := convertSchema(props)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]interface{}{}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]interface{}{
		"type": "object",
		"properties": map[string]interface{}{
			"port":  map[string]interface{}{"type": []interface{}{"integer", "string"}, "x-kubernetes-int-or-string": true},
			"n":     map[string]interface{}{"type": "integer", "format": "int32", "enum": []interface{}{float64(1), nil}},
			"f":     map[string]interface{}{"type": "number"},
			"s":     map[string]interface{}{"type": "string", "format": "date-time", "nullable": true, "default": "x"},
			"o":     map[string]interface{}{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
			"items": map[string]interface{}{"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []interface{}{"name"}, "items": map[string]interface{}{"type": "object"}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("converted schema (-want +got):\n%s", diff)
	}
	if _, ok := s.Properties["n"].Enum[0].(int64); !ok {
		t.Errorf("enum integers must decode as int64, got %T", s.Properties["n"].Enum[0])
	}
}
