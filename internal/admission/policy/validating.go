package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/audit"
	"github.com/quotad/quotad/internal/auth"
)

// maxMessageBytes is upstream's MaxEvaluatedMessageExpressionSizeBytes; a longer
// messageExpression result is not used.
const maxMessageBytes = 5 * 1024

// maxAuditAnnotationValueLength bounds an audit annotation's value, as upstream.
const maxAuditAnnotationValueLength = 10 * 1024

// maxValidationFailures bounds the validation_failure audit annotation, as upstream.
const maxValidationFailures = 50

// ValidationFailureKey is the audit annotation of the failed validations of bindings
// with the Audit action.
const ValidationFailureKey = "validation.policy.admission.k8s.io/validation_failure"

// Validating is the ValidatingAdmissionPolicy admission plugin.
type Validating struct {
	// Authorizer answers the checks of the `authorizer` variable (RBAC in quotad); nil
	// answers no opinion to every check.
	Authorizer auth.Authorizer

	r           admission.Reader
	resourceFor ResourceFor
	env         compiler
	cache       compiledCache[*validatingPolicy]
}

var (
	_ admission.Handler   = (*Validating)(nil)
	_ admission.Validator = (*Validating)(nil)
)

// NewValidating returns the plugin reading policies, bindings, namespaces and params
// through r; resourceFor maps param kinds to resources.
func NewValidating(r admission.Reader, resourceFor ResourceFor) (*Validating, error) {
	env, err := newEnv(false)
	if err != nil {
		return nil, err
	}
	return &Validating{r: r, resourceFor: resourceFor, env: compiler{env}}, nil
}

// Name returns "ValidatingAdmissionPolicy".
func (p *Validating) Name() string { return admission.ValidatingAdmissionPolicy }

// Handles reports true for every operation, as upstream.
func (p *Validating) Handles(admission.Operation) bool { return true }

type validation struct {
	Expr       program
	MsgExpr    *program
	Message    string
	Reason     *metav1.StatusReason
	Expression string
}

type auditAnnotation struct {
	Key   string
	Value program
	Expr  string
}

// validatingPolicy is a ValidatingAdmissionPolicy compiled.
type validatingPolicy struct {
	def         definition
	validations []validation
	annotations []auditAnnotation
}

func (p *Validating) compile(vap *admissionregistrationv1.ValidatingAdmissionPolicy) *validatingPolicy {
	s := vap.Spec
	out := &validatingPolicy{def: compileDefinition(p.env, vap.Name, s.ParamKind, s.MatchConstraints, s.FailurePolicy, s.MatchConditions, s.Variables)}
	for _, v := range s.Validations {
		c := validation{Expr: p.env.compile(v.Expression, boolType), Message: v.Message, Reason: v.Reason, Expression: v.Expression}
		if v.MessageExpression != "" {
			m := p.env.compile(v.MessageExpression, stringType)
			c.MsgExpr = &m
		}
		out.validations = append(out.validations, c)
	}
	for _, a := range s.AuditAnnotations {
		out.annotations = append(out.annotations, auditAnnotation{Key: a.Key, Value: p.env.compile(a.ValueExpression, stringType, nullType), Expr: a.ValueExpression})
	}
	return out
}

// TypeCheck type checks a policy's validation expressions and messageExpressions for
// upstream's status.typeChecking: object and oldObject typed by the published schema of each
// kind the policy's rules select (kinds, resolved by the caller), one warning per expression
// with findings, in upstream's form ("apps/v1, Kind=Deployment: ERROR: <input>:1:22: found
// no matching overload for '_>_' applied to '(int, string)'"). As upstream, a policy
// selecting no resolvable kind gets no warnings, and the result never changes what the
// policy does.
func (p *Validating) TypeCheck(vap *admissionregistrationv1.ValidatingAdmissionPolicy, kinds []KindSchema) *admissionregistrationv1.TypeChecking {
	tc := &admissionregistrationv1.TypeChecking{}
	var envs []*cel.Env
	var gvks []schema.GroupVersionKind
	for _, k := range kinds {
		env, err := newTypeCheckEnv(k)
		if err != nil {
			continue
		}
		envs = append(envs, env)
		gvks = append(gvks, k.GVK)
	}
	check := func(fieldRef, expr string) {
		var msgs []string
		for i, env := range envs {
			if issues := issuesOf(env, expr); issues != "" {
				msgs = append(msgs, fmt.Sprintf("%v: %s\n", gvks[i], issues))
			}
		}
		if len(msgs) > 0 {
			tc.ExpressionWarnings = append(tc.ExpressionWarnings, admissionregistrationv1.ExpressionWarning{FieldRef: fieldRef, Warning: strings.Join(msgs, "\n")})
		}
	}
	for i, v := range vap.Spec.Validations {
		check(fmt.Sprintf("spec.validations[%d].expression", i), v.Expression)
		if v.MessageExpression != "" {
			check(fmt.Sprintf("spec.validations[%d].messageExpression", i), v.MessageExpression)
		}
	}
	return tc
}

// KindsToCheck returns the group-version-resources a policy's rules name exactly (no
// wildcard, no subresource), sorted: what upstream type checks against.
func KindsToCheck(vap *admissionregistrationv1.ValidatingAdmissionPolicy) []schema.GroupVersionResource {
	var out []schema.GroupVersionResource
	seen := map[schema.GroupVersionResource]bool{}
	if vap.Spec.MatchConstraints == nil {
		return nil
	}
	exact := func(list []string) []string {
		var r []string
		for _, x := range list {
			if !strings.Contains(x, "*") && !strings.Contains(x, "/") {
				r = append(r, x)
			}
		}
		sort.Strings(r)
		return r
	}
	for _, rule := range vap.Spec.MatchConstraints.ResourceRules {
		for _, g := range exact(rule.APIGroups) {
			for _, v := range exact(rule.APIVersions) {
				for _, r := range exact(rule.Resources) {
					gvr := schema.GroupVersionResource{Group: g, Version: v, Resource: r}
					if !seen[gvr] {
						seen[gvr] = true
						out = append(out, gvr)
					}
				}
			}
		}
	}
	return out
}

// decision is the outcome of one validation (or of a whole invocation that failed).
type decision struct {
	Deny    bool
	Message string
	Reason  metav1.StatusReason
	Index   int
}

// failure is the decision for an error: deny unless the policy ignores failures.
func failure(d *definition, msg string) decision {
	return decision{Deny: d.FailurePolicy != admissionregistrationv1.Ignore, Message: msg}
}

type annotationResult struct {
	key, value string
	errMsg     string
}

// evaluate runs one invocation's validations (upstream's validator.Validate).
func (vp *validatingPolicy) evaluate(q *request, inv invocation) ([]decision, []annotationResult) {
	d := &vp.def
	act, err := q.activation(inv)
	if err != nil {
		return []decision{failure(d, err.Error())}, nil
	}
	// 1. matchConditions: all must be true.
	if len(d.Conditions) > 0 {
		ok, err := matchConditions(act, d)
		if err != nil {
			return []decision{failure(d, err.Error())}, nil
		}
		if !ok {
			return nil, nil
		}
	}
	// 2. Validations.
	results := make([]evalResult, len(vp.validations))
	for i, v := range vp.validations {
		r, err := act.eval(v.Expr)
		if err != nil {
			return []decision{failure(d, err.Error())}, nil
		}
		results[i] = r
	}
	var out []decision
	for i, v := range vp.validations {
		r := results[i]
		switch {
		case r.Err != nil:
			dec := failure(d, r.Err.Error())
			dec.Index = i
			if dec.Deny {
				out = append(out, dec)
			}
		case r.Val == types.True:
		default:
			dec := decision{Deny: true, Reason: metav1.StatusReasonInvalid, Index: i}
			if v.Reason != nil {
				dec.Reason = *v.Reason
			}
			// The message: messageExpression's result, else message, else the expression.
			var msg string
			if v.MsgExpr != nil {
				m, err := act.eval(*v.MsgExpr)
				if err != nil {
					out = append(out, decision{Deny: true, Index: i, Message: fmt.Sprintf("failed messageExpression: %s", err)})
					continue
				}
				if m.Err == nil {
					if s, ok := m.Val.Value().(string); ok {
						msg = strings.TrimSpace(s)
						if len(msg) > maxMessageBytes || strings.Contains(msg, "\n") {
							msg = ""
						}
					}
				}
			}
			if msg == "" {
				msg = strings.TrimSpace(v.Message)
			}
			if msg == "" {
				msg = fmt.Sprintf("failed expression: %v", strings.TrimSpace(v.Expression))
			}
			dec.Message = msg
			out = append(out, dec)
		}
	}
	// 3. Audit annotations.
	var anns []annotationResult
	for _, a := range vp.annotations {
		r, err := act.eval(a.Value)
		switch {
		case err != nil:
			anns = append(anns, annotationResult{key: a.Key, errMsg: err.Error()})
		case r.Err != nil:
			anns = append(anns, annotationResult{key: a.Key, errMsg: r.Err.Error()})
		default:
			switch v := r.Val.Value().(type) {
			case string:
				if s := strings.TrimSpace(v); s != "" {
					anns = append(anns, annotationResult{key: a.Key, value: s})
				}
			default:
				if r.Val.Type() != types.NullType {
					anns = append(anns, annotationResult{key: a.Key, errMsg: fmt.Sprintf("valueExpression '%v' resulted in unsupported return type: %v. Return type must be either string or null.", a.Expr, r.Val.Type())})
				}
			}
		}
	}
	return out, anns
}

// validationFailure is one element of the validation_failure audit annotation.
type validationFailure struct {
	Message           string                                     `json:"message"`
	Policy            string                                     `json:"policy"`
	Binding           string                                     `json:"binding"`
	ExpressionIndex   int                                        `json:"expressionIndex"`
	ValidationActions []admissionregistrationv1.ValidationAction `json:"validationActions"`
}

type deniedDecision struct {
	policy, binding string
	decision
}

// Validate judges the request by every ValidatingAdmissionPolicy bound to it: a failed
// validation of a binding with the Deny action refuses it, Warn gives the client a
// warning, Audit records an audit annotation.
func (p *Validating) Validate(ctx context.Context, a *admission.Attributes) error {
	// 1. The bindings and policies, from the watch-fed caches.
	bindingObjs, err := p.r.List(ctx, validatingBindingsGVR, "")
	if err != nil || len(bindingObjs) == 0 {
		return err
	}
	policyObjs, err := p.r.List(ctx, validatingPoliciesGVR, "")
	if err != nil {
		return err
	}
	var bindings []binding
	actions := map[string][]admissionregistrationv1.ValidationAction{}
	for _, o := range bindingObjs {
		b, ok := o.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
		if !ok {
			continue
		}
		bindings = append(bindings, binding{Name: b.Name, PolicyName: b.Spec.PolicyName, ParamRef: b.Spec.ParamRef, MatchResources: b.Spec.MatchResources})
		actions[b.Name] = b.Spec.ValidationActions
	}
	sort.Slice(bindings, func(i, j int) bool { return bindings[i].Name < bindings[j].Name })
	compiled := map[*definition]*validatingPolicy{}
	var defs []*definition
	names := map[string]bool{}
	failurePolicies := map[string]admissionregistrationv1.FailurePolicyType{}
	for _, o := range policyObjs {
		vap, ok := o.(*admissionregistrationv1.ValidatingAdmissionPolicy)
		if !ok {
			continue
		}
		c := p.cache.get(vap, func() *validatingPolicy { return p.compile(vap) })
		compiled[&c.def] = c
		defs = append(defs, &c.def)
		names[vap.Name] = true
		failurePolicies[vap.Name] = c.def.FailurePolicy
	}
	p.cache.prune(names)
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })

	// 2. What applies to this request.
	q := newRequest(ctx, p.r, a, p.Authorizer)
	invs, cfgErrs := q.invocations(defs, bindings, p.resourceFor)
	if len(invs) > 0 {
		if _, err := q.namespace(); err != nil {
			return err
		}
	}

	// 3. Evaluate each invocation; act on its decisions by the binding's actions.
	var denied []deniedDecision
	var failures []validationFailure
	auditValues := map[string][]string{} // policy/key → distinct values
	var auditKeys []string
	for _, inv := range invs {
		vp := compiled[inv.Def]
		decisions, anns := vp.evaluate(q, inv)
		for _, d := range decisions {
			if !d.Deny {
				continue
			}
			for _, action := range actions[inv.Binding.Name] {
				switch action {
				case admissionregistrationv1.Deny:
					denied = append(denied, deniedDecision{inv.Def.Name, inv.Binding.Name, d})
				case admissionregistrationv1.Audit:
					failures = append(failures, validationFailure{Message: d.Message, Policy: inv.Binding.PolicyName, Binding: inv.Binding.Name,
						ExpressionIndex: d.Index, ValidationActions: actions[inv.Binding.Name]})
				case admissionregistrationv1.Warn:
					admission.Warn(ctx, fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", inv.Def.Name, inv.Binding.Name, d.Message))
				}
			}
		}
		for _, an := range anns {
			if an.errMsg != "" {
				denied = append(denied, deniedDecision{inv.Def.Name, inv.Binding.Name, decision{Deny: true, Message: an.errMsg}})
				continue
			}
			key := inv.Def.Name + "/" + an.key
			v := an.value
			if len(v) > maxAuditAnnotationValueLength {
				v = v[:maxAuditAnnotationValueLength]
			}
			if _, seen := auditValues[key]; !seen {
				auditKeys = append(auditKeys, key)
			}
			if !containsString(auditValues[key], v) {
				auditValues[key] = append(auditValues[key], v)
			}
		}
	}
	for _, k := range auditKeys {
		audit.Annotate(ctx, k, strings.Join(auditValues[k], ", "))
	}
	if len(failures) > 0 {
		if len(failures) > maxValidationFailures {
			failures = failures[:maxValidationFailures]
		}
		if b, err := json.Marshal(failures); err == nil {
			audit.Annotate(ctx, ValidationFailureKey, string(b))
		}
	}

	// 4. The first denial refuses the request; else policies that could not be applied.
	if len(denied) > 0 {
		return denyError(a, denied[0])
	}
	return refuse(a, cfgErrs, failurePolicies)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// denyError is upstream's refusal for a denied validation: `<resource> "<name>" is
// forbidden: ValidatingAdmissionPolicy '<policy>' with binding '<binding>' denied request:
// <message>`, with the validation's reason (Invalid by default) and its HTTP code.
func denyError(a *admission.Attributes, d deniedDecision) error {
	message := fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", d.policy, d.binding, d.Message)
	var status *apierrors.StatusError
	if !errors.As(admission.NewForbidden(a, errors.New(message)), &status) {
		return apierrors.NewInternalError(errors.New("failed to create status error"))
	}
	reason := d.Reason
	if reason == "" {
		reason = metav1.StatusReasonInvalid
	}
	status.ErrStatus.Reason = reason
	status.ErrStatus.Code = reasonToCode(reason)
	status.ErrStatus.Details.Causes = append(status.ErrStatus.Details.Causes, metav1.StatusCause{Message: message})
	return status
}

func reasonToCode(r metav1.StatusReason) int32 {
	switch r {
	case metav1.StatusReasonForbidden:
		return http.StatusForbidden
	case metav1.StatusReasonUnauthorized:
		return http.StatusUnauthorized
	case metav1.StatusReasonRequestEntityTooLarge:
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusUnprocessableEntity
}
