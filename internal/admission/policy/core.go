package policy

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/auth"
)

// ResourceFor maps a param kind to the resource that serves it and whether that resource
// is namespaced; ok is false for a kind quotad does not serve.
type ResourceFor func(gvk schema.GroupVersionKind) (gvr schema.GroupVersionResource, namespaced, ok bool)

var (
	namespacesGVR = corev1.SchemeGroupVersion.WithResource("namespaces")

	// The resources the policies and their bindings are read from.
	validatingPoliciesGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies")
	validatingBindingsGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicybindings")
	mutatingPoliciesGVR   = admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicies")
	mutatingBindingsGVR   = admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicybindings")
)

// Resources returns the resources the plugins read on every request (the server keeps
// them in watch-fed caches).
func Resources() []schema.GroupVersionResource {
	return []schema.GroupVersionResource{validatingPoliciesGVR, validatingBindingsGVR, mutatingPoliciesGVR, mutatingBindingsGVR}
}

// definition is what both kinds of policy share, compiled.
type definition struct {
	Name             string
	ParamKind        *admissionregistrationv1.ParamKind
	MatchConstraints *admissionregistrationv1.MatchResources
	FailurePolicy    admissionregistrationv1.FailurePolicyType
	Conditions       []program
	ConditionNames   []string
	VarNames         []string
	Vars             []program
}

func compileDefinition(env compiler, name string, pk *admissionregistrationv1.ParamKind, mc *admissionregistrationv1.MatchResources,
	fp *admissionregistrationv1.FailurePolicyType, conds []admissionregistrationv1.MatchCondition, vars []admissionregistrationv1.Variable) definition {
	d := definition{Name: name, ParamKind: pk, MatchConstraints: mc, FailurePolicy: admissionregistrationv1.Fail}
	if fp != nil {
		d.FailurePolicy = *fp
	}
	for _, c := range conds {
		d.ConditionNames = append(d.ConditionNames, c.Name)
		d.Conditions = append(d.Conditions, env.compile(c.Expression, boolType))
	}
	for _, v := range vars {
		d.VarNames = append(d.VarNames, v.Name)
		d.Vars = append(d.Vars, env.compile(v.Expression))
	}
	return d
}

// binding is what both kinds of binding share.
type binding struct {
	Name           string
	PolicyName     string
	ParamRef       *admissionregistrationv1.ParamRef
	MatchResources *admissionregistrationv1.MatchResources
}

// compiledCache keeps one compiled form per policy, rebuilt when the policy's generation
// (or UID) changes; forms of policies no longer listed are dropped.
type compiledCache[T any] struct {
	mu   sync.Mutex
	byID map[string]cached[T]
}

type cached[T any] struct {
	uid        types.UID
	generation int64
	val        T
}

// get returns the compiled form of obj, compiling it with build when needed.
func (c *compiledCache[T]) get(obj metav1.Object, build func() T) T {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		c.byID = map[string]cached[T]{}
	}
	if e, ok := c.byID[obj.GetName()]; ok && e.uid == obj.GetUID() && e.generation == obj.GetGeneration() {
		return e.val
	}
	v := build()
	c.byID[obj.GetName()] = cached[T]{uid: obj.GetUID(), generation: obj.GetGeneration(), val: v}
	return v
}

// prune drops the forms of policies not in names.
func (c *compiledCache[T]) prune(names map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for n := range c.byID {
		if !names[n] {
			delete(c.byID, n)
		}
	}
}

// policyError is upstream's generic.PolicyError: a policy that could not be applied.
type policyError struct {
	Policy, Binding string
	Err             error
	Reason          metav1.StatusReason
}

func (e policyError) Error() string {
	if e.Binding != "" {
		return fmt.Sprintf("policy '%s' with binding '%s' denied request: %s", e.Policy, e.Binding, e.Err.Error())
	}
	return fmt.Sprintf("policy %q denied request: %s", e.Policy, e.Err.Error())
}

// configError is upstream's addConfigError.
func configError(err error, policy, bindingName string) policyError {
	if bindingName == "" {
		return policyError{Policy: policy, Err: fmt.Errorf("failed to configure policy: %w", err)}
	}
	return policyError{Policy: policy, Binding: bindingName, Err: fmt.Errorf("failed to configure binding: %w", err)}
}

// refuse turns the errors of policies failing closed into upstream's refusal: a 403 whose
// message is the first error's, every message a cause.
func refuse(a *admission.Attributes, errs []policyError, failure map[string]admissionregistrationv1.FailurePolicyType) error {
	var kept []policyError
	for _, e := range errs {
		if failure[e.Policy] != admissionregistrationv1.Ignore {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	var status *apierrors.StatusError
	if !errors.As(admission.NewForbidden(a, errors.New("admission request denied by policy")), &status) {
		return apierrors.NewInternalError(errors.New("failed to create status error"))
	}
	status.ErrStatus.Message = kept[0].Error()
	if kept[0].Reason != "" {
		status.ErrStatus.Reason = kept[0].Reason
	}
	for _, e := range kept {
		status.ErrStatus.Details.Causes = append(status.ErrStatus.Details.Causes, metav1.StatusCause{Message: e.Error()})
	}
	return status
}

// invocation is one (policy, binding, param) triple that applies to a request.
type invocation struct {
	Def     *definition
	Binding binding
	Param   any // the param's JSON form; nil without params
}

// request is the state of one admission request shared by the policies judging it.
type request struct {
	ctx     context.Context
	az      auth.Authorizer
	r       admission.Reader
	a       *admission.Attributes
	nsDone  bool
	ns      *corev1.Namespace
	nsErr   error
	reqVal  map[string]any
	objects map[string]any
}

func newRequest(ctx context.Context, r admission.Reader, a *admission.Attributes, az auth.Authorizer) *request {
	return &request{ctx: ctx, r: r, a: a, az: az}
}

// namespaceName is the request's namespace, "" for a request on a namespace itself (whose
// namespace is its own name), as upstream.
func (q *request) namespaceName() string {
	if q.a.Kind.Group == "" && q.a.Kind.Version == "v1" && q.a.Kind.Kind == "Namespace" {
		return ""
	}
	return q.a.Namespace
}

func (q *request) namespace() (*corev1.Namespace, error) {
	if !q.nsDone {
		q.nsDone = true
		if name := q.namespaceName(); name != "" {
			obj, err := q.r.Get(q.ctx, namespacesGVR, "", name)
			if err != nil {
				q.nsErr = err
			} else if ns, ok := obj.(*corev1.Namespace); ok {
				q.ns = ns
			} else {
				q.nsErr = fmt.Errorf("unexpected namespace object %T", obj)
			}
		}
	}
	return q.ns, q.nsErr
}

func (q *request) matchRequest() Request {
	return Request{Attr: q.a, NamespaceLabels: func() (map[string]string, error) {
		ns, err := q.namespace()
		if err != nil || ns == nil {
			return nil, err
		}
		return ns.Labels, nil
	}}
}

// invocations returns the (policy, binding, param) triples that apply to the request
// (upstream's generic policy dispatcher): policies by name whose matchConstraints select
// the request, their bindings by name whose matchResources do, one per param. Policies or
// bindings that cannot be applied are returned as errors.
func (q *request) invocations(defs []*definition, bindings []binding, resourceFor ResourceFor) ([]invocation, []policyError) {
	byPolicy := map[string][]binding{}
	for _, b := range bindings {
		byPolicy[b.PolicyName] = append(byPolicy[b.PolicyName], b)
	}
	var out []invocation
	var errs []policyError
	for _, d := range defs {
		bs := byPolicy[d.Name]
		if len(bs) == 0 {
			continue // a policy without bindings does nothing
		}
		if d.MatchConstraints == nil {
			errs = append(errs, configError(errors.New("policy contained no match constraints, a required field"), d.Name, ""))
			continue
		}
		ok, err := Matches(d.MatchConstraints, q.matchRequest())
		if err != nil {
			errs = append(errs, configError(err, d.Name, ""))
			continue
		}
		if !ok {
			continue
		}
		for _, b := range bs {
			ok, err := Matches(b.MatchResources, q.matchRequest())
			if err != nil {
				errs = append(errs, configError(err, d.Name, b.Name))
				continue
			}
			if !ok {
				continue
			}
			params, err := q.params(d.ParamKind, b.ParamRef, resourceFor)
			if err != nil {
				errs = append(errs, configError(err, d.Name, b.Name))
				continue
			}
			for _, p := range params {
				out = append(out, invocation{Def: d, Binding: b, Param: p})
			}
		}
	}
	return out, errs
}

// params is upstream's CollectParams: the params a binding names, by name or by selector,
// in the request's namespace (or the paramRef's) for a namespaced param kind.
func (q *request) params(pk *admissionregistrationv1.ParamKind, ref *admissionregistrationv1.ParamRef, resourceFor ResourceFor) ([]any, error) {
	if pk == nil || ref == nil {
		return []any{nil}, nil
	}
	gv, err := schema.ParseGroupVersion(pk.APIVersion)
	if err != nil {
		return nil, err
	}
	gvk := gv.WithKind(pk.Kind)
	gvr, namespaced, ok := schema.GroupVersionResource{}, false, false
	if resourceFor != nil {
		gvr, namespaced, ok = resourceFor(gvk)
	}
	if !ok {
		return nil, fmt.Errorf("paramKind kind `%v` not known", pk.String())
	}
	ns := ""
	if namespaced {
		ns = q.a.Namespace
		if ref.Namespace != "" {
			ns = ref.Namespace
		} else if ns == "" {
			return nil, errors.New("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
		}
	} else if ref.Namespace != "" {
		return nil, errors.New("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
	}
	var found []runtime.Object
	switch {
	case ref.Name != "":
		if ref.Selector != nil {
			return nil, errors.New("paramRef.name and paramRef.selector are mutually exclusive")
		}
		obj, err := q.r.Get(q.ctx, gvr, ns, ref.Name)
		switch {
		case err == nil:
			found = []runtime.Object{obj}
		case apierrors.IsNotFound(err):
		default:
			return nil, err
		}
	case ref.Selector != nil:
		sel, err := metav1.LabelSelectorAsSelector(ref.Selector)
		if err != nil {
			return nil, err
		}
		objs, err := q.r.List(q.ctx, gvr, ns)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if sel.Matches(labels.Set(labelsOf(o))) {
				found = append(found, o)
			}
		}
		sort.Slice(found, func(i, j int) bool { return nameOf(found[i]) < nameOf(found[j]) })
	default:
		return nil, errors.New("one of name or selector must be provided")
	}
	if len(found) == 0 && ref.ParameterNotFoundAction != nil && *ref.ParameterNotFoundAction == admissionregistrationv1.DenyAction {
		return nil, errors.New("no params found for policy binding with `Deny` parameterNotFoundAction")
	}
	out := make([]any, 0, len(found))
	for _, o := range found {
		m, err := toJSONMap(o, gvk)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func nameOf(o runtime.Object) string {
	m, err := meta.Accessor(o)
	if err != nil {
		return ""
	}
	return m.GetNamespace() + "/" + m.GetName()
}

// toJSONMap is obj's JSON form with apiVersion and kind set from gvk when obj lacks them.
func toJSONMap(obj runtime.Object, gvk schema.GroupVersionKind) (map[string]any, error) {
	if obj == nil {
		return nil, nil
	}
	var m map[string]any
	if u, ok := obj.(*unstructured.Unstructured); ok {
		m = u.Object
		if u.GetAPIVersion() != "" && u.GetKind() != "" {
			return m, nil
		}
		m = runtime.DeepCopyJSON(m)
	} else {
		var err error
		m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, err
		}
	}
	if s, _ := m["apiVersion"].(string); s == "" {
		m["apiVersion"] = gvk.GroupVersion().String()
	}
	if s, _ := m["kind"].(string); s == "" {
		m["kind"] = gvk.Kind
	}
	return m, nil
}

// object returns the JSON form of the request's new ("object") or old ("oldObject")
// object, nil when there is none; converted once per request.
func (q *request) object(name string) (any, error) {
	if q.objects == nil {
		q.objects = map[string]any{}
	}
	if v, ok := q.objects[name]; ok {
		return v, nil
	}
	obj := q.a.Object
	if name == varOldObject {
		obj = q.a.OldObject
	}
	var v any
	if obj != nil {
		m, err := toJSONMap(obj, q.a.Kind)
		if err != nil {
			return nil, err
		}
		v = m
	}
	q.objects[name] = v
	return v, nil
}

// forget drops the converted new object (a mutation changed it).
func (q *request) forget() { delete(q.objects, varObject) }

// requestValue is upstream's AdmissionRequest as CEL sees it.
func (q *request) requestValue() map[string]any {
	if q.reqVal != nil {
		return q.reqVal
	}
	a := q.a
	gvk := map[string]any{"group": a.Kind.Group, "version": a.Kind.Version, "kind": a.Kind.Kind}
	gvr := map[string]any{"group": a.Resource.Group, "version": a.Resource.Version, "resource": a.Resource.Resource}
	ui := authnv1.UserInfo{Username: a.User.Name, UID: a.User.UID, Groups: a.User.Groups}
	if len(a.User.Extra) > 0 {
		ui.Extra = map[string]authnv1.ExtraValue{}
		for k, v := range a.User.Extra {
			ui.Extra[k] = v
		}
	}
	user, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(&ui)
	var options map[string]any
	var dryRun []string
	if a.DryRun {
		dryRun = []string{metav1.DryRunAll}
	}
	switch a.Operation {
	case admission.Create:
		options, _ = runtime.DefaultUnstructuredConverter.ToUnstructured(&metav1.CreateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "CreateOptions"}, DryRun: dryRun})
	case admission.Update:
		options, _ = runtime.DefaultUnstructuredConverter.ToUnstructured(&metav1.UpdateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "UpdateOptions"}, DryRun: dryRun})
	case admission.Delete:
		options, _ = runtime.DefaultUnstructuredConverter.ToUnstructured(&metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "DeleteOptions"}, DryRun: dryRun})
	}
	q.reqVal = map[string]any{
		"kind": gvk, "resource": gvr, "subResource": a.Subresource,
		"requestKind": gvk, "requestResource": gvr, "requestSubResource": a.Subresource,
		"name": a.Name, "namespace": a.Namespace, "operation": string(a.Operation),
		"userInfo": user, "dryRun": a.DryRun, "options": options,
	}
	return q.reqVal
}

// namespaceValue is upstream's CreateNamespaceObject: the namespace's metadata (without
// managed fields and owners), spec and status.
func (q *request) namespaceValue() (any, error) {
	ns, err := q.namespace()
	if err != nil || ns == nil {
		return nil, err
	}
	v := &corev1.Namespace{
		Spec: ns.Spec, Status: ns.Status,
		ObjectMeta: metav1.ObjectMeta{
			Name: ns.Name, GenerateName: ns.GenerateName, Namespace: ns.Namespace, Labels: ns.Labels, Annotations: ns.Annotations,
			UID: ns.UID, CreationTimestamp: ns.CreationTimestamp, DeletionTimestamp: ns.DeletionTimestamp,
			DeletionGracePeriodSeconds: ns.DeletionGracePeriodSeconds,
		},
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(v)
}

// activation returns the input of one invocation's expressions, with a fresh budget.
func (q *request) activation(inv invocation) (*activation, error) {
	obj, err := q.object(varObject)
	if err != nil {
		return nil, err
	}
	old, err := q.object(varOldObject)
	if err != nil {
		return nil, err
	}
	ns, err := q.namespaceValue()
	if err != nil {
		return nil, err
	}
	a := q.a
	authorizer, requestResource := newAuthorizerVals(q.az, a.User, attributesResource{
		group: a.Resource.Group, resource: a.Resource.Resource, subresource: a.Subresource, namespace: a.Namespace, name: a.Name})
	act := &activation{
		ctx: q.ctx,
		values: map[string]any{
			varObject: obj, varOldObject: old, varRequest: q.requestValue(), varParams: inv.Param, varNamespaceObject: ns,
			varAuthorizer: authorizer, varRequestResource: requestResource,
		},
		budget: &budget{left: RuntimeCELCostBudget},
	}
	if len(inv.Def.Vars) > 0 {
		act.vars = newLazyVariables(act, inv.Def.VarNames, inv.Def.Vars)
	}
	return act, nil
}

// matchConditions evaluates a definition's matchConditions as upstream's matcher: false
// when one is false; an error (the errors aggregated) when some failed and none was false.
// The caller applies the failure policy to the error.
func matchConditions(act *activation, d *definition) (bool, error) {
	var errs []error
	for _, p := range d.Conditions {
		r, err := act.eval(p)
		if err != nil {
			return false, err
		}
		if r.Err != nil {
			errs = append(errs, r.Err)
			continue
		}
		if b, ok := r.Val.Value().(bool); ok && !b {
			return false, nil
		}
	}
	if len(errs) > 0 {
		return false, utilerrors.NewAggregate(errs)
	}
	return true, nil
}
