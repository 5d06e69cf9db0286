package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Descriptions kube-apiserver publishes on a custom resource's metadata fields.
const (
	objectMetaDescription = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
	listMetaDescription   = "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)

// customResourceName is the component name of a custom resource kind: the group's
// domain reversed, the version and the kind ("stable.example.com/v1, CronTab" →
// "com.example.stable.v1.CronTab"), as the apiextensions-apiserver names them.
func customResourceName(gvk schema.GroupVersionKind) string {
	parts := strings.Split(gvk.Group, ".")
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(append(parts, gvk.Version, gvk.Kind), ".")
}

// customResourceSchemas returns the object and list schemas of a custom resource in the
// dialect of defs: the CRD's openAPIV3Schema with the standard apiVersion, kind and
// metadata ($ref ObjectMeta) properties. The x-kubernetes-group-version-kind extension is
// added by Build.
//
// For Swagger 2.0 the schema is first reduced as the apiextensions-apiserver does for
// /openapi/v2 (see toSwaggerSchema), and an object without a schema or preserving unknown
// fields at its root becomes a bare {"type":"object"}: kubectl's v2 validation would
// otherwise refuse every field it does not know. Embedded resources get their type and
// metadata properties (addEmbeddedProperties).
func customResourceSchemas(defs *definitions, r *resolved) (obj, list map[string]any, err error) {
	obj = map[string]any{}
	if r.CRDSchema != nil {
		if obj, err = jsonSchemaPropsMap(r.CRDSchema); err != nil {
			return nil, nil, fmt.Errorf("openapi: schema of %v: %w", r.gvk, err)
		}
	} else {
		obj["x-kubernetes-preserve-unknown-fields"] = true
	}
	typeMeta := metav1.TypeMeta{}.SwaggerDoc()
	switch {
	case defs.v2 && obj["x-kubernetes-preserve-unknown-fields"] == true:
		obj = map[string]any{"type": "object"}
	default:
		if defs.v2 {
			toSwaggerSchema(obj)
		}
		addEmbeddedProperties(defs, obj)
		obj["type"] = "object"
		props, _ := obj["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
		}
		props["apiVersion"] = map[string]any{"description": typeMeta["apiVersion"], "type": "string"}
		props["kind"] = map[string]any{"description": typeMeta["kind"], "type": "string"}
		props["metadata"] = defs.ref(objectMetaName, map[string]any{"description": objectMetaDescription})
		obj["properties"] = props
	}

	list = map[string]any{
		"description": r.listGVK.Kind + " is a list of " + r.gvk.Kind,
		"type":        "object",
		"properties": map[string]any{
			"apiVersion": map[string]any{"description": typeMeta["apiVersion"], "type": "string"},
			"kind":       map[string]any{"description": typeMeta["kind"], "type": "string"},
			"items": map[string]any{
				"description": "List of " + strings.ToLower(r.Plural) + ". More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
				"type":        "array",
				"items":       defs.ref(customResourceName(r.gvk), nil),
			},
			"metadata": defs.ref(listMetaName, map[string]any{"description": listMetaDescription}),
		},
		"required": []any{"items"},
	}
	return obj, list, nil
}

// toSwaggerSchema reduces a CRD schema (in its JSON object form) to what kube-apiserver
// publishes in /openapi/v2, as the apiextensions-apiserver's ToStructuralOpenAPIV2 does,
// node by node from the root:
//   - allOf, oneOf, anyOf and not are dropped (Swagger 2.0 and kubectl cannot use them);
//   - a nullable node loses its type, items and properties, and is no longer required by
//     its parent (a nullable additionalProperties clears the parent's required list);
//   - a node preserving unknown fields loses its items and properties, and its type when
//     that is object;
//   - an array left without items loses its type.
//
// Keywords Swagger 2.0 has no place for (nullable, patternProperties, ...) are dropped.
func toSwaggerSchema(s map[string]any) {
	for _, k := range []string{"allOf", "oneOf", "anyOf", "not"} {
		delete(s, k)
	}
	if s["nullable"] == true {
		delete(s, "type")
		delete(s, "items")
		delete(s, "properties")
	}
	preserve := s["x-kubernetes-preserve-unknown-fields"] == true
	if preserve {
		delete(s, "items")
		delete(s, "properties")
	}
	if _, ok := s["items"]; !ok && s["type"] == "array" {
		delete(s, "type")
	}
	if preserve && s["type"] == "object" {
		delete(s, "type")
	}
	props, _ := s["properties"].(map[string]any)
	if req, ok := s["required"].([]any); ok {
		kept := []any{}
		for _, name := range req {
			if p, ok := props[fmt.Sprint(name)].(map[string]any); ok && p["nullable"] == true {
				continue
			}
			kept = append(kept, name)
		}
		if ap, ok := s["additionalProperties"].(map[string]any); ok && ap["nullable"] == true {
			kept = nil
		}
		if len(kept) > 0 {
			s["required"] = kept
		} else {
			delete(s, "required")
		}
	}
	for k := range s {
		if !strings.HasPrefix(k, "x-") && !swaggerSchemaKeyword(k) {
			delete(s, k)
		}
	}
	for _, p := range props {
		if p, ok := p.(map[string]any); ok {
			toSwaggerSchema(p)
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		toSwaggerSchema(items)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		toSwaggerSchema(ap)
	}
}

// Descriptions the apiextensions-apiserver gives the type properties of an embedded
// resource.
const (
	embeddedAPIVersionDescription = "apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
	embeddedKindDescription       = "kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)

// addEmbeddedProperties gives every node marked x-kubernetes-embedded-resource (deepest
// first) the apiVersion, kind and metadata properties and requires kind and apiVersion,
// as the apiextensions-apiserver does; in Swagger 2.0 a node that also preserves unknown
// fields is left alone, since properties would make kubectl refuse the unknown ones.
func addEmbeddedProperties(defs *definitions, s map[string]any) {
	props, _ := s["properties"].(map[string]any)
	for _, p := range props {
		if p, ok := p.(map[string]any); ok {
			addEmbeddedProperties(defs, p)
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		addEmbeddedProperties(defs, items)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		addEmbeddedProperties(defs, ap)
	}
	if s["x-kubernetes-embedded-resource"] != true || (defs.v2 && s["x-kubernetes-preserve-unknown-fields"] == true) {
		return
	}
	if props == nil {
		props = map[string]any{}
		s["properties"] = props
	}
	props["apiVersion"] = map[string]any{"description": embeddedAPIVersionDescription, "type": "string"}
	props["kind"] = map[string]any{"description": embeddedKindDescription, "type": "string"}
	props["metadata"] = defs.ref(objectMetaName, map[string]any{"description": objectMetaDescription})
	required, _ := s["required"].([]any)
	has := map[string]bool{}
	for _, r := range required {
		has[fmt.Sprint(r)] = true
	}
	for _, name := range []string{"kind", "apiVersion"} {
		if !has[name] {
			required = append(required, name)
		}
	}
	s["required"] = required
}

// swaggerSchemaKeyword reports whether k is a keyword of a Swagger 2.0 schema object.
func swaggerSchemaKeyword(k string) bool {
	switch k {
	case "$ref", "format", "title", "description", "default", "multipleOf", "maximum",
		"exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern",
		"maxItems", "minItems", "uniqueItems", "maxProperties", "minProperties", "required",
		"enum", "additionalProperties", "type", "items", "allOf", "properties",
		"discriminator", "readOnly", "xml", "externalDocs", "example":
		return true
	}
	return false
}

// jsonSchemaPropsMap converts a CRD schema to its JSON object form: JSONSchemaProps'
// JSON encoding is the OpenAPI v3 schema, including the x-kubernetes-* extensions.
// Numbers keep their exact text.
func jsonSchemaPropsMap(p any) (map[string]any, error) {
	data, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	m := map[string]any{}
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}
