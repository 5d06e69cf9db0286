package policy

import (
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// KindSchema is the published OpenAPI (v2) schema of a kind a policy selects, for type
// checking: Definitions resolves its $refs.
type KindSchema struct {
	GVK         schema.GroupVersionKind
	Schema      *spec.Schema
	Definitions map[string]*spec.Schema
}

// schemaTypes is a cel-go type provider whose object types are the schemas of one kind:
// each object schema with properties is a CEL object type (named by its definition, or by
// the path from it for inline schemas) whose fields have the properties' types. It is used
// to check expressions only, never to run them (objects run as dynamic maps).
type schemaTypes struct {
	*types.Registry
	defs    map[string]*spec.Schema
	objects map[string]*spec.Schema // CEL type name → object schema
}

func newSchemaTypes(defs map[string]*spec.Schema) *schemaTypes {
	r, err := types.NewRegistry()
	if err != nil {
		panic(err) // an empty registry always builds
	}
	return &schemaTypes{Registry: r, defs: defs, objects: map[string]*spec.Schema{}}
}

const definitionPrefix = "#/definitions/"

// celType maps a schema to its CEL type; name names it when it is an inline object.
func (s *schemaTypes) celType(sch *spec.Schema, name string, depth int) *types.Type {
	if sch == nil || depth > 64 {
		return types.DynType
	}
	if ref := sch.Ref.String(); ref != "" {
		def := strings.TrimPrefix(ref, definitionPrefix)
		target, ok := s.defs[def]
		if !ok {
			return types.DynType
		}
		return s.celType(target, def, depth+1)
	}
	if len(sch.AllOf) == 1 && len(sch.Properties) == 0 {
		return s.celType(&sch.AllOf[0], name, depth+1)
	}
	if ext, ok := sch.Extensions.GetBool("x-kubernetes-int-or-string"); ok && ext {
		return types.DynType
	}
	if ext, ok := sch.Extensions.GetBool("x-kubernetes-preserve-unknown-fields"); ok && ext {
		return types.DynType
	}
	switch {
	case sch.Type.Contains("integer"):
		return types.IntType
	case sch.Type.Contains("number"):
		return types.DoubleType
	case sch.Type.Contains("boolean"):
		return types.BoolType
	case sch.Type.Contains("string"):
		return types.StringType
	case sch.Type.Contains("array"):
		if sch.Items == nil || sch.Items.Schema == nil {
			return types.NewListType(types.DynType)
		}
		return types.NewListType(s.celType(sch.Items.Schema, name+"@", depth+1))
	}
	if len(sch.Properties) > 0 {
		if _, seen := s.objects[name]; !seen {
			s.objects[name] = sch
		}
		return types.NewObjectType(name)
	}
	if sch.AdditionalProperties != nil && sch.AdditionalProperties.Schema != nil {
		return types.NewMapType(types.StringType, s.celType(sch.AdditionalProperties.Schema, name+"@", depth+1))
	}
	return types.DynType
}

// FindStructType resolves the schemas' object types.
func (s *schemaTypes) FindStructType(name string) (*types.Type, bool) {
	if _, ok := s.objects[name]; ok {
		return types.NewTypeTypeWithParam(types.NewObjectType(name)), true
	}
	return s.Registry.FindStructType(name)
}

// FindStructFieldNames lists an object type's properties.
func (s *schemaTypes) FindStructFieldNames(name string) ([]string, bool) {
	if sch, ok := s.objects[name]; ok {
		return sortedKeys(sch.Properties), true
	}
	return s.Registry.FindStructFieldNames(name)
}

// FindStructFieldType types a property (every apiVersion and kind is a string).
func (s *schemaTypes) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	sch, ok := s.objects[name]
	if !ok {
		return s.Registry.FindStructFieldType(name, field)
	}
	prop, ok := sch.Properties[field]
	if !ok {
		return nil, false
	}
	return &types.FieldType{
		Type:    s.celType(&prop, name+"."+field, 0),
		IsSet:   func(any) bool { return false },
		GetFrom: func(any) (any, error) { return nil, nil },
	}, true
}

// newTypeCheckEnv returns the environment of policy expressions with object and
// oldObject typed by k's schema (dynamic when k has none).
func newTypeCheckEnv(k KindSchema) (*cel.Env, error) {
	st := newSchemaTypes(k.Definitions)
	name := "Object"
	for def, d := range k.Definitions {
		if d == k.Schema {
			name = def
			break
		}
	}
	objType := types.DynType
	if k.Schema != nil {
		objType = st.celType(k.Schema, name, 0)
	}
	opts := append([]cel.EnvOption{cel.CustomTypeAdapter(st), cel.CustomTypeProvider(st)}, baseEnvOptions()...)
	opts = append(opts, cel.Variable(varObject, objType), cel.Variable(varOldObject, objType))
	return cel.NewEnv(opts...)
}

// issuesOf returns the checker's findings on expr ("" when it compiles).
func issuesOf(env *cel.Env, expr string) string {
	_, issues := env.Compile(expr)
	if issues != nil && issues.Err() != nil {
		return issues.String()
	}
	return ""
}
