package openapi

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// prettyDescription is the text of the path-level "pretty" parameter (kube-apiserver
// hard-codes it; it is not an options struct field).
const prettyDescription = "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget)."

// namespaceDescription is the text of the {namespace} path parameter.
const namespaceDescription = "object name and auth scope, such as for teams and projects"

// Query parameter names of each operation, as kube-apiserver 1.32 publishes them. The
// descriptions and types come from the options structs' SwaggerDoc and field types, as
// kube-apiserver's installer derives them.
func listParamNames() []string {
	return []string{"allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit",
		"resourceVersion", "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch"}
}

func deleteCollectionListParamNames() []string {
	return []string{"continue", "fieldSelector", "labelSelector", "limit",
		"resourceVersion", "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds"}
}

func deleteParamNames() []string {
	return []string{"dryRun", "gracePeriodSeconds", "ignoreStoreReadErrorWithClusterBreakingPotential",
		"orphanDependents", "propagationPolicy"}
}

func writeParamNames() []string { return []string{"dryRun", "fieldManager", "fieldValidation"} }

func patchParamNames() []string {
	return []string{"dryRun", "fieldManager", "fieldValidation", "force"}
}

// queryParams holds the parameter lists shared by all operations of one build.
type queryParams struct {
	list, deleteCollection, delete, create, update, patch []any
}

func newQueryParams() (*queryParams, error) {
	listOpts := reflect.TypeFor[metav1.ListOptions]()
	deleteOpts := reflect.TypeFor[metav1.DeleteOptions]()
	var q queryParams
	var errs []error
	params := func(opts reflect.Type, names []string) []any {
		p, err := optionParams(opts, names)
		errs = append(errs, err)
		return p
	}
	q.list = params(listOpts, listParamNames())
	q.deleteCollection = sortParams(append(params(listOpts, deleteCollectionListParamNames()),
		params(deleteOpts, deleteParamNames())...))
	q.delete = params(deleteOpts, deleteParamNames())
	q.create = params(reflect.TypeFor[metav1.CreateOptions](), writeParamNames())
	q.update = params(reflect.TypeFor[metav1.UpdateOptions](), writeParamNames())
	q.patch = params(reflect.TypeFor[metav1.PatchOptions](), patchParamNames())
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &q, nil
}

// optionParams returns the query parameters named names of an options struct, sorted by
// name, each with its SwaggerDoc description and the type kube-apiserver publishes
// (string for strings and string lists, integer, boolean).
func optionParams(opts reflect.Type, names []string) ([]any, error) {
	doc := swaggerDoc(opts)
	fields := map[string]reflect.Type{}
	for i := 0; i < opts.NumField(); i++ {
		f := opts.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			fields[name] = f.Type
		}
	}
	params := make([]any, 0, len(names))
	for _, name := range names {
		t, ok := fields[name]
		if !ok {
			return nil, fmt.Errorf("openapi: %v has no field %q", opts, name)
		}
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		typ, _, ok := scalar(t.Kind())
		if !ok {
			return nil, fmt.Errorf("openapi: %v field %q has no query parameter type", opts, name)
		}
		params = append(params, parameter("query", name, doc[name], typ, false))
	}
	return sortParams(params), nil
}

// parameter returns one OpenAPI parameter object. kube-apiserver marks every parameter
// schema uniqueItems; that is kept so documents compare equal in shape.
func parameter(in, name, description, typ string, required bool) map[string]any {
	p := map[string]any{
		"in":     in,
		"name":   name,
		"schema": map[string]any{"type": typ, "uniqueItems": true},
	}
	if description != "" {
		p["description"] = description
	}
	if required {
		p["required"] = true
	}
	return p
}

func sortParams(params []any) []any {
	sort.SliceStable(params, func(i, j int) bool {
		return params[i].(map[string]any)["name"].(string) < params[j].(map[string]any)["name"].(string)
	})
	return params
}

func prettyParam() map[string]any {
	return parameter("query", "pretty", prettyDescription, "string", false)
}

func namespaceParam() map[string]any {
	return parameter("path", "namespace", namespaceDescription, "string", true)
}

func nameParam(kind string) map[string]any {
	return parameter("path", "name", "name of the "+kind, "string", true)
}
