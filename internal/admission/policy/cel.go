package policy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/ext"
	"github.com/google/cel-go/interpreter"
)

// Cost limits, upstream's k8s.io/apiserver/pkg/apis/cel values: one expression may spend
// PerCallLimit, all the expressions of one policy evaluation RuntimeCELCostBudget.
const (
	PerCallLimit         = 1000000
	RuntimeCELCostBudget = 10000000
	// checkFrequency is how many comprehension iterations run between checks of the
	// request context (a deadline or a cancelled request stops evaluation).
	checkFrequency = 100
)

// The variables every policy expression may name.
const (
	varObject          = "object"
	varOldObject       = "oldObject"
	varRequest         = "request"
	varParams          = "params"
	varNamespaceObject = "namespaceObject"
	varVariables       = "variables"
)

// errOutOfBudget is the error that stops a policy's evaluation: its expressions together
// spent more than RuntimeCELCostBudget.
var errOutOfBudget = errors.New("validation failed due to running out of cost budget, no further validation rules will be run")

// newEnv returns the CEL environment of policy expressions: the variables above, all
// dynamically typed (objects are their JSON form as maps and lists), cel-go's standard
// extension libraries, Kubernetes' quantity and regex functions and, for mutating policies,
// the Object and JSONPatch types their mutations build.
func newEnv(mutating bool) (*cel.Env, error) {
	opts := append(baseEnvOptions(), cel.Variable(varObject, cel.DynType), cel.Variable(varOldObject, cel.DynType))
	if mutating {
		p := newMutationProvider()
		opts = append([]cel.EnvOption{cel.CustomTypeAdapter(p), cel.CustomTypeProvider(p)}, opts...)
		opts = append(opts, jsonPatchLibrary())
	}
	return cel.NewEnv(opts...)
}

// baseEnvOptions are the environment's options but for the object and oldObject
// variables (typed for type checking, dynamic to run).
func baseEnvOptions() []cel.EnvOption {
	opts := []cel.EnvOption{
		cel.Variable(varRequest, cel.DynType),
		cel.Variable(varParams, cel.DynType),
		cel.Variable(varNamespaceObject, cel.DynType),
		cel.Variable(varVariables, cel.DynType),
		cel.DefaultUTCTimeZone(true),
		cel.OptionalTypes(),
		cel.CrossTypeNumericComparisons(true),
		ext.Strings(ext.StringsVersion(2)),
		ext.Lists(ext.ListsVersion(3)),
		ext.Sets(),
		ext.Math(),
		ext.Encoders(),
		ext.TwoVarComprehensions(),
		kubernetesLibrary(),
	}
	return append(opts, authzLibrary()...)
}

// program is one compiled expression: Err is upstream's compilation error text when it does
// not compile.
type program struct {
	Expr string
	prg  cel.Program
	Err  error
}

// compile compiles expr, checking that it evaluates to one of want (any type when want is
// empty), with upstream's error texts ("compilation failed: ...", "must evaluate to bool
// but got string").
func compile(env *cel.Env, expr string, want ...*cel.Type) program {
	p := program{Expr: expr}
	ast, issues := env.Compile(expr)
	if issues != nil && issues.Err() != nil {
		p.Err = fmt.Errorf("compilation failed: %s", issues.String())
		return p
	}
	if len(want) > 0 {
		found := false
		for _, t := range want {
			if ast.OutputType().IsExactType(t) || ast.OutputType().IsExactType(cel.DynType) {
				found = true
				break
			}
		}
		if !found {
			if len(want) == 1 {
				p.Err = fmt.Errorf("must evaluate to %v but got %v", want[0].String(), ast.OutputType().String())
			} else {
				p.Err = fmt.Errorf("must evaluate to one of %v but got %v", want, ast.OutputType().String())
			}
			return p
		}
	}
	prg, err := env.Program(ast,
		cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost),
		cel.CostLimit(PerCallLimit),
		cel.InterruptCheckFrequency(checkFrequency),
	)
	if err != nil {
		p.Err = fmt.Errorf("program instantiation failed: %w", err)
		return p
	}
	p.prg = prg
	return p
}

// budget is what is left of one evaluation's RuntimeCELCostBudget.
type budget struct{ left int64 }

// spend takes cost from the budget; false when the budget ran out.
func (b *budget) spend(cost *uint64) bool {
	if cost == nil || *cost > math.MaxInt64 || int64(*cost) > b.left {
		b.left = -1
		return false
	}
	b.left -= int64(*cost)
	return true
}

// activation is the input of one policy evaluation: the variables' values, the policy's
// composited variables (evaluated lazily, each at most once) and the shared budget.
type activation struct {
	ctx    context.Context
	values map[string]any
	vars   *lazyVariables
	budget *budget
}

var _ interpreter.Activation = (*activation)(nil)

// ResolveName returns a variable's value.
func (a *activation) ResolveName(name string) (any, bool) {
	if name == varVariables {
		if a.vars == nil {
			return types.NewStringInterfaceMap(types.DefaultTypeAdapter, map[string]any{}), true
		}
		return a.vars, true
	}
	v, ok := a.values[name]
	if !ok {
		return nil, false
	}
	if v == nil {
		return types.NullValue, true
	}
	return v, true
}

// Parent returns nil: an activation has no parent.
func (a *activation) Parent() interpreter.Activation { return nil }

// evalResult is one expression's outcome: its value, or Err with upstream's text.
type evalResult struct {
	Val ref.Val
	Err error
	// raw is CEL's own error, without the expression (what a variable's failure passes on).
	raw error
}

// eval evaluates p. It returns errOutOfBudget (the evaluation must stop) when the budget
// ran out; any other failure is in the result, with upstream's texts ("compilation error:
// ...", "expression 'X' resulted in error: ...").
func (a *activation) eval(p program) (evalResult, error) {
	if p.Err != nil {
		return evalResult{Err: fmt.Errorf("compilation error: %w", p.Err)}, nil
	}
	val, details, err := p.prg.ContextEval(a.ctx, a)
	if details == nil || !a.budget.spend(details.ActualCost()) {
		return evalResult{}, errOutOfBudget
	}
	if a.budget.left < 0 {
		return evalResult{}, errOutOfBudget // lazily evaluated variables spent it
	}
	if err != nil {
		return evalResult{Err: fmt.Errorf("expression '%v' resulted in error: %v", p.Expr, err), raw: err}, nil
	}
	return evalResult{Val: val}, nil
}

// lazyVariables is the `variables` map: each variable is evaluated when first read, its
// cost taken from the evaluation's budget.
type lazyVariables struct {
	act   *activation
	names []string
	progs map[string]program
	vals  map[string]ref.Val
}

var (
	_ ref.Val       = (*lazyVariables)(nil)
	_ traits.Mapper = (*lazyVariables)(nil)
)

func newLazyVariables(act *activation, names []string, progs []program) *lazyVariables {
	l := &lazyVariables{act: act, progs: map[string]program{}, vals: map[string]ref.Val{}}
	for i, n := range names {
		if _, dup := l.progs[n]; !dup {
			l.names = append(l.names, n)
		}
		l.progs[n] = progs[i]
	}
	return l
}

func (l *lazyVariables) value(name string) (ref.Val, bool) {
	if v, ok := l.vals[name]; ok {
		return v, true
	}
	p, ok := l.progs[name]
	if !ok {
		return nil, false
	}
	var v ref.Val
	r, err := l.act.eval(p)
	switch {
	case err != nil:
		v = types.WrapErr(err)
	case r.raw != nil:
		v = types.WrapErr(r.raw)
	case r.Err != nil:
		v = types.WrapErr(r.Err)
	default:
		v = r.Val
	}
	l.vals[name] = v
	return v, true
}

func (l *lazyVariables) all() traits.Mapper {
	m := map[string]any{}
	for _, n := range l.names {
		v, _ := l.value(n)
		m[n] = v
	}
	return types.NewStringInterfaceMap(types.DefaultTypeAdapter, m)
}

// Find returns a variable's value, evaluating it on first use.
func (l *lazyVariables) Find(key ref.Val) (ref.Val, bool) {
	name, ok := key.(types.String)
	if !ok {
		return nil, false
	}
	return l.value(string(name))
}

// Get is Find with CEL's error for a missing key.
func (l *lazyVariables) Get(key ref.Val) ref.Val {
	if v, ok := l.Find(key); ok {
		return v
	}
	return types.NewErr("no such key: %v", key)
}

// Contains reports whether a variable of that name exists.
func (l *lazyVariables) Contains(key ref.Val) ref.Val {
	name, ok := key.(types.String)
	if !ok {
		return types.False
	}
	_, found := l.progs[string(name)]
	return types.Bool(found)
}

// Iterator iterates over the variables' names.
func (l *lazyVariables) Iterator() traits.Iterator { return l.all().Iterator() }

// Size is the number of variables.
func (l *lazyVariables) Size() ref.Val { return types.Int(len(l.names)) }

// ConvertToNative converts the evaluated variables.
func (l *lazyVariables) ConvertToNative(t reflect.Type) (any, error) {
	return l.all().ConvertToNative(t)
}

// ConvertToType converts the evaluated variables.
func (l *lazyVariables) ConvertToType(t ref.Type) ref.Val { return l.all().ConvertToType(t) }

// Equal compares the evaluated variables.
func (l *lazyVariables) Equal(o ref.Val) ref.Val { return l.all().Equal(o) }

// Type is map.
func (l *lazyVariables) Type() ref.Type { return types.MapType }

// Value returns the evaluated variables.
func (l *lazyVariables) Value() any { return l.all().Value() }

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// compiler compiles expressions in one environment.
type compiler struct{ env *cel.Env }

func (c compiler) compile(expr string, want ...*cel.Type) program {
	return compile(c.env, expr, want...)
}

var (
	boolType   = cel.BoolType
	stringType = cel.StringType
	nullType   = cel.NullType
)
