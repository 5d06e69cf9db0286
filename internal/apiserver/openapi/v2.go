package openapi

import (
	"fmt"
	"sort"
	"strings"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Media types of GET /openapi/v2. kube-openapi accepts the protobuf type with "@v1.0"
// (what client-go's discovery sends) or ".v1.0" and answers with the ".v1.0" spelling.
const (
	// ProtoV2MediaType is the Accept type client-go's OpenAPISchema sends.
	ProtoV2MediaType = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
	// ProtoV2ContentType is the Content-Type of the protobuf document.
	ProtoV2ContentType = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
)

// V2 is the /openapi/v2 document: one Swagger 2.0 document with every served path and
// every definition, as kube-apiserver publishes it. It is immutable.
type V2 struct {
	// JSON is the document as served to Accept: application/json.
	JSON []byte
	// Proto is the same document as a gnostic openapi_v2.Document in protobuf, served to
	// Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf.
	Proto []byte
	// Hash is the uppercase hex SHA-512 of JSON, the ETag of both encodings (kube-openapi
	// reuses the JSON ETag for protobuf because responses vary by Accept).
	Hash string
}

// BuildV2 returns the /openapi/v2 document of resources.
func BuildV2(resources []Resource) (*V2, error) {
	return NewBuilder().BuildV2(resources)
}

// BuildV2 is BuildV2 with the Builder's cache: the document is rebuilt only when a
// resource changed since the last call.
func (b *Builder) BuildV2(resources []Resource) (*V2, error) {
	b.mu.Lock()
	defer b.mu.Unlock()

	// 1. Resolve, and reuse the last document if nothing it depends on changed.
	rs, err := resolve(resources)
	if err != nil {
		return nil, err
	}
	var key strings.Builder
	for _, r := range rs {
		f, err := r.fingerprint()
		if err != nil {
			return nil, err
		}
		key.WriteString(f)
	}
	if b.v2 != nil && b.v2Key == key.String() {
		return b.v2, nil
	}

	// 2. Every definition, from the same walk as the v3 component schemas.
	defs, err := buildDefinitions(true, rs, rs)
	if err != nil {
		return nil, err
	}

	// 3. The paths of every group-version, written by the v3 path builder and converted.
	params, err := newQueryParams()
	if err != nil {
		return nil, err
	}
	gvs := map[schema.GroupVersion]*pathBuilder{}
	paths := map[string]any{}
	for _, r := range rs {
		pb, ok := gvs[r.gvk.GroupVersion()]
		if !ok {
			pb = newPathBuilder(r.gvk.GroupVersion(), params)
			gvs[r.gvk.GroupVersion()] = pb
		}
		pb.add(r)
	}
	for _, pb := range gvs {
		for p, item := range pb.paths {
			paths[p] = swaggerPathItem(item.(map[string]any))
		}
	}

	// 4. Encode as JSON, then as protobuf through gnostic's parser (as kube-openapi's
	// ToProtoBinary does), which also checks the document against the Swagger 2.0 schema.
	doc := map[string]any{
		"swagger":     "2.0",
		"info":        map[string]any{"title": "Kubernetes", "version": "unversioned"},
		"paths":       paths,
		"definitions": defs.schemas,
		"securityDefinitions": map[string]any{
			"BearerToken": map[string]any{
				"description": "Bearer Token authentication",
				"in":          "header",
				"name":        "authorization",
				"type":        "apiKey",
			},
		},
		"security": []any{map[string]any{"BearerToken": []any{}}},
	}
	data, err := marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: encoding /openapi/v2: %w", err)
	}
	pb, err := swaggerProto(data)
	if err != nil {
		return nil, err
	}
	b.v2, b.v2Key = &V2{JSON: data, Proto: pb, Hash: Hash(data)}, key.String()
	return b.v2, nil
}

// swaggerProto converts a Swagger 2.0 JSON document to gnostic's protobuf encoding.
func swaggerProto(data []byte) ([]byte, error) {
	doc, err := openapi_v2.ParseDocument(data)
	if err != nil {
		return nil, fmt.Errorf("openapi: /openapi/v2 is not a valid Swagger 2.0 document: %w", err)
	}
	pb, err := proto.MarshalOptions{Deterministic: true}.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: encoding /openapi/v2 as protobuf: %w", err)
	}
	return pb, nil
}

// swaggerPathItem converts a path item written by pathBuilder (OpenAPI v3) to Swagger 2.0:
// parameters carry their type directly, a request body becomes the "body" parameter
// (first, as kube-apiserver lists it) with its media types as consumes, responses carry
// their schema with the media types as produces, and references point to #/definitions/.
func swaggerPathItem(item map[string]any) map[string]any {
	out := make(map[string]any, len(item))
	for k, v := range item {
		if k == "parameters" {
			out[k] = swaggerParams(v.([]any))
			continue
		}
		out[k] = swaggerOperation(v.(map[string]any))
	}
	return out
}

func swaggerOperation(op map[string]any) map[string]any {
	out := map[string]any{"schemes": []any{"https"}}
	for k, v := range op {
		switch k {
		case "parameters", "requestBody", "responses":
		default:
			out[k] = v
		}
	}
	var params []any
	consumes := []any{"*/*"}
	if body, ok := op["requestBody"].(map[string]any); ok {
		content := body["content"].(map[string]any)
		p := map[string]any{"in": "body", "name": "body", "schema": swaggerSchemaOf(content)}
		if body["required"] == true {
			p["required"] = true
		}
		params = append(params, p)
		consumes = mediaTypes(content)
	}
	if ps, ok := op["parameters"].([]any); ok {
		params = append(params, swaggerParams(ps)...)
	}
	if len(params) > 0 {
		out["parameters"] = params
	}
	responses := map[string]any{}
	var produces []any
	for code, r := range op["responses"].(map[string]any) {
		r := r.(map[string]any)
		res := map[string]any{"description": r["description"]}
		if content, ok := r["content"].(map[string]any); ok {
			res["schema"] = swaggerSchemaOf(content)
			produces = mediaTypes(content)
		}
		responses[code] = res
	}
	out["responses"] = responses
	if id, _ := op["operationId"].(string); strings.HasSuffix(id, "APIResources") {
		consumes = produces // kube-apiserver's discovery operations consume what they produce
	}
	out["consumes"] = consumes
	if produces != nil {
		out["produces"] = produces
	}
	return out
}

// swaggerParams converts v3 parameters ({"in","name","schema":{"type",...}}) to Swagger 2.0
// ones, which carry the schema's keywords themselves.
func swaggerParams(params []any) []any {
	out := make([]any, len(params))
	for i, p := range params {
		p := p.(map[string]any)
		q := make(map[string]any, len(p)+1)
		for k, v := range p {
			if k == "schema" {
				for sk, sv := range v.(map[string]any) {
					q[sk] = sv
				}
				continue
			}
			q[k] = v
		}
		out[i] = q
	}
	return out
}

// swaggerSchemaOf returns the schema of a v3 content map (every media type has the same
// reference) with the reference pointing to #/definitions/.
func swaggerSchemaOf(content map[string]any) map[string]any {
	for _, mt := range content {
		s := mt.(map[string]any)["schema"].(map[string]any)
		out := make(map[string]any, len(s))
		for k, v := range s {
			if ref, ok := v.(string); ok && k == "$ref" {
				v = refPrefixV2 + strings.TrimPrefix(ref, refPrefix)
			}
			out[k] = v
		}
		return out
	}
	return nil
}

// mediaTypes returns the media types of a v3 content map in kube-apiserver's order.
func mediaTypes(content map[string]any) []any {
	types := make([]string, 0, len(content))
	for mt := range content {
		types = append(types, mt)
	}
	sort.Slice(types, func(i, j int) bool {
		ri, rj := mediaTypeRank(types[i]), mediaTypeRank(types[j])
		if ri != rj {
			return ri < rj
		}
		return types[i] < types[j]
	})
	out := make([]any, len(types))
	for i, t := range types {
		out[i] = t
	}
	return out
}

// mediaTypeRank orders media types as kube-apiserver lists them in consumes and produces.
func mediaTypeRank(mt string) int {
	switch mt {
	case "*/*":
		return 0
	case "application/json-patch+json":
		return 1
	case "application/merge-patch+json":
		return 2
	case "application/strategic-merge-patch+json":
		return 3
	case "application/apply-patch+yaml":
		return 4
	case "application/json":
		return 5
	case "application/yaml":
		return 6
	case "application/json;stream=watch":
		return 7
	}
	return 8
}
