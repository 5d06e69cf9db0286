package policy

import (
	"fmt"
	"math"
	"reflect"
	"regexp"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"k8s.io/apimachinery/pkg/api/resource"

	qty "github.com/quotad/quotad/internal/quota/quantity"
)

// quantityType is Kubernetes CEL's Quantity (k8s.io/apiserver/pkg/cel/library/quantity.go).
var quantityType = cel.OpaqueType("kubernetes.Quantity")

// quantity is a resource.Quantity as a CEL value.
type quantity struct{ q resource.Quantity }

func (v quantity) ConvertToNative(t reflect.Type) (any, error) {
	if reflect.TypeOf(v.q).AssignableTo(t) {
		return v.q, nil
	}
	if reflect.TypeOf(&v.q).AssignableTo(t) {
		return &v.q, nil
	}
	return nil, fmt.Errorf("type conversion error from 'Quantity' to '%v'", t)
}

func (v quantity) ConvertToType(t ref.Type) ref.Val {
	switch t {
	case quantityType:
		return v
	case types.TypeType:
		return quantityType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", quantityType, t)
}

func (v quantity) Equal(o ref.Val) ref.Val {
	other, ok := o.(quantity)
	if !ok {
		return types.MaybeNoSuchOverloadErr(o)
	}
	return types.Bool(v.q.Equal(other.q))
}

func (v quantity) Type() ref.Type { return quantityType }
func (v quantity) Value() any     { return v.q }

// kubernetesLibrary is the part of Kubernetes' CEL libraries quotad has: quantity()
// and isQuantity() with the Quantity methods, and the regex functions find and findAll.
func kubernetesLibrary() cel.EnvOption {
	q := func(v ref.Val) (resource.Quantity, bool) {
		x, ok := v.(quantity)
		return x.q, ok
	}
	return cel.Lib(kubernetesLib{opts: []cel.EnvOption{
		cel.Function("quantity", cel.Overload("string_to_quantity", []*cel.Type{cel.StringType}, quantityType,
			cel.UnaryBinding(func(arg ref.Val) ref.Val {
				s, ok := arg.(types.String)
				if !ok {
					return types.MaybeNoSuchOverloadErr(arg)
				}
				parsed, err := parseQuantity(string(s))
				if err != nil {
					return types.WrapErr(err)
				}
				return quantity{parsed}
			}))),
		cel.Function("isQuantity", cel.Overload("is_quantity_string", []*cel.Type{cel.StringType}, cel.BoolType,
			cel.UnaryBinding(func(arg ref.Val) ref.Val {
				s, ok := arg.(types.String)
				if !ok {
					return types.MaybeNoSuchOverloadErr(arg)
				}
				_, err := parseQuantity(string(s))
				return types.Bool(err == nil)
			}))),
		cel.Function("sign", cel.MemberOverload("quantity_sign", []*cel.Type{quantityType}, cel.IntType,
			cel.UnaryBinding(func(arg ref.Val) ref.Val {
				x, ok := q(arg)
				if !ok {
					return types.MaybeNoSuchOverloadErr(arg)
				}
				return types.Int(x.Sign())
			}))),
		cel.Function("isInteger", cel.MemberOverload("quantity_is_integer", []*cel.Type{quantityType}, cel.BoolType,
			cel.UnaryBinding(func(arg ref.Val) ref.Val {
				x, ok := q(arg)
				if !ok {
					return types.MaybeNoSuchOverloadErr(arg)
				}
				_, ok = x.AsInt64()
				return types.Bool(ok)
			}))),
		cel.Function("asInteger", cel.MemberOverload("quantity_get_integer", []*cel.Type{quantityType}, cel.IntType,
			cel.UnaryBinding(func(arg ref.Val) ref.Val {
				x, ok := q(arg)
				if !ok {
					return types.MaybeNoSuchOverloadErr(arg)
				}
				i, ok := x.AsInt64()
				if !ok {
					return types.NewErr("cannot convert value to integer")
				}
				return types.Int(i)
			}))),
		cel.Function("asApproximateFloat", cel.MemberOverload("quantity_get_float", []*cel.Type{quantityType}, cel.DoubleType,
			cel.UnaryBinding(func(arg ref.Val) ref.Val {
				x, ok := q(arg)
				if !ok {
					return types.MaybeNoSuchOverloadErr(arg)
				}
				return types.Double(x.AsApproximateFloat64())
			}))),
		cel.Function("compareTo", cel.MemberOverload("quantity_compareTo", []*cel.Type{quantityType, quantityType}, cel.IntType,
			cel.BinaryBinding(func(l, r ref.Val) ref.Val {
				a, ok1 := q(l)
				b, ok2 := q(r)
				if !ok1 || !ok2 {
					return types.MaybeNoSuchOverloadErr(r)
				}
				return types.Int(qty.Cmp(a, b))
			}))),
		cel.Function("isGreaterThan", cel.MemberOverload("quantity_isGreaterThan", []*cel.Type{quantityType, quantityType}, cel.BoolType,
			cel.BinaryBinding(func(l, r ref.Val) ref.Val {
				a, ok1 := q(l)
				b, ok2 := q(r)
				if !ok1 || !ok2 {
					return types.MaybeNoSuchOverloadErr(r)
				}
				return types.Bool(qty.Cmp(a, b) == 1)
			}))),
		cel.Function("isLessThan", cel.MemberOverload("quantity_isLessThan", []*cel.Type{quantityType, quantityType}, cel.BoolType,
			cel.BinaryBinding(func(l, r ref.Val) ref.Val {
				a, ok1 := q(l)
				b, ok2 := q(r)
				if !ok1 || !ok2 {
					return types.MaybeNoSuchOverloadErr(r)
				}
				return types.Bool(qty.Cmp(a, b) == -1)
			}))),
		quantityArithmetic("add", qty.Add, q),
		quantityArithmetic("sub", qty.Sub, q),
		cel.Function("find", cel.MemberOverload("string_find_string", []*cel.Type{cel.StringType, cel.StringType}, cel.StringType,
			cel.BinaryBinding(func(l, r ref.Val) ref.Val {
				s, ok1 := l.(types.String)
				re, ok2 := r.(types.String)
				if !ok1 || !ok2 {
					return types.MaybeNoSuchOverloadErr(r)
				}
				c, err := regexp.Compile(string(re))
				if err != nil {
					return types.WrapErr(err)
				}
				return types.String(c.FindString(string(s)))
			}))),
		cel.Function("findAll",
			cel.MemberOverload("string_find_all_string", []*cel.Type{cel.StringType, cel.StringType}, cel.ListType(cel.StringType),
				cel.BinaryBinding(func(l, r ref.Val) ref.Val {
					return findAll(l, r, -1)
				})),
			cel.MemberOverload("string_find_all_string_int", []*cel.Type{cel.StringType, cel.StringType, cel.IntType}, cel.ListType(cel.StringType),
				cel.FunctionBinding(func(args ...ref.Val) ref.Val {
					n, ok := args[2].(types.Int)
					if !ok || int64(n) > math.MaxInt32 {
						return types.MaybeNoSuchOverloadErr(args[2])
					}
					return findAll(args[0], args[1], int(n))
				}))),
	}})
}

func findAll(l, r ref.Val, n int) ref.Val {
	s, ok1 := l.(types.String)
	re, ok2 := r.(types.String)
	if !ok1 || !ok2 {
		return types.MaybeNoSuchOverloadErr(r)
	}
	c, err := regexp.Compile(string(re))
	if err != nil {
		return types.WrapErr(err)
	}
	return types.DefaultTypeAdapter.NativeToValue(c.FindAllString(string(s), n))
}

// kubernetesLib is a cel.Library of fixed options.
type kubernetesLib struct{ opts []cel.EnvOption }

func (l kubernetesLib) CompileOptions() []cel.EnvOption     { return l.opts }
func (l kubernetesLib) ProgramOptions() []cel.ProgramOption { return nil }

// parseQuantity parses a quantity for an expression within the bounds quota arithmetic
// keeps (|v| <= 2^63-1): a text whose exponent would make parsing or comparing it cost
// seconds ("1e1000000000", from a policy or from a tenant's object) is an evaluation error
// instead, found before it is parsed.
func parseQuantity(s string) (resource.Quantity, error) {
	if err := qty.CheckText(s, nil); err != nil {
		return resource.Quantity{}, fmt.Errorf("quantity %q: %s", truncate(s), err.Detail)
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return q, err
	}
	if err := qty.Check(q, nil); err != nil {
		return resource.Quantity{}, fmt.Errorf("quantity %q: %s", truncate(s), err.Detail)
	}
	return q, nil
}

// truncate shortens a text quoted in an error.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// quantityArithmetic is Kubernetes CEL's Quantity function name (add or sub) with its two
// overloads, quantity op quantity and quantity op int, computed by op within the bound.
func quantityArithmetic(name string, op func(a, b resource.Quantity) resource.Quantity, q func(ref.Val) (resource.Quantity, bool)) cel.EnvOption {
	return cel.Function(name,
		cel.MemberOverload("quantity_"+name, []*cel.Type{quantityType, quantityType}, quantityType,
			cel.BinaryBinding(func(l, r ref.Val) ref.Val {
				a, ok1 := q(l)
				b, ok2 := q(r)
				if !ok1 || !ok2 {
					return types.MaybeNoSuchOverloadErr(r)
				}
				return quantity{op(a, b)}
			})),
		cel.MemberOverload("quantity_"+name+"_int", []*cel.Type{quantityType, cel.IntType}, quantityType,
			cel.BinaryBinding(func(l, r ref.Val) ref.Val {
				a, ok1 := q(l)
				i, ok2 := r.(types.Int)
				if !ok1 || !ok2 {
					return types.MaybeNoSuchOverloadErr(r)
				}
				return quantity{op(a, *resource.NewQuantity(int64(i), resource.DecimalExponent))}
			})))
}
