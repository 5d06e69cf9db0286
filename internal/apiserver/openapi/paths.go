package openapi

import (
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Media types quotad's HTTP edge answers with, and the patch types it accepts.
func objectMediaTypes() []string { return []string{"application/json", "application/yaml"} }

func listMediaTypes() []string {
	return []string{"application/json", "application/json;stream=watch", "application/yaml"}
}

// patchMediaTypes are the request bodies PATCH accepts. Custom resources do not accept
// strategic merge patch; kubectl reads its absence and falls back to a JSON merge patch.
func patchMediaTypes(strategic bool) []string {
	types := []string{"application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json"}
	if strategic {
		types = append(types, "application/strategic-merge-patch+json")
	}
	return types
}

// Component names of the apimachinery kinds the operations use.
const (
	deleteOptionsName   = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"
	statusName          = "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
	patchName           = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
	apiResourceListName = "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList"
	objectMetaName      = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	listMetaName        = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
	scaleName           = "io.k8s.api.autoscaling.v1.Scale"
)

// scaleGVK is the kind every /scale subresource serves.
func scaleGVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}
}

// pathBuilder writes the paths of one group-version document.
type pathBuilder struct {
	gv     schema.GroupVersion
	params *queryParams
	paths  map[string]any
}

func newPathBuilder(gv schema.GroupVersion, params *queryParams) *pathBuilder {
	p := &pathBuilder{gv: gv, params: params, paths: map[string]any{}}
	p.paths[p.prefix()+"/"] = map[string]any{
		"get": map[string]any{
			"description": "get available resources",
			"operationId": "get" + p.opGV() + "APIResources",
			"responses":   responses(apiResourceListName, objectMediaTypes(), "200"),
			"tags":        []any{p.tag()},
		},
	}
	return p
}

// prefix is "/api/v1" or "/apis/<group>/<version>".
func (p *pathBuilder) prefix() string {
	if p.gv.Group == "" {
		return "/api/" + p.gv.Version
	}
	return "/apis/" + p.gv.Group + "/" + p.gv.Version
}

// opGV is the group-version part of operation IDs: CoreV1, AppsV1, RbacAuthorizationV1,
// StableExampleComV1 (kube-apiserver drops a ".k8s.io" suffix).
func (p *pathBuilder) opGV() string {
	group := p.gv.Group
	if group == "" {
		group = "core"
	}
	return camel(strings.TrimSuffix(group, ".k8s.io"), true) + camel(p.gv.Version, true)
}

// tag is the operation tag: core_v1, apps_v1, rbacAuthorization_v1.
func (p *pathBuilder) tag() string {
	group := p.gv.Group
	if group == "" {
		group = "core"
	}
	return camel(strings.TrimSuffix(group, ".k8s.io"), false) + "_" + p.gv.Version
}

// add writes the operations of one resource.
func (p *pathBuilder) add(r *resolved) {
	kind := r.gvk.Kind
	gvk := gvkObject(r.gvk)
	ns := ""
	collection := p.prefix() + "/" + r.Plural
	collectionParams := []any{prettyParam()}
	if r.Namespaced {
		ns = "Namespaced"
		collection = p.prefix() + "/namespaces/{namespace}/" + r.Plural
		collectionParams = []any{namespaceParam(), prettyParam()}
	}
	item := collection + "/{name}"
	itemParams := func(nameKind string) []any {
		if r.Namespaced {
			return []any{nameParam(nameKind), namespaceParam(), prettyParam()}
		}
		return []any{nameParam(nameKind), prettyParam()}
	}
	id := func(verb, suffix string) string { return verb + p.opGV() + ns + kind + suffix }
	newOp := func(description, operationID, action string, opGVK map[string]any, res map[string]any) map[string]any {
		return map[string]any{
			"description":                     description,
			"operationId":                     operationID,
			"responses":                       res,
			"tags":                            []any{p.tag()},
			"x-kubernetes-action":             action,
			"x-kubernetes-group-version-kind": opGVK,
		}
	}
	withParams := func(op map[string]any, params []any) map[string]any {
		if len(params) > 0 {
			op["parameters"] = params
		}
		return op
	}
	withBody := func(op map[string]any, ref string, mediaTypes []string, required bool) map[string]any {
		body := map[string]any{"content": content(ref, mediaTypes)}
		if required {
			body["required"] = true
		}
		op["requestBody"] = body
		return op
	}

	// 1. The collection: list, create, deletecollection.
	coll := map[string]any{"parameters": collectionParams}
	if r.verbs["list"] {
		coll["get"] = withParams(newOp("list or watch objects of kind "+kind, id("list", ""), "list", gvk,
			responses(r.listName, listMediaTypes(), "200")), p.params.list)
	}
	if r.verbs["create"] {
		coll["post"] = withBody(withParams(newOp("create"+article(kind)+kind, id("create", ""), "post", gvk,
			responses(r.objName, objectMediaTypes(), "200", "201", "202")), p.params.create),
			r.objName, []string{"*/*"}, true)
	}
	if r.verbs["deletecollection"] {
		coll["delete"] = withBody(withParams(newOp("delete collection of "+kind, "delete"+p.opGV()+"Collection"+ns+kind, "deletecollection", gvk,
			responses(statusName, objectMediaTypes(), "200")), p.params.deleteCollection),
			deleteOptionsName, []string{"*/*"}, false)
	}
	if len(coll) > 1 {
		p.paths[collection] = coll
	}

	// 2. Listing across namespaces.
	if r.Namespaced && r.verbs["list"] {
		p.paths[p.prefix()+"/"+r.Plural] = map[string]any{
			"get": newOp("list or watch objects of kind "+kind, "list"+p.opGV()+kind+"ForAllNamespaces", "list", gvk,
				responses(r.listName, listMediaTypes(), "200")),
			"parameters": sortParams(append([]any{prettyParam()}, p.params.list...)),
		}
	}

	// 3. One object: get, replace, patch, delete.
	obj := map[string]any{"parameters": itemParams(kind)}
	if r.verbs["get"] {
		obj["get"] = newOp("read the specified "+kind, id("read", ""), "get", gvk,
			responses(r.objName, objectMediaTypes(), "200"))
	}
	if r.verbs["update"] {
		obj["put"] = withBody(withParams(newOp("replace the specified "+kind, id("replace", ""), "put", gvk,
			responses(r.objName, objectMediaTypes(), "200", "201")), p.params.update),
			r.objName, []string{"*/*"}, true)
	}
	if r.verbs["patch"] {
		obj["patch"] = withBody(withParams(newOp("partially update the specified "+kind, id("patch", ""), "patch", gvk,
			responses(r.objName, objectMediaTypes(), "200", "201")), p.params.patch),
			patchName, patchMediaTypes(r.builtin), true)
	}
	if r.verbs["delete"] {
		obj["delete"] = withBody(withParams(newOp("delete"+article(kind)+kind, id("delete", ""), "delete", gvk,
			responses(statusName, objectMediaTypes(), "200", "202")), p.params.delete),
			deleteOptionsName, []string{"*/*"}, false)
	}
	if len(obj) > 1 {
		p.paths[item] = obj
	}

	// 4. Subresources: status (the object itself) and scale (autoscaling/v1 Scale).
	for _, sub := range r.Subresources {
		ref, subGVK, subject, nameKind := r.objName, gvk, kind, kind
		if sub == "scale" {
			ref, subGVK, nameKind = scaleName, gvkObject(scaleGVK()), "Scale"
		}
		suffix := camel(sub, true)
		p.paths[item+"/"+sub] = map[string]any{
			"parameters": itemParams(nameKind),
			"get": newOp("read "+sub+" of the specified "+subject, id("read", suffix), "get", subGVK,
				responses(ref, objectMediaTypes(), "200")),
			"put": withBody(withParams(newOp("replace "+sub+" of the specified "+subject, id("replace", suffix), "put", subGVK,
				responses(ref, objectMediaTypes(), "200", "201")), p.params.update),
				ref, []string{"*/*"}, true),
			"patch": withBody(withParams(newOp("partially update "+sub+" of the specified "+subject, id("patch", suffix), "patch", subGVK,
				responses(ref, objectMediaTypes(), "200", "201")), p.params.patch),
				patchName, patchMediaTypes(r.builtin), true),
		}
	}
}

// responses returns the responses object: each code with the schema ref in every media
// type, plus 401.
func responses(ref string, mediaTypes []string, codes ...string) map[string]any {
	text := map[string]string{"200": "OK", "201": "Created", "202": "Accepted"}
	res := map[string]any{"401": map[string]any{"description": "Unauthorized"}}
	for _, code := range codes {
		res[code] = map[string]any{"content": content(ref, mediaTypes), "description": text[code]}
	}
	return res
}

func content(ref string, mediaTypes []string) map[string]any {
	c := make(map[string]any, len(mediaTypes))
	for _, mt := range mediaTypes {
		c[mt] = map[string]any{"schema": map[string]any{"$ref": refPrefix + ref}}
	}
	return c
}

func gvkObject(gvk schema.GroupVersionKind) map[string]any {
	return map[string]any{"group": gvk.Group, "kind": gvk.Kind, "version": gvk.Version}
}

// article is kube-apiserver's getArticleForNoun with " " padding: plurals get none.
func article(noun string) string {
	if !strings.HasSuffix(noun, "ss") && strings.HasSuffix(noun, "s") {
		return " "
	}
	if noun != "" && strings.ContainsRune("aeiouAEIOU", rune(noun[0])) {
		return " an "
	}
	return " a "
}

// camel joins the dot-, dash- and underscore-separated words of s, capitalising every word
// (or every word but the first).
func camel(s string, upperFirst bool) string {
	var b strings.Builder
	words := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, w := range words {
		if i > 0 || upperFirst {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
	}
	return b.String()
}
