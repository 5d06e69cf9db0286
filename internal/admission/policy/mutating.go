package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/jsonpatch"
)

// Mutating is the MutatingAdmissionPolicy admission plugin.
type Mutating struct {
	// Authorizer answers the checks of the `authorizer` variable (RBAC in quotad); nil
	// answers no opinion to every check.
	Authorizer auth.Authorizer

	r             admission.Reader
	resourceFor   ResourceFor
	env           compiler
	cache         compiledCache[*mutatingPolicy]
	typeConverter func() (managedfields.TypeConverter, error)
	defaulter     func(runtime.Object)
}

var (
	_ admission.Handler = (*Mutating)(nil)
	_ admission.Mutator = (*Mutating)(nil)
)

// NewMutating returns the plugin reading policies, bindings, namespaces and params through
// r. typeConverter gives the structured-merge-diff schemas apply configurations merge by;
// defaulter applies the registry's defaults to a mutated object, as upstream defaults it.
func NewMutating(r admission.Reader, resourceFor ResourceFor, typeConverter func() (managedfields.TypeConverter, error), defaulter func(runtime.Object)) (*Mutating, error) {
	env, err := newEnv(true)
	if err != nil {
		return nil, err
	}
	return &Mutating{r: r, resourceFor: resourceFor, env: compiler{env}, typeConverter: typeConverter, defaulter: defaulter}, nil
}

// Name returns "MutatingAdmissionPolicy".
func (p *Mutating) Name() string { return admission.MutatingAdmissionPolicy }

// Handles reports true for create and update (a delete has no object to mutate).
func (p *Mutating) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

var (
	applyConfigurationType = cel.ObjectType(objectTypeName)
	jsonPatchListType      = cel.ListType(cel.ObjectType(jsonPatchTypeName))
)

type mutation struct {
	patchType admissionregistrationv1.PatchType
	expr      program
}

// mutatingPolicy is a MutatingAdmissionPolicy compiled.
type mutatingPolicy struct {
	def       definition
	mutations []mutation
}

func (p *Mutating) compile(mp *admissionregistrationv1.MutatingAdmissionPolicy) *mutatingPolicy {
	s := mp.Spec
	out := &mutatingPolicy{def: compileDefinition(p.env, mp.Name, s.ParamKind, s.MatchConstraints, s.FailurePolicy, s.MatchConditions, s.Variables)}
	for _, m := range s.Mutations {
		c := mutation{patchType: m.PatchType}
		switch {
		case m.PatchType == admissionregistrationv1.PatchTypeApplyConfiguration && m.ApplyConfiguration != nil:
			c.expr = p.env.compile(m.ApplyConfiguration.Expression, applyConfigurationType)
		case m.PatchType == admissionregistrationv1.PatchTypeJSONPatch && m.JSONPatch != nil:
			c.expr = p.env.compile(m.JSONPatch.Expression, jsonPatchListType)
		default:
			c.expr = program{Err: fmt.Errorf("unsupported patch type %q", m.PatchType)}
		}
		out.mutations = append(out.mutations, c)
	}
	return out
}

// Admit applies every MutatingAdmissionPolicy bound to the request, policies by name,
// their mutations in order, each seeing the object the previous ones left. Policies are
// invoked once (reinvocationPolicy IfNeeded is not honoured: quotad's built-in mutating
// plugins run before the policies and do not run again).
func (p *Mutating) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.Object == nil {
		return nil
	}
	// 1. The bindings and policies, from the watch-fed caches.
	bindingObjs, err := p.r.List(ctx, mutatingBindingsGVR, "")
	if err != nil || len(bindingObjs) == 0 {
		return err
	}
	policyObjs, err := p.r.List(ctx, mutatingPoliciesGVR, "")
	if err != nil {
		return err
	}
	var bindings []binding
	for _, o := range bindingObjs {
		if b, ok := o.(*admissionregistrationv1.MutatingAdmissionPolicyBinding); ok {
			bindings = append(bindings, binding{Name: b.Name, PolicyName: b.Spec.PolicyName, ParamRef: b.Spec.ParamRef, MatchResources: b.Spec.MatchResources})
		}
	}
	sort.Slice(bindings, func(i, j int) bool { return bindings[i].Name < bindings[j].Name })
	compiled := map[*definition]*mutatingPolicy{}
	var defs []*definition
	names := map[string]bool{}
	failurePolicies := map[string]admissionregistrationv1.FailurePolicyType{}
	for _, o := range policyObjs {
		mp, ok := o.(*admissionregistrationv1.MutatingAdmissionPolicy)
		if !ok {
			continue
		}
		c := p.cache.get(mp, func() *mutatingPolicy { return p.compile(mp) })
		compiled[&c.def] = c
		defs = append(defs, &c.def)
		names[mp.Name] = true
		failurePolicies[mp.Name] = c.def.FailurePolicy
	}
	p.cache.prune(names)
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })

	// 2. What applies to this request.
	q := newRequest(ctx, p.r, a, p.Authorizer)
	invs, errs := q.invocations(defs, bindings, p.resourceFor)
	if len(invs) > 0 {
		if _, err := q.namespace(); err != nil {
			return err
		}
	}

	// 3. Each invocation's mutations, in order.
	for _, inv := range invs {
		mp := compiled[inv.Def]
		fail := func(err error) {
			errs = append(errs, policyError{Policy: inv.Def.Name, Binding: inv.Binding.Name, Err: err, Reason: metav1.StatusReasonInvalid})
		}
		act, err := q.activation(inv)
		if err != nil {
			fail(err)
			continue
		}
		if len(inv.Def.Conditions) > 0 {
			ok, err := matchConditions(act, inv.Def)
			if err != nil {
				fail(err)
				continue
			}
			if !ok {
				continue
			}
		}
		for _, m := range mp.mutations {
			if err := p.mutate(q, inv, m); err != nil {
				fail(err)
			}
		}
	}
	return refuse(a, errs, failurePolicies)
}

// mutate evaluates one mutation and applies its patch to the request's object.
func (p *Mutating) mutate(q *request, inv invocation, m mutation) error {
	if m.expr.Err != nil {
		return m.expr.Err
	}
	// Each mutation sees the object as the previous ones left it.
	act, err := q.activation(inv)
	if err != nil {
		return err
	}
	r, err := act.eval(m.expr)
	if err != nil {
		return err
	}
	if r.Err != nil {
		return r.Err
	}
	cur, err := q.object(varObject)
	if err != nil {
		return err
	}
	curMap, _ := cur.(map[string]any)
	var patched map[string]any
	switch m.patchType {
	case admissionregistrationv1.PatchTypeApplyConfiguration:
		patched, err = p.applyConfiguration(q.a, curMap, r.Val)
	default:
		patched, err = applyJSONPatch(q.ctx, curMap, r.Val)
	}
	if err != nil {
		return err
	}
	if err := p.replace(q.a, patched); err != nil {
		return err
	}
	q.forget()
	return nil
}

// applyConfiguration merges an Object built by the expression into the object with
// structured-merge-diff's apply semantics (upstream's ApplyStructuredMergeDiff).
func (p *Mutating) applyConfiguration(a *admission.Attributes, cur map[string]any, v ref.Val) (map[string]any, error) {
	obj, ok := v.(*objectVal)
	if !ok {
		return nil, fmt.Errorf("unsupported return type from ApplyConfiguration expression: %v", v.Type())
	}
	if errs := checkTypeNames(obj, []string{objectTypeName}); len(errs) > 0 {
		return nil, fmt.Errorf("type mismatch: %w", errors.Join(errs...))
	}
	native, err := toNative(obj)
	if err != nil {
		return nil, err
	}
	patch := &unstructured.Unstructured{Object: native.(map[string]any)}
	patch.SetGroupVersionKind(a.Kind)
	live := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(cur)}
	live.SetGroupVersionKind(a.Kind)
	if p.typeConverter == nil {
		return nil, errors.New("error applying patch: type converter must not be nil")
	}
	tc, err := p.typeConverter()
	if err != nil {
		return nil, fmt.Errorf("error applying patch: %w", err)
	}
	patchTyped, err := tc.ObjectToTyped(patch)
	if err != nil {
		return nil, fmt.Errorf("error applying patch: failed to convert patch object to typed object: %w", err)
	}
	if atomics := findAtomics(nil, patchTyped.Schema(), patchTyped.TypeRef(), patchTyped.AsValue()); len(atomics) > 0 {
		return nil, fmt.Errorf("error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: %v", strings.Join(atomics, ", "))
	}
	liveTyped, err := tc.ObjectToTyped(live, typed.AllowDuplicates)
	if err != nil {
		return nil, fmt.Errorf("error applying patch: failed to convert original object to typed object: %w", err)
	}
	merged, err := liveTyped.Merge(patchTyped)
	if err != nil {
		return nil, fmt.Errorf("error applying patch: failed to merge patch: %w", err)
	}
	out, err := tc.TypedToObject(merged)
	if err != nil {
		return nil, fmt.Errorf("error applying patch: failed to convert typed object to object: %w", err)
	}
	u, ok := out.(*unstructured.Unstructured)
	if !ok {
		return runtime.DefaultUnstructuredConverter.ToUnstructured(out)
	}
	return u.Object, nil
}

// findAtomics lists the paths of atomic lists, maps and structs an apply configuration
// sets: a policy may not replace them (upstream's validatePatch).
func findAtomics(path []fieldpath.PathElement, s *smdschema.Schema, tr smdschema.TypeRef, v value.Value) []string {
	var atomics []string
	a, ok := s.Resolve(tr)
	if !ok {
		return nil
	}
	if v.IsMap() && a.Map != nil {
		if a.Map.ElementRelationship == smdschema.Atomic {
			atomics = append(atomics, pathString(path))
		}
		v.AsMap().Iterate(func(key string, val value.Value) bool {
			k := key
			pe := fieldpath.PathElement{FieldName: &k}
			if sf, ok := a.Map.FindField(key); ok {
				atomics = append(atomics, findAtomics(append(append([]fieldpath.PathElement(nil), path...), pe), s, sf.Type, val)...)
			}
			return true
		})
	}
	if v.IsList() && a.List != nil {
		if a.List.ElementRelationship == smdschema.Atomic {
			atomics = append(atomics, pathString(path))
		}
		list := v.AsList()
		for i := 0; i < list.Length(); i++ {
			idx := i
			pe := fieldpath.PathElement{Index: &idx}
			atomics = append(atomics, findAtomics(append(append([]fieldpath.PathElement(nil), path...), pe), s, a.List.ElementType, list.At(i))...)
		}
	}
	return atomics
}

func pathString(path []fieldpath.PathElement) string {
	var sb strings.Builder
	for _, p := range path {
		sb.WriteString(p.String())
	}
	return sb.String()
}

// applyJSONPatch applies the JSONPatch operations the expression returned (upstream's
// jsonPatcher): a failed "test" operation leaves the object as it was.
func applyJSONPatch(ctx context.Context, cur map[string]any, v ref.Val) (map[string]any, error) {
	list, ok := v.(traits.Lister)
	if !ok {
		return nil, errors.New("type mismatch: JSONPatchType.expression should evaluate to array")
	}
	var ops []map[string]any
	it := list.Iterator()
	for it.HasNext() == types.True {
		item := it.Next() // a list's iterator yields its elements
		if e, ok := item.(*types.Err); ok {
			return nil, e
		}
		op, ok := item.(*jsonPatchVal)
		if !ok {
			return nil, fmt.Errorf("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch, got element of %v", item.Type())
		}
		o := map[string]any{"op": op.Op, "path": op.Path}
		if op.From != "" {
			o["from"] = op.From
		}
		if op.Val != nil {
			if obj, ok := op.Val.(*objectVal); ok {
				if errs := checkTypeNames(obj, []string{obj.typeName}); len(errs) > 0 {
					return nil, fmt.Errorf("type mismatch: %w", errors.Join(errs...))
				}
			}
			n, err := toNative(op.Val)
			if err != nil {
				return nil, fmt.Errorf("JSONPath valueExpression evaluated to a type that could not marshal to JSON: %w", err)
			}
			o["value"] = n
		}
		ops = append(ops, o)
	}
	patchJSON, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("JSONPath valueExpression evaluated to a type that could not marshal to JSON: %w", err)
	}
	patch, err := jsonpatch.Decode(patchJSON)
	if err != nil {
		return nil, fmt.Errorf("JSON Patch: %w", err)
	}
	objJSON, err := json.Marshal(cur)
	if err != nil {
		return nil, fmt.Errorf("failed to create JSON patch: %w", err)
	}
	patched, err := patch.Apply(ctx, objJSON, jsonpatch.DefaultLimits)
	if errors.Is(err, jsonpatch.ErrTestFailed) {
		return cur, nil
	}
	if err != nil {
		return nil, fmt.Errorf("JSON Patch: %w", err)
	}
	out := map[string]any{}
	if err := utiljson.Unmarshal(patched, &out); err != nil {
		return nil, fmt.Errorf("JSON Patch: %w", err)
	}
	return out, nil
}

// replace makes obj the request's object: a new object of the request's type (the stored
// and cached objects are never changed), defaulted as the registry defaults, kept at the
// request object's address so the registry sees it.
func (p *Mutating) replace(a *admission.Attributes, obj map[string]any) error {
	if u, ok := a.Object.(*unstructured.Unstructured); ok {
		u.Object = obj
		return nil
	}
	rv := reflect.ValueOf(a.Object)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("cannot mutate an object of type %T", a.Object)
	}
	gvk := a.Object.GetObjectKind().GroupVersionKind()
	fresh := reflect.New(rv.Elem().Type())
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, fresh.Interface()); err != nil {
		return fmt.Errorf("failed to convert object: %w", err)
	}
	rv.Elem().Set(fresh.Elem())
	a.Object.GetObjectKind().SetGroupVersionKind(gvk)
	if p.defaulter != nil {
		p.defaulter(a.Object)
	}
	return nil
}
