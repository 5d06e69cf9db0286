package policy

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// The types mutations build: `Object{spec: Object.spec{replicas: 3}}` for an apply
// configuration (any name "Object" or "Object.<path>" is an object whose fields are all
// dynamic), and `JSONPatch{op: "add", path: "/x", value: 1}` for a JSON patch operation.
const (
	objectTypeName    = "Object"
	jsonPatchTypeName = "JSONPatch"
)

var jsonPatchType = types.NewObjectType(jsonPatchTypeName)

func isObjectType(name string) bool {
	return name == objectTypeName || strings.HasPrefix(name, objectTypeName+".")
}

// mutationProvider is cel-go's registry plus the Object and JSONPatch types.
type mutationProvider struct {
	*types.Registry
}

func newMutationProvider() *mutationProvider {
	r, err := types.NewRegistry()
	if err != nil {
		panic(err) // an empty registry always builds
	}
	return &mutationProvider{Registry: r}
}

// FindStructType resolves Object types and JSONPatch.
func (p *mutationProvider) FindStructType(name string) (*types.Type, bool) {
	if isObjectType(name) || name == jsonPatchTypeName {
		return types.NewTypeTypeWithParam(types.NewObjectType(name)), true
	}
	return p.Registry.FindStructType(name)
}

// FindStructFieldNames returns JSONPatch's fields; Object types allow any field.
func (p *mutationProvider) FindStructFieldNames(name string) ([]string, bool) {
	if isObjectType(name) {
		return nil, true
	}
	if name == jsonPatchTypeName {
		return []string{"op", "from", "path", "value"}, true
	}
	return p.Registry.FindStructFieldNames(name)
}

// FindStructFieldType types every Object field dyn, and JSONPatch's op, from and path
// strings.
func (p *mutationProvider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	if isObjectType(name) {
		return &types.FieldType{
			Type: types.DynType,
			IsSet: func(target any) bool {
				m, ok := target.(map[string]any)
				_, set := m[field]
				return ok && set
			},
			GetFrom: func(target any) (any, error) {
				if m, ok := target.(map[string]any); ok {
					return m[field], nil
				}
				return nil, fmt.Errorf("cannot get field %q", field)
			},
		}, true
	}
	if name == jsonPatchTypeName {
		switch field {
		case "op", "from", "path":
			return &types.FieldType{Type: types.StringType}, true
		case "value":
			return &types.FieldType{Type: types.DynType}, true
		}
		return nil, false
	}
	return p.Registry.FindStructFieldType(name, field)
}

// NewValue builds an Object or a JSONPatch.
func (p *mutationProvider) NewValue(name string, fields map[string]ref.Val) ref.Val {
	if isObjectType(name) {
		return &objectVal{typeName: name, fields: fields}
	}
	if name == jsonPatchTypeName {
		op := &jsonPatchVal{}
		for k, v := range fields {
			switch k {
			case "op", "path", "from":
				s, ok := v.Value().(string)
				if !ok {
					return types.NewErr("unexpected type %T for JSONPatchType '%s' field", v.Value(), k)
				}
				switch k {
				case "op":
					op.Op = s
				case "path":
					op.Path = s
				default:
					op.From = s
				}
			case "value":
				op.Val = v
			default:
				return types.NewErr("unexpected JSONPatchType field: %s", k)
			}
		}
		return op
	}
	return p.Registry.NewValue(name, fields)
}

// objectVal is an Object built by an expression.
type objectVal struct {
	typeName string
	fields   map[string]ref.Val
}

var (
	_ ref.Val        = (*objectVal)(nil)
	_ traits.Indexer = (*objectVal)(nil)
)

func (v *objectVal) ConvertToNative(t reflect.Type) (any, error) {
	if t != reflect.TypeFor[map[string]any]() && t != reflect.TypeFor[any]() {
		return nil, fmt.Errorf("unable to convert to %v", t)
	}
	return toNative(v)
}

func (v *objectVal) ConvertToType(t ref.Type) ref.Val {
	if t.TypeName() == v.typeName {
		return v
	}
	if t == types.TypeType {
		return types.NewTypeTypeWithParam(types.NewObjectType(v.typeName))
	}
	return types.NewErr("unsupported conversion into %v", t)
}

func (v *objectVal) Equal(o ref.Val) ref.Val {
	other, ok := o.(*objectVal)
	if !ok || other.typeName != v.typeName || len(other.fields) != len(v.fields) {
		return types.False
	}
	for k, f := range v.fields {
		of, ok := other.fields[k]
		if !ok || f.Equal(of) != types.True {
			return types.False
		}
	}
	return types.True
}

func (v *objectVal) Type() ref.Type { return types.NewObjectType(v.typeName) }

func (v *objectVal) Value() any {
	out, err := toNative(v)
	if err != nil {
		return types.WrapErr(err)
	}
	return out
}

// Get returns a field (an Object's fields may be read back).
func (v *objectVal) Get(index ref.Val) ref.Val {
	if name, ok := index.(types.String); ok {
		if f, ok := v.fields[string(name)]; ok {
			return f
		}
	}
	return types.NewErr("no such field: %v", index)
}

// checkTypeNames is upstream's CheckTypeNamesMatchFieldPathNames: Object.spec{} must sit
// under the field spec of Object{}, and so on.
func checkTypeNames(v ref.Val, path []string) []error {
	var errs []error
	switch x := v.(type) {
	case *objectVal:
		want := strings.Join(path, ".")
		if x.typeName != want {
			errs = append(errs, fmt.Errorf("unexpected type name %q, expected %q, which matches field name path from root Object type", x.typeName, want))
		}
		for _, k := range sortedKeys(x.fields) {
			errs = append(errs, checkTypeNames(x.fields[k], append(append([]string(nil), path...), k))...)
		}
	case traits.Lister:
		it := x.Iterator() // a list's iterator yields its elements
		for it.HasNext() == types.True {
			errs = append(errs, checkTypeNames(it.Next(), path)...)
		}
	case traits.Mapper:
		it := x.Iterator()
		for it.HasNext() == types.True {
			errs = append(errs, checkTypeNames(x.Get(it.Next()), path)...)
		}
	}
	return errs
}

// jsonPatchVal is one JSON patch operation built by an expression.
type jsonPatchVal struct {
	Op, From, Path string
	Val            ref.Val
}

var _ ref.Val = (*jsonPatchVal)(nil)

func (p *jsonPatchVal) ConvertToNative(t reflect.Type) (any, error) {
	if t == reflect.TypeOf(p) {
		return p, nil
	}
	return nil, fmt.Errorf("cannot convert to native type: %v", t)
}

func (p *jsonPatchVal) ConvertToType(t ref.Type) ref.Val {
	if t.TypeName() == jsonPatchTypeName {
		return p
	}
	if t == types.TypeType {
		return types.NewTypeTypeWithParam(jsonPatchType)
	}
	return types.NewErr("unsupported type: %s", t.TypeName())
}

func (p *jsonPatchVal) Equal(o ref.Val) ref.Val {
	other, ok := o.(*jsonPatchVal)
	if !ok || p.Op != other.Op || p.From != other.From || p.Path != other.Path || (p.Val == nil) != (other.Val == nil) {
		return types.False
	}
	if p.Val == nil {
		return types.True
	}
	return p.Val.Equal(other.Val)
}

func (p *jsonPatchVal) Type() ref.Type { return jsonPatchType }
func (p *jsonPatchVal) Value() any     { return p }

// toNative turns a CEL value into its JSON form (maps, lists, strings, numbers, bools, nil).
func toNative(v ref.Val) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case *objectVal:
		out := make(map[string]any, len(x.fields))
		for k, f := range x.fields {
			n, err := toNative(f)
			if err != nil {
				return nil, fmt.Errorf("fail to convert field %q: %w", k, err)
			}
			out[k] = n
		}
		return out, nil
	case types.Null:
		return nil, nil
	case types.Bool:
		return bool(x), nil
	case types.Int:
		return int64(x), nil
	case types.Uint:
		return int64(x), nil
	case types.Double:
		return float64(x), nil
	case types.String:
		return string(x), nil
	case types.Bytes:
		return []byte(x), nil
	case *types.Err:
		return nil, x
	case traits.Lister:
		out := []any{}
		it := x.Iterator()
		for it.HasNext() == types.True {
			n, err := toNative(it.Next()) // a list's iterator yields its elements
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		return out, nil
	case traits.Mapper:
		out := map[string]any{}
		it := x.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			ks, ok := k.(types.String)
			if !ok {
				return nil, fmt.Errorf("map key %v is of type %s, not string", k, k.Type().TypeName())
			}
			n, err := toNative(x.Get(k))
			if err != nil {
				return nil, err
			}
			out[string(ks)] = n
		}
		return out, nil
	}
	// Anything else (a timestamp, a quantity): its native value.
	switch n := v.Value().(type) {
	case map[string]any, []any, string, int64, float64, bool:
		return n, nil
	case fmt.Stringer:
		return n.String(), nil
	}
	return nil, errors.New("unsupported value of type " + v.Type().TypeName())
}

// jsonPatchLibrary adds jsonpatch.escapeKey, Kubernetes' escaping of a key for a JSON
// pointer ("~" → "~0", "/" → "~1").
func jsonPatchLibrary() cel.EnvOption {
	return cel.Function("jsonpatch.escapeKey", cel.Overload("string_jsonpatch_escapeKey_string", []*cel.Type{cel.StringType}, cel.StringType,
		cel.UnaryBinding(func(arg ref.Val) ref.Val {
			s, ok := arg.(types.String)
			if !ok {
				return types.MaybeNoSuchOverloadErr(arg)
			}
			return types.String(strings.NewReplacer("~", "~0", "/", "~1").Replace(string(s)))
		})))
}
