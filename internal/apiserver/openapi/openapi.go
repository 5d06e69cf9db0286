package openapi

import (
	"bytes"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"reflect"
	"sort"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource describes one served resource.
type Resource struct {
	// GVK is the group, version and kind of the objects.
	GVK schema.GroupVersionKind
	// ListKind is the kind of lists; empty means GVK.Kind + "List".
	ListKind string
	// Plural is the resource name in paths ("pods").
	Plural     string
	Namespaced bool
	// Verbs are the discovery verbs served ("get", "list", "create", "update", "patch",
	// "delete", "deletecollection"; "watch" is a list parameter). Nil means all of them.
	Verbs []string
	// Subresources served: "status", "scale".
	Subresources []string
	// Type is the Go struct type of the object (reflect.TypeOf(corev1.Pod{})); nil for
	// custom resources.
	Type reflect.Type
	// ListType is the Go struct type of the list (corev1.PodList); required with Type.
	ListType reflect.Type
	// CRDSchema is the CRD version's openAPIV3Schema, for custom resources (Type nil). Nil
	// publishes an object that preserves unknown fields.
	CRDSchema *apiextensionsv1.JSONSchemaProps
}

// Documents are the built /openapi/v3 documents. They are immutable.
type Documents struct {
	// Index is the JSON of GET /openapi/v3:
	// {"paths":{"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=<Hash>"},...}}.
	Index []byte
	// IndexHash is the hash of Index (kube-apiserver's ETag for the index).
	IndexHash string
	// Paths maps a group-version path ("api/v1", "apis/apps/v1") to its document.
	Paths map[string]Doc
}

// Doc is one group-version document.
type Doc struct {
	// JSON is the document exactly as served.
	JSON []byte
	// Hash is the uppercase hex SHA-512 of JSON: the ?hash= of its URL and its ETag.
	Hash string
}

// GroupVersionPath is the key of a group-version in Documents.Paths: "api/v1" for the core
// group, "apis/<group>/<version>" otherwise.
func GroupVersionPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}

// Hash is kube-openapi's ETag of a document: the uppercase hex SHA-512 of its bytes.
func Hash(data []byte) string {
	return fmt.Sprintf("%X", sha512.Sum512(data))
}

// ServerRelativeURL is the index link to a document: /openapi/v3/<gvPath>?hash=<hash>.
func ServerRelativeURL(gvPath, hash string) string {
	u := url.URL{Path: path.Join("/openapi/v3", gvPath), RawQuery: url.Values{"hash": {hash}}.Encode()}
	return u.String()
}

// resolved is a validated Resource with its schema names.
type resolved struct {
	Resource
	gvk      schema.GroupVersionKind
	listGVK  schema.GroupVersionKind
	verbs    map[string]bool
	builtin  bool
	objName  string
	listName string
}

// allVerbs are the verbs a Resource with nil Verbs serves.
func allVerbs() []string {
	return []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
}

// Build returns the /openapi/v3 index document and one document per group-version path
// ("api/v1", "apis/apps/v1", ...), each JSON-encoded with its content hash.
func Build(resources []Resource) (*Documents, error) {
	// 1. Validate, resolve defaults and sort for a deterministic output.
	rs, err := resolve(resources)
	if err != nil {
		return nil, err
	}
	params, err := newQueryParams()
	if err != nil {
		return nil, err
	}

	// 2. Generate the component schemas every document may use.
	defs := newDefinitions()
	for _, t := range []reflect.Type{
		reflect.TypeFor[metav1.DeleteOptions](), reflect.TypeFor[metav1.Status](),
		reflect.TypeFor[metav1.Patch](), reflect.TypeFor[metav1.APIResourceList](),
		reflect.TypeFor[metav1.ObjectMeta](), reflect.TypeFor[metav1.ListMeta](),
		reflect.TypeFor[autoscalingv1.Scale](),
	} {
		if _, err := defs.define(t); err != nil {
			return nil, err
		}
	}
	gvks := map[string][]schema.GroupVersionKind{}
	gvs := map[schema.GroupVersion][]*resolved{}
	for _, r := range rs {
		if r.builtin {
			if r.objName, err = defs.define(r.Type); err != nil {
				return nil, err
			}
			if r.listName, err = defs.define(r.ListType); err != nil {
				return nil, err
			}
		} else {
			obj, list, err := customResourceSchemas(r)
			if err != nil {
				return nil, err
			}
			r.objName, r.listName = customResourceName(r.gvk), customResourceName(r.listGVK)
			if _, ok := defs.schemas[r.objName]; ok {
				return nil, fmt.Errorf("openapi: schema %q of %v is defined twice", r.objName, r.gvk)
			}
			if _, ok := defs.schemas[r.listName]; ok {
				return nil, fmt.Errorf("openapi: schema %q of %v is defined twice", r.listName, r.listGVK)
			}
			defs.schemas[r.objName], defs.schemas[r.listName] = obj, list
		}
		gvks[r.objName] = append(gvks[r.objName], r.gvk)
		gvks[r.listName] = append(gvks[r.listName], r.listGVK)
		gvs[r.gvk.GroupVersion()] = append(gvs[r.gvk.GroupVersion()], r)
	}

	// 3. Mark the kinds with x-kubernetes-group-version-kind. DeleteOptions is accepted by
	// every served group-version; Status, APIResourceList and Scale by their own.
	served := []schema.GroupVersion{{Version: "v1"}}
	for gv := range gvs {
		if gv != (schema.GroupVersion{Version: "v1"}) {
			served = append(served, gv)
		}
	}
	for _, gv := range served {
		gvks[deleteOptionsName] = append(gvks[deleteOptionsName], gv.WithKind("DeleteOptions"))
	}
	gvks[statusName] = append(gvks[statusName], schema.GroupVersionKind{Version: "v1", Kind: "Status"})
	gvks[apiResourceListName] = append(gvks[apiResourceListName], schema.GroupVersionKind{Version: "v1", Kind: "APIResourceList"})
	gvks[scaleName] = append(gvks[scaleName], scaleGVK())
	for name, list := range gvks {
		sortGVKs(list)
		ext := make([]any, len(list))
		for i, gvk := range list {
			ext[i] = gvkObject(gvk)
		}
		defs.schemas[name][extGVK] = ext
	}

	// 4. One document per group-version: its paths and the schemas they reach.
	docs := &Documents{Paths: map[string]Doc{}}
	for gv, list := range gvs {
		pb := newPathBuilder(gv, params)
		for _, r := range list {
			pb.add(r)
		}
		doc := map[string]any{
			"openapi": "3.0.0",
			"info":    map[string]any{"title": "Kubernetes", "version": "unversioned"},
			"paths":   pb.paths,
			"components": map[string]any{
				"schemas": reachable(defs.schemas, pb.paths),
				"securitySchemes": map[string]any{
					"BearerToken": map[string]any{
						"description": "Bearer Token authentication",
						"in":          "header",
						"name":        "authorization",
						"type":        "apiKey",
					},
				},
			},
		}
		data, err := marshal(doc)
		if err != nil {
			return nil, fmt.Errorf("openapi: encoding %v: %w", gv, err)
		}
		docs.Paths[GroupVersionPath(gv)] = Doc{JSON: data, Hash: Hash(data)}
	}

	// 5. The index links every document with its hash.
	type entry struct {
		ServerRelativeURL string `json:"serverRelativeURL"`
	}
	index := struct {
		Paths map[string]entry `json:"paths"`
	}{Paths: map[string]entry{}}
	for p, d := range docs.Paths {
		index.Paths[p] = entry{ServerRelativeURL: ServerRelativeURL(p, d.Hash)}
	}
	if docs.Index, err = json.Marshal(index); err != nil {
		return nil, err
	}
	docs.IndexHash = Hash(docs.Index)
	return docs, nil
}

// resolve validates the resources and fills in defaults.
func resolve(resources []Resource) ([]*resolved, error) {
	seenResource := map[schema.GroupVersionResource]bool{}
	seenKind := map[schema.GroupVersionKind]bool{}
	var out []*resolved
	for _, res := range resources {
		r := &resolved{Resource: res, gvk: res.GVK, builtin: res.Type != nil, verbs: map[string]bool{}}
		switch {
		case r.gvk.Kind == "" || r.gvk.Version == "":
			return nil, fmt.Errorf("openapi: resource %q has no kind or version", r.Plural)
		case r.Plural == "" || strings.Contains(r.Plural, "/"):
			return nil, fmt.Errorf("openapi: %v has an invalid plural %q", r.gvk, r.Plural)
		case r.builtin && (r.Type.Kind() != reflect.Struct || r.ListType == nil || r.ListType.Kind() != reflect.Struct):
			return nil, fmt.Errorf("openapi: %v needs struct Type and ListType", r.gvk)
		}
		gvr := r.gvk.GroupVersion().WithResource(r.Plural)
		if seenResource[gvr] {
			return nil, fmt.Errorf("openapi: resource %v is listed twice", gvr)
		}
		seenResource[gvr] = true
		listKind := r.ListKind
		if listKind == "" {
			listKind = r.gvk.Kind + "List"
		}
		r.listGVK = r.gvk.GroupVersion().WithKind(listKind)
		for _, gvk := range []schema.GroupVersionKind{r.gvk, r.listGVK} {
			if seenKind[gvk] {
				return nil, fmt.Errorf("openapi: kind %v is served by two resources", gvk)
			}
			seenKind[gvk] = true
		}
		verbs := r.Verbs
		if verbs == nil {
			verbs = allVerbs()
		}
		for _, v := range verbs {
			r.verbs[v] = true
		}
		for _, sub := range r.Subresources {
			if sub != "status" && sub != "scale" {
				return nil, fmt.Errorf("openapi: %v has unsupported subresource %q", r.gvk, sub)
			}
		}
		r.Subresources = append([]string(nil), r.Subresources...)
		sort.Strings(r.Subresources)
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.gvk.Group != b.gvk.Group {
			return a.gvk.Group < b.gvk.Group
		}
		if a.gvk.Version != b.gvk.Version {
			return a.gvk.Version < b.gvk.Version
		}
		return a.Plural < b.Plural
	})
	return out, nil
}

// reachable returns the schemas referenced from root, directly or through other schemas.
func reachable(all map[string]map[string]any, root any) map[string]any {
	out := map[string]any{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "$ref" && strings.HasPrefix(s, refPrefix) {
					name := strings.TrimPrefix(s, refPrefix)
					if _, done := out[name]; !done {
						if def, ok := all[name]; ok {
							out[name] = def
							walk(def)
						}
					}
					continue
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(root)
	return out
}

func sortGVKs(list []schema.GroupVersionKind) {
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Kind < b.Kind
	})
}

// marshal encodes v compactly, with sorted object keys and without HTML escaping.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
