package openapi

//go:generate go run ./internal/markersgen -o markers_generated.go

import (
	"encoding/json"
	"reflect"
	"strings"
)

// enumHeader starts the paragraph kube-openapi appends to the description of a field of an
// +enum type.
const enumHeader = "Possible enum values:"

// enumOf returns the values of t (or of the type t points to) when it is an +enum string
// type of the k8s.io API sources, sorted as kube-openapi sorts them, and the description
// lines kube-openapi adds for a field of that type.
func enumOf(t reflect.Type) (values []any, lines []string, ok bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.String || t.Name() == "" || t.PkgPath() == "" {
		return nil, nil, false
	}
	vs, lines, ok := generatedEnum(t.PkgPath() + "." + t.Name())
	if !ok || len(vs) == 0 {
		return nil, nil, false
	}
	values = make([]any, len(vs))
	for i, v := range vs {
		values[i] = v
	}
	return values, lines, true
}

// withEnumLines appends kube-openapi's "Possible enum values:" paragraph to a description.
func withEnumLines(desc string, lines []string) string {
	if len(lines) == 0 {
		return desc
	}
	tail := enumHeader + "\n" + strings.Join(lines, "\n")
	if desc == "" {
		return tail
	}
	return desc + "\n\n" + tail
}

// markerDefault returns the value of the +default marker of field f of struct type owner.
func markerDefault(owner reflect.Type, f reflect.StructField) (any, bool) {
	raw, ok := generatedDefault(owner.PkgPath() + "." + owner.Name() + "." + f.Name)
	if !ok {
		return nil, false
	}
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return nil, false
	}
	return v, true
}
