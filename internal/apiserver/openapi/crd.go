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

// customResourceSchemas returns the object and list schemas of a custom resource: the
// CRD's openAPIV3Schema with the standard apiVersion, kind and metadata ($ref ObjectMeta)
// properties. The x-kubernetes-group-version-kind extension is added by Build.
func customResourceSchemas(r *resolved) (obj, list map[string]any, err error) {
	obj = map[string]any{}
	if r.CRDSchema != nil {
		if obj, err = jsonSchemaPropsMap(r.CRDSchema); err != nil {
			return nil, nil, fmt.Errorf("openapi: schema of %v: %w", r.gvk, err)
		}
	} else {
		obj["x-kubernetes-preserve-unknown-fields"] = true
	}
	obj["type"] = "object"
	props, _ := obj["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	typeMeta := metav1.TypeMeta{}.SwaggerDoc()
	props["apiVersion"] = map[string]any{"description": typeMeta["apiVersion"], "type": "string"}
	props["kind"] = map[string]any{"description": typeMeta["kind"], "type": "string"}
	props["metadata"] = map[string]any{
		"allOf":       []any{map[string]any{"$ref": refPrefix + objectMetaName}},
		"description": objectMetaDescription,
	}
	obj["properties"] = props

	list = map[string]any{
		"description": r.listGVK.Kind + " is a list of " + r.gvk.Kind,
		"type":        "object",
		"properties": map[string]any{
			"apiVersion": map[string]any{"description": typeMeta["apiVersion"], "type": "string"},
			"kind":       map[string]any{"description": typeMeta["kind"], "type": "string"},
			"items": map[string]any{
				"description": "List of " + strings.ToLower(r.Plural) + ". More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
				"type":        "array",
				"items":       map[string]any{"$ref": refPrefix + customResourceName(r.gvk)},
			},
			"metadata": map[string]any{
				"allOf":       []any{map[string]any{"$ref": refPrefix + listMetaName}},
				"description": listMetaDescription,
			},
		},
		"required": []any{"items"},
	}
	return obj, list, nil
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
