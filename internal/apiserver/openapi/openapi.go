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
	"sync"

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
	return NewBuilder().Build(resources)
}

// Builder builds Documents and keeps the encoded document of every group-version, so a
// rebuild after a CRD change only encodes the group-versions whose resources changed. A
// group-version document depends on its own resources and on the set of built-in
// resources (DeleteOptions lists the built-in group-versions), never on custom resources
// of other groups. It is safe for concurrent use.
type Builder struct {
	mu    sync.Mutex
	cache map[string]cachedDoc // group-version path → last document
	v2    *V2                  // last /openapi/v2 document
	v2Key string               // the fingerprints of the resources of v2
}

type cachedDoc struct {
	key string
	doc Doc
}

// NewBuilder returns a Builder with an empty cache.
func NewBuilder() *Builder { return &Builder{cache: map[string]cachedDoc{}} }

// Build is Build with the Builder's cache: the result equals Build(resources).
func (b *Builder) Build(resources []Resource) (*Documents, error) {
	b.mu.Lock()
	defer b.mu.Unlock()

	// 1. Validate, resolve defaults and sort for a deterministic output; group by
	// group-version and key each group-version by everything its document depends on.
	rs, err := resolve(resources)
	if err != nil {
		return nil, err
	}
	gvs := map[schema.GroupVersion][]*resolved{}
	fingerprints := map[*resolved]string{}
	builtinKey := ""
	for _, r := range rs {
		gvs[r.gvk.GroupVersion()] = append(gvs[r.gvk.GroupVersion()], r)
		if fingerprints[r], err = r.fingerprint(); err != nil {
			return nil, err
		}
		if r.builtin {
			builtinKey += fingerprints[r]
		}
	}
	keys := map[schema.GroupVersion]string{}
	var stale []schema.GroupVersion
	for gv, list := range gvs {
		key := builtinKey
		for _, r := range list {
			if !r.builtin {
				key += fingerprints[r]
			}
		}
		keys[gv] = key
		if b.cache[GroupVersionPath(gv)].key != key {
			stale = append(stale, gv)
		}
	}

	// 2. Generate the component schemas of the group-versions to encode, and mark the kinds
	// with x-kubernetes-group-version-kind.
	var defined []*resolved
	for _, gv := range stale {
		defined = append(defined, gvs[gv]...)
	}
	defs, err := buildDefinitions(false, defined, rs)
	if err != nil {
		return nil, err
	}

	// 3. Encode the stale documents: their paths and the schemas they reach.
	params, err := newQueryParams()
	if err != nil {
		return nil, err
	}
	cache := map[string]cachedDoc{}
	for gv := range gvs {
		if c, ok := b.cache[GroupVersionPath(gv)]; ok && c.key == keys[gv] {
			cache[GroupVersionPath(gv)] = c
		}
	}
	for _, gv := range stale {
		doc, err := encode(gv, gvs[gv], defs, params)
		if err != nil {
			return nil, err
		}
		cache[GroupVersionPath(gv)] = cachedDoc{key: keys[gv], doc: doc}
	}
	b.cache = cache

	// 4. The index links every document with its hash.
	docs := &Documents{Paths: make(map[string]Doc, len(cache))}
	type entry struct {
		ServerRelativeURL string `json:"serverRelativeURL"`
	}
	index := struct {
		Paths map[string]entry `json:"paths"`
	}{Paths: map[string]entry{}}
	for p, c := range cache {
		docs.Paths[p] = c.doc
		index.Paths[p] = entry{ServerRelativeURL: ServerRelativeURL(p, c.doc.Hash)}
	}
	if docs.Index, err = json.Marshal(index); err != nil {
		return nil, err
	}
	docs.IndexHash = Hash(docs.Index)
	return docs, nil
}

// defineCommon adds the schemas every document uses: the apimachinery kinds of the
// operations and the metadata and Scale types.
// buildDefinitions returns the common definitions, those of the resources defined, and
// every kind of rs marked with its group, version and kind.
func buildDefinitions(v2 bool, defined, rs []*resolved) (*definitions, error) {
	defs := newDefinitions(v2)
	if err := defineCommon(defs); err != nil {
		return nil, err
	}
	for _, r := range defined {
		if err := defineResource(defs, r); err != nil {
			return nil, err
		}
	}
	markKinds(defs, rs)
	return defs, nil
}

func defineCommon(defs *definitions) error {
	for _, t := range []reflect.Type{
		reflect.TypeFor[metav1.DeleteOptions](), reflect.TypeFor[metav1.Status](),
		reflect.TypeFor[metav1.Patch](), reflect.TypeFor[metav1.APIResourceList](),
		reflect.TypeFor[metav1.ObjectMeta](), reflect.TypeFor[metav1.ListMeta](),
		reflect.TypeFor[autoscalingv1.Scale](),
	} {
		if _, err := defs.define(t); err != nil {
			return err
		}
	}
	return nil
}

// markKinds sets x-kubernetes-group-version-kind on the defined schemas of the served
// kinds and their lists. DeleteOptions lists the built-in group-versions (as
// kube-apiserver's scheme does; custom resource groups are not in it); Status,
// APIResourceList and Scale name their own. Schemas not in defs are skipped.
func markKinds(defs *definitions, rs []*resolved) {
	gvks := map[string][]schema.GroupVersionKind{}
	builtinGVs := map[schema.GroupVersion]bool{{Version: "v1"}: true}
	for _, r := range rs {
		obj, list := r.names()
		gvks[obj] = append(gvks[obj], r.gvk)
		gvks[list] = append(gvks[list], r.listGVK)
		if r.builtin {
			builtinGVs[r.gvk.GroupVersion()] = true
		}
	}
	for gv := range builtinGVs {
		gvks[deleteOptionsName] = append(gvks[deleteOptionsName], gv.WithKind("DeleteOptions"))
	}
	gvks[statusName] = append(gvks[statusName], schema.GroupVersionKind{Version: "v1", Kind: "Status"})
	gvks[apiResourceListName] = append(gvks[apiResourceListName], schema.GroupVersionKind{Version: "v1", Kind: "APIResourceList"})
	gvks[scaleName] = append(gvks[scaleName], scaleGVK())
	for name, list := range gvks {
		s, ok := defs.schemas[name]
		if !ok {
			continue
		}
		sortGVKs(list)
		ext := make([]any, len(list))
		for i, gvk := range list {
			ext[i] = gvkObject(gvk)
		}
		s[extGVK] = ext
	}
}

// defineResource adds the object and list schemas of one resource to defs.
func defineResource(defs *definitions, r *resolved) error {
	if r.builtin {
		if _, err := defs.define(r.Type); err != nil {
			return err
		}
		_, err := defs.define(r.ListType)
		return err
	}
	obj, list, err := customResourceSchemas(defs, r)
	if err != nil {
		return err
	}
	objName, listName := r.names()
	for _, name := range []string{objName, listName} {
		if _, ok := defs.schemas[name]; ok {
			return fmt.Errorf("openapi: schema %q of %v is defined twice", name, r.gvk)
		}
	}
	defs.schemas[objName], defs.schemas[listName] = obj, list
	return nil
}

// encode builds and encodes the document of one group-version.
func encode(gv schema.GroupVersion, list []*resolved, defs *definitions, params *queryParams) (Doc, error) {
	pb := newPathBuilder(gv, params)
	for _, r := range list {
		pb.add(r)
	}
	doc := map[string]any{
		"openapi": "3.0.0",
		"info":    map[string]any{"title": "Kubernetes", "version": "unversioned"},
		"paths":   pb.paths,
		"components": map[string]any{
			"schemas": reachable(defs.schemas, pb.paths, refPrefix),
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
		return Doc{}, fmt.Errorf("openapi: encoding %v: %w", gv, err)
	}
	return Doc{JSON: data, Hash: Hash(data)}, nil
}

// names returns the component names of the object and list schemas.
func (r *resolved) names() (obj, list string) {
	if r.builtin {
		return modelName(r.Type), modelName(r.ListType)
	}
	return customResourceName(r.gvk), customResourceName(r.listGVK)
}

// fingerprint identifies everything of r its documents depend on.
func (r *resolved) fingerprint() (string, error) {
	verbs := make([]string, 0, len(r.verbs))
	for v := range r.verbs {
		verbs = append(verbs, v)
	}
	sort.Strings(verbs)
	f := fmt.Sprintf("%s|%s|%s|%t|%v|%v|", r.gvk, r.listGVK, r.Plural, r.Namespaced, verbs, r.Subresources)
	if r.builtin {
		return f + r.Type.PkgPath() + "." + r.Type.Name() + "|" + r.ListType.PkgPath() + "." + r.ListType.Name() + ";", nil
	}
	crd, err := json.Marshal(r.CRDSchema)
	if err != nil {
		return "", fmt.Errorf("openapi: schema of %v: %w", r.gvk, err)
	}
	return f + string(crd) + ";", nil
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
		r.objName, r.listName = r.names()
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

// reachable returns the schemas referenced (with prefix) from root, directly or through
// other schemas.
func reachable(all map[string]map[string]any, root any, prefix string) map[string]any {
	out := map[string]any{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "$ref" && strings.HasPrefix(s, prefix) {
					name := strings.TrimPrefix(s, prefix)
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
