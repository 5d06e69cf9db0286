package validation

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	ar "k8s.io/api/admissionregistration/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/convert"
)

// admissionregistration.k8s.io validation (upstream
// pkg/apis/admissionregistration/validation). CEL expressions are checked
// for presence only: quotad neither compiles nor evaluates them.

// Sorted value sets of upstream's messages.
var (
	failurePolicies     = []string{"Fail", "Ignore"}
	matchPolicies       = []string{"Equivalent", "Exact"}
	noSideEffects       = []string{"None", "NoneOnDryRun"}
	allSideEffects      = []string{"None", "NoneOnDryRun", "Some", "Unknown"}
	operations          = []string{"*", "CONNECT", "CREATE", "DELETE", "UPDATE"}
	mutatingOperations  = []string{"*", "CONNECT", "CREATE", "UPDATE"}
	reinvocation        = []string{"IfNeeded", "Never"}
	scopes              = []string{"*", "Cluster", "Namespaced"}
	validationActions   = []string{"Audit", "Deny", "Warn"}
	policyReasons       = []string{"Forbidden", "Invalid", "RequestEntityTooLarge"}
	patchTypes          = []string{"ApplyConfiguration", "JSONPatch"}
	admissionReviewVers = []string{"v1", "v1beta1"}
)

func plainMeta(m *metav1.ObjectMeta) field.ErrorList {
	return apimachineryvalidation.ValidateObjectMeta(m, false, apimachineryvalidation.NameIsDNSSubdomain, metaPath)
}

// webhookOpts are upstream's validationOptions that updates relax.
type webhookOpts struct {
	requireNoSideEffects, requireRecognizedVersion, requireUnique bool
}

var strictWebhooks = webhookOpts{true, true, true}

// webhook is what validating and mutating webhooks share.
type webhook struct {
	name           string
	rules          []ar.RuleWithOperations
	failurePolicy  *ar.FailurePolicyType
	matchPolicy    *ar.MatchPolicyType
	sideEffects    *ar.SideEffectClass
	timeout        *int32
	nsSel, objSel  *metav1.LabelSelector
	clientConfig   ar.WebhookClientConfig
	conditions     []ar.MatchCondition
	reviewVersions []string
	reinvocation   *ar.ReinvocationPolicyType
	mutating       bool
}

func validatingHooks(ws []ar.ValidatingWebhook) []webhook {
	out := make([]webhook, len(ws))
	for i, w := range ws {
		out[i] = webhook{w.Name, w.Rules, w.FailurePolicy, w.MatchPolicy, w.SideEffects, w.TimeoutSeconds, w.NamespaceSelector, w.ObjectSelector, w.ClientConfig, w.MatchConditions, w.AdmissionReviewVersions, nil, false}
	}
	return out
}

func mutatingHooks(ws []ar.MutatingWebhook) []webhook {
	out := make([]webhook, len(ws))
	for i, w := range ws {
		out[i] = webhook{w.Name, w.Rules, w.FailurePolicy, w.MatchPolicy, w.SideEffects, w.TimeoutSeconds, w.NamespaceSelector, w.ObjectSelector, w.ClientConfig, w.MatchConditions, w.AdmissionReviewVersions, w.ReinvocationPolicy, true}
	}
	return out
}

// updateOpts relaxes the rules the stored webhooks already break, as upstream does.
func updateOpts(old []webhook) webhookOpts {
	o := strictWebhooks
	names := map[string]bool{}
	for _, w := range old {
		if w.sideEffects == nil || !slices.Contains(noSideEffects, string(*w.sideEffects)) {
			o.requireNoSideEffects = false
		}
		if !slices.ContainsFunc(w.reviewVersions, func(v string) bool { return slices.Contains(admissionReviewVers, v) }) {
			o.requireRecognizedVersion = false
		}
		if names[w.name] {
			o.requireUnique = false
		}
		names[w.name] = true
	}
	return o
}

func webhooks(m *metav1.ObjectMeta, hooks []webhook, opts webhookOpts) field.ErrorList {
	errs := plainMeta(m)
	names := map[string]bool{}
	for i := range hooks {
		p := field.NewPath("webhooks").Index(i)
		errs = append(errs, validateWebhook(&hooks[i], opts, p)...)
		errs = append(errs, reviewVersions(hooks[i].reviewVersions, opts.requireRecognizedVersion, p.Child("admissionReviewVersions"))...)
		if n := hooks[i].name; opts.requireUnique && n != "" {
			if names[n] {
				errs = append(errs, field.Duplicate(p.Child("name"), n))
			}
			names[n] = true
		}
	}
	return errs
}

func validateWebhook(h *webhook, opts webhookOpts, p *field.Path) field.ErrorList {
	errs := utilvalidation.IsFullyQualifiedName(p.Child("name"), h.name)
	for i := range h.rules {
		errs = append(errs, ruleWithOperations(&h.rules[i], operations, p.Child("rules").Index(i))...)
	}
	if h.failurePolicy != nil && !slices.Contains(failurePolicies, string(*h.failurePolicy)) {
		errs = append(errs, field.NotSupported(p.Child("failurePolicy"), *h.failurePolicy, failurePolicies))
	}
	if h.matchPolicy != nil && !slices.Contains(matchPolicies, string(*h.matchPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("matchPolicy"), *h.matchPolicy, matchPolicies))
	}
	allowed := allSideEffects
	if opts.requireNoSideEffects {
		allowed = noSideEffects
	}
	if h.sideEffects == nil {
		errs = append(errs, field.Required(p.Child("sideEffects"), "must specify one of "+strings.Join(allowed, ", ")))
	} else if !slices.Contains(allowed, string(*h.sideEffects)) {
		errs = append(errs, field.NotSupported(p.Child("sideEffects"), *h.sideEffects, allowed))
	}
	if t := h.timeout; t != nil && (*t > 30 || *t < 1) {
		errs = append(errs, field.Invalid(p.Child("timeoutSeconds"), *t, "the timeout value must be between 1 and 30 seconds"))
	}
	if h.nsSel != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(h.nsSel, metav1validation.LabelSelectorValidationOptions{}, p.Child("namespaceSelector"))...)
	}
	if h.objSel != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(h.objSel, metav1validation.LabelSelectorValidationOptions{}, p.Child("objectSelector"))...)
	}
	if h.mutating && h.reinvocation != nil && !slices.Contains(reinvocation, string(*h.reinvocation)) {
		errs = append(errs, field.NotSupported(p.Child("reinvocationPolicy"), *h.reinvocation, reinvocation))
	}
	cc := h.clientConfig
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		errs = append(errs, field.Required(p.Child("clientConfig"), "exactly one of url or service is required"))
	case cc.URL != nil:
		errs = append(errs, webhookURL(p.Child("clientConfig", "url"), *cc.URL)...)
	default:
		var port int32
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		errs = append(errs, webhookService(p.Child("clientConfig", "service"), cc.Service.Namespace, cc.Service.Name, cc.Service.Path, port)...)
	}
	return append(errs, matchConditions(h.conditions, p.Child("matchConditions"))...)
}

// webhookURL is upstream's ValidateWebhookURL (https only).
func webhookURL(p *field.Path, raw string) field.ErrorList {
	const form = "; desired format: https://host[/path]"
	u, err := url.Parse(raw)
	if err != nil {
		return field.ErrorList{field.Required(p, "url must be a valid URL: "+err.Error()+form)}
	}
	var errs field.ErrorList
	if u.Scheme != "https" {
		errs = append(errs, field.Invalid(p, u.Scheme, "'https' is the only allowed URL scheme"+form))
	}
	if u.Host == "" {
		errs = append(errs, field.Invalid(p, u.Host, "host must be specified"+form))
	}
	if u.User != nil {
		errs = append(errs, field.Invalid(p, u.User.String(), "user information is not permitted in the URL"))
	}
	if u.Fragment != "" {
		errs = append(errs, field.Invalid(p, u.Fragment, "fragments are not permitted in the URL"))
	}
	if u.RawQuery != "" {
		errs = append(errs, field.Invalid(p, u.RawQuery, "query parameters are not permitted in the URL"))
	}
	return errs
}

// webhookService is upstream's ValidateWebhookService.
func webhookService(p *field.Path, namespace, name string, urlPath *string, port int32) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	if namespace == "" {
		errs = append(errs, field.Required(p.Child("namespace"), ""))
	}
	if msgs := utilvalidation.IsValidPortNum(int(port)); msgs != nil {
		errs = append(errs, field.Invalid(p.Child("port"), port, "port is not valid: "+strings.Join(msgs, ", ")))
	}
	if urlPath == nil || *urlPath == "/" || *urlPath == "" {
		return errs
	}
	up := *urlPath
	pp := p.Child("path")
	if up == "//" {
		return append(errs, field.Invalid(pp, up, "segment[0] may not be empty"))
	}
	if !strings.HasPrefix(up, "/") {
		errs = append(errs, field.Invalid(pp, up, "must start with a '/'"))
	}
	check := strings.TrimSuffix(up[1:], "/")
	for i, step := range strings.Split(check, "/") {
		if step == "" {
			errs = append(errs, field.Invalid(pp, up, fmt.Sprintf("segment[%d] may not be empty", i)))
			continue
		}
		for _, msg := range utilvalidation.IsDNS1123Subdomain(step) {
			errs = append(errs, field.Invalid(pp, up, fmt.Sprintf("segment[%d]: %v", i, msg)))
		}
	}
	return errs
}

func reviewVersions(vs []string, requireRecognized bool, p *field.Path) field.ErrorList {
	if len(vs) < 1 {
		return field.ErrorList{field.Required(p, "must specify one of "+strings.Join(admissionReviewVers, ", "))}
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	accepted := false
	for i, v := range vs {
		if seen[v] {
			errs = append(errs, field.Invalid(p.Index(i), v, "duplicate version"))
			continue
		}
		seen[v] = true
		for _, msg := range utilvalidation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(p.Index(i), v, msg))
		}
		if slices.Contains(admissionReviewVers, v) {
			accepted = true
		}
	}
	if requireRecognized && !accepted {
		errs = append(errs, field.Invalid(p, vs, "must include at least one of "+strings.Join(admissionReviewVers, ", ")))
	}
	return errs
}

func ruleWithOperations(r *ar.RuleWithOperations, ops []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.Operations) == 0 {
		errs = append(errs, field.Required(p.Child("operations"), ""))
	}
	if len(r.Operations) > 1 && slices.Contains(r.Operations, ar.OperationAll) {
		errs = append(errs, field.Invalid(p.Child("operations"), r.Operations, "if '*' is present, must not specify other operations"))
	}
	for i, op := range r.Operations {
		if !slices.Contains(ops, string(op)) {
			errs = append(errs, field.NotSupported(p.Child("operations").Index(i), op, ops))
		}
	}
	return append(errs, admissionRule(&r.Rule, p)...)
}

func admissionRule(r *ar.Rule, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(p.Child("apiGroups"), ""))
	}
	if len(r.APIGroups) > 1 && slices.Contains(r.APIGroups, "*") {
		errs = append(errs, field.Invalid(p.Child("apiGroups"), r.APIGroups, "if '*' is present, must not specify other API groups"))
	}
	if len(r.APIVersions) == 0 {
		errs = append(errs, field.Required(p.Child("apiVersions"), ""))
	}
	if len(r.APIVersions) > 1 && slices.Contains(r.APIVersions, "*") {
		errs = append(errs, field.Invalid(p.Child("apiVersions"), r.APIVersions, "if '*' is present, must not specify other API versions"))
	}
	for i, v := range r.APIVersions {
		if v == "" {
			errs = append(errs, field.Required(p.Child("apiVersions").Index(i), ""))
		}
	}
	errs = append(errs, ruleResources(r.Resources, p.Child("resources"))...)
	if r.Scope != nil && !slices.Contains(scopes, string(*r.Scope)) {
		errs = append(errs, field.NotSupported(p.Child("scope"), *r.Scope, scopes))
	}
	return errs
}

// ruleResources is upstream's validateResources (subresources allowed).
func ruleResources(rs []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(rs) == 0 {
		errs = append(errs, field.Required(p, ""))
	}
	wildSub, wildRes := map[string]bool{}, map[string]bool{}
	double, single, plain := false, false, false
	for i, rs1 := range rs {
		if rs1 == "" {
			errs = append(errs, field.Required(p.Index(i), ""))
			continue
		}
		double = double || rs1 == "*/*"
		single = single || rs1 == "*"
		res, sub, found := strings.Cut(rs1, "/")
		if !found {
			plain = rs1 != "*"
			continue
		}
		if wildSub[res] {
			errs = append(errs, field.Invalid(p.Index(i), rs1, fmt.Sprintf("if '%s/*' is present, must not specify %s", res, rs1)))
		}
		if wildRes[sub] {
			errs = append(errs, field.Invalid(p.Index(i), rs1, fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, rs1)))
		}
		if sub == "*" {
			wildSub[res] = true
		}
		if res == "*" {
			wildRes[sub] = true
		}
	}
	if len(rs) > 1 && double {
		errs = append(errs, field.Invalid(p, rs, "if '*/*' is present, must not specify other resources"))
	}
	if single && plain {
		errs = append(errs, field.Invalid(p, rs, "if '*' is present, must not specify other resources without subresources"))
	}
	return errs
}

func matchConditions(ms []ar.MatchCondition, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(ms) > 64 {
		errs = append(errs, field.TooMany(p, len(ms), 64))
	}
	names := map[string]bool{}
	for i, m := range ms {
		ip := p.Index(i)
		if strings.TrimSpace(m.Expression) == "" {
			errs = append(errs, field.Required(ip.Child("expression"), ""))
		}
		if m.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else {
			errs = append(errs, qualifiedName(m.Name, ip.Child("name"))...)
			if names[m.Name] {
				errs = append(errs, field.Duplicate(ip.Child("name"), m.Name))
			}
			names[m.Name] = true
		}
	}
	return errs
}

// ValidatingWebhookConfiguration validates a ValidatingWebhookConfiguration on create.
func ValidatingWebhookConfiguration(c *ar.ValidatingWebhookConfiguration) field.ErrorList {
	return webhooks(&c.ObjectMeta, validatingHooks(c.Webhooks), strictWebhooks)
}

// ValidatingWebhookConfigurationUpdate validates an update.
func ValidatingWebhookConfigurationUpdate(n, o *ar.ValidatingWebhookConfiguration) field.ErrorList {
	errs := webhooks(&n.ObjectMeta, validatingHooks(n.Webhooks), updateOpts(validatingHooks(o.Webhooks)))
	return append(errs, apimachineryvalidation.ValidateObjectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
}

// MutatingWebhookConfiguration validates a MutatingWebhookConfiguration on create.
func MutatingWebhookConfiguration(c *ar.MutatingWebhookConfiguration) field.ErrorList {
	return webhooks(&c.ObjectMeta, mutatingHooks(c.Webhooks), strictWebhooks)
}

// MutatingWebhookConfigurationUpdate validates an update.
func MutatingWebhookConfigurationUpdate(n, o *ar.MutatingWebhookConfiguration) field.ErrorList {
	errs := webhooks(&n.ObjectMeta, mutatingHooks(n.Webhooks), updateOpts(mutatingHooks(o.Webhooks)))
	return append(errs, apimachineryvalidation.ValidateObjectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
}

func policyParamKind(pk *ar.ParamKind, p *field.Path) field.ErrorList {
	if pk == nil {
		return nil
	}
	var errs field.ErrorList
	av := p.Child("apiVersion")
	switch {
	case pk.APIVersion == "":
		errs = append(errs, field.Required(av, ""))
	case strings.Count(pk.APIVersion, "/") > 1:
		errs = append(errs, field.Invalid(av, pk.APIVersion, "unexpected GroupVersion string: "+pk.APIVersion))
	default:
		group, version, found := strings.Cut(pk.APIVersion, "/")
		if !found {
			group, version = "", pk.APIVersion
		}
		if pk.APIVersion == "/" {
			group, version = "", ""
		}
		if group != "" {
			if msgs := utilvalidation.IsDNS1123Subdomain(group); len(msgs) > 0 {
				errs = append(errs, field.Invalid(av, group, strings.Join(msgs, ",")))
			}
		}
		if version == "" {
			errs = append(errs, field.Invalid(av, pk.APIVersion, "version must be specified"))
		} else if msgs := utilvalidation.IsDNS1035Label(version); len(msgs) > 0 {
			errs = append(errs, field.Invalid(av, version, strings.Join(msgs, ",")))
		}
	}
	if pk.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	} else if msgs := utilvalidation.IsDNS1035Label(strings.ToLower(pk.Kind)); len(msgs) > 0 {
		errs = append(errs, field.Invalid(p.Child("kind"), pk.Kind, "may have mixed case, but should otherwise match: "+strings.Join(msgs, ",")))
	}
	return errs
}

func matchResourcesErrs(mc *ar.MatchResources, p *field.Path) field.ErrorList {
	if mc == nil {
		return nil
	}
	var errs field.ErrorList
	if mc.MatchPolicy == nil {
		errs = append(errs, field.Required(p.Child("matchPolicy"), ""))
	} else if !slices.Contains(matchPolicies, string(*mc.MatchPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("matchPolicy"), *mc.MatchPolicy, matchPolicies))
	}
	for _, sel := range []struct {
		s    *metav1.LabelSelector
		name string
	}{{mc.NamespaceSelector, "namespaceSelector"}, {mc.ObjectSelector, "objectSelector"}} {
		if sel.s == nil {
			errs = append(errs, field.Required(p.Child(sel.name), ""))
		} else {
			errs = append(errs, metav1validation.ValidateLabelSelector(sel.s, metav1validation.LabelSelectorValidationOptions{}, p.Child(sel.name))...)
		}
	}
	named := func(rs []ar.NamedRuleWithOperations, name string) {
		for i := range rs {
			ip := p.Child(name).Index(i)
			seen := map[string]bool{}
			for j, rn := range rs[i].ResourceNames {
				for _, msg := range path.IsValidPathSegmentName(rn) {
					errs = append(errs, field.Invalid(ip.Child("resourceNames").Index(j), rn, msg))
				}
				if seen[rn] {
					errs = append(errs, field.Duplicate(ip.Child("resourceNames").Index(j), rn))
				}
				seen[rn] = true
			}
			errs = append(errs, ruleWithOperations(&rs[i].RuleWithOperations, operations, ip)...)
		}
	}
	named(mc.ResourceRules, "resourceRules")
	named(mc.ExcludeResourceRules, "excludeResourceRules")
	return errs
}

// policyCommon validates what both admission policy kinds share.
func policyCommon(fp *ar.FailurePolicyType, pk *ar.ParamKind, mc *ar.MatchResources, conds []ar.MatchCondition, vars []ar.Variable, mutating bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if fp == nil {
		errs = append(errs, field.Required(p.Child("failurePolicy"), ""))
	} else if !slices.Contains(failurePolicies, string(*fp)) {
		errs = append(errs, field.NotSupported(p.Child("failurePolicy"), *fp, failurePolicies))
	}
	errs = append(errs, policyParamKind(pk, p.Child("paramKind"))...)
	if mc == nil {
		errs = append(errs, field.Required(p.Child("matchConstraints"), ""))
	} else {
		errs = append(errs, matchResourcesErrs(mc, p.Child("matchConstraints"))...)
		if len(mc.ResourceRules) == 0 {
			errs = append(errs, field.Required(p.Child("matchConstraints", "resourceRules"), ""))
		}
		if mutating {
			errs = append(errs, mutatingOps(mc, p.Child("matchConstraints", "resourceRules", "operations"))...)
		}
	}
	errs = append(errs, matchConditions(conds, p.Child("matchConditions"))...)
	for i, v := range vars {
		vp := p.Child("variables").Index(i)
		if v.Name == "" || strings.TrimSpace(v.Name) == "" {
			errs = append(errs, field.Required(vp.Child("name"), "name is not specified"))
		}
		if strings.TrimSpace(v.Expression) == "" {
			errs = append(errs, field.Required(vp.Child("expression"), "expression is not specified"))
		}
	}
	return errs
}

func mutatingOps(mc *ar.MatchResources, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, r := range mc.ResourceRules {
		for _, op := range r.Operations {
			if !slices.Contains(mutatingOperations, string(op)) {
				errs = append(errs, field.NotSupported(p, op, mutatingOperations))
			}
		}
	}
	return errs
}

// ValidatingAdmissionPolicy validates a ValidatingAdmissionPolicy on create.
func ValidatingAdmissionPolicy(vp *ar.ValidatingAdmissionPolicy) field.ErrorList {
	errs := plainMeta(&vp.ObjectMeta)
	p := field.NewPath("spec")
	s := &vp.Spec
	errs = append(errs, policyCommon(s.FailurePolicy, s.ParamKind, s.MatchConstraints, s.MatchConditions, s.Variables, false, p)...)
	if len(s.Validations) == 0 && len(s.AuditAnnotations) == 0 {
		const msg = "validations or auditAnnotations must contain at least one item"
		return append(errs, field.Required(p.Child("validations"), msg), field.Required(p.Child("auditAnnotations"), msg))
	}
	for i, v := range s.Validations {
		ip := p.Child("validations").Index(i)
		if strings.TrimSpace(v.Expression) == "" {
			errs = append(errs, field.Required(ip.Child("expression"), "expression is not specified"))
		}
		if v.MessageExpression != "" && strings.TrimSpace(v.MessageExpression) == "" {
			errs = append(errs, field.Invalid(ip.Child("messageExpression"), v.MessageExpression, "must be non-empty if specified"))
		}
		if msg := strings.TrimSpace(v.Message); v.Message != "" && msg == "" {
			errs = append(errs, field.Invalid(ip.Child("message"), v.Message, "must be non-empty if specified"))
		} else if strings.ContainsAny(msg, "\n") {
			errs = append(errs, field.Invalid(ip.Child("message"), v.Message, "must not contain line breaks"))
		}
		if v.Reason != nil && !slices.Contains(policyReasons, string(*v.Reason)) {
			errs = append(errs, field.NotSupported(ip.Child("reason"), *v.Reason, policyReasons))
		}
	}
	if len(s.AuditAnnotations) > 20 {
		errs = append(errs, field.Invalid(p.Child("auditAnnotations"), convert.InternalJSON(s.AuditAnnotations), "must not have more than 20 auditAnnotations"))
	}
	keys := map[string]bool{}
	for i, a := range s.AuditAnnotations {
		ip := p.Child("auditAnnotations").Index(i)
		if strings.TrimSpace(a.ValueExpression) == "" {
			errs = append(errs, field.Required(ip.Child("valueExpression"), "valueExpression is not specified"))
		}
		if keys[a.Key] {
			errs = append(errs, field.Duplicate(ip.Child("key"), a.Key))
		}
		keys[a.Key] = true
	}
	return errs
}

// ValidatingAdmissionPolicyUpdate validates an update (or a /status write).
func ValidatingAdmissionPolicyUpdate(n, o *ar.ValidatingAdmissionPolicy) field.ErrorList {
	return append(ValidatingAdmissionPolicy(n), apimachineryvalidation.ValidateObjectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
}

func paramRefErrs(pr *ar.ParamRef, p *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	var errs field.ErrorList
	if pr.Name != "" {
		for _, msg := range path.IsValidPathSegmentName(pr.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), pr.Name, msg))
		}
		if pr.Selector != nil {
			errs = append(errs, field.Forbidden(p.Child("name"), `name and selector are mutually exclusive`))
		}
	}
	if pr.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(pr.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
		if pr.Name != "" {
			errs = append(errs, field.Forbidden(p.Child("selector"), `name and selector are mutually exclusive`))
		}
	}
	if pr.Name == "" && pr.Selector == nil {
		errs = append(errs, field.Required(p, `one of name or selector must be specified`))
	}
	if a := pr.ParameterNotFoundAction; a == nil || *a == "" {
		errs = append(errs, field.Required(p.Child("parameterNotFoundAction"), ""))
	} else if *a != ar.DenyAction && *a != ar.AllowAction {
		errs = append(errs, field.NotSupported(p.Child("parameterNotFoundAction"), a, []string{string(ar.DenyAction), string(ar.AllowAction)}))
	}
	return errs
}

func bindingCommon(m *metav1.ObjectMeta, policy string, pr *ar.ParamRef, mr *ar.MatchResources, mutating bool) field.ErrorList {
	errs := plainMeta(m)
	p := field.NewPath("spec")
	if policy == "" {
		errs = append(errs, field.Required(p.Child("policyName"), ""))
	} else {
		errs = append(errs, nameMsgs(nameIsDNSSubdomain, policy, p.Child("policyName"))...)
	}
	errs = append(errs, paramRefErrs(pr, p.Child("paramRef"))...)
	errs = append(errs, matchResourcesErrs(mr, p.Child("matchResources"))...)
	if mutating && mr != nil {
		errs = append(errs, mutatingOps(mr, p.Child("matchResources", "resourceRules", "operations"))...)
	}
	return errs
}

// ValidatingAdmissionPolicyBinding validates a binding on create.
func ValidatingAdmissionPolicyBinding(b *ar.ValidatingAdmissionPolicyBinding) field.ErrorList {
	errs := bindingCommon(&b.ObjectMeta, b.Spec.PolicyName, b.Spec.ParamRef, b.Spec.MatchResources, false)
	p := field.NewPath("spec", "validationActions")
	seen := map[ar.ValidationAction]bool{}
	for i, a := range b.Spec.ValidationActions {
		if !slices.Contains(validationActions, string(a)) {
			errs = append(errs, field.NotSupported(p.Index(i), a, validationActions))
		}
		if seen[a] {
			errs = append(errs, field.Duplicate(p.Index(i), a))
		}
		seen[a] = true
	}
	if seen[ar.Deny] && seen[ar.Warn] {
		errs = append(errs, field.Invalid(p, b.Spec.ValidationActions, "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	if len(seen) == 0 {
		errs = append(errs, field.Required(p, "at least one validation action is required"))
	}
	return errs
}

// ValidatingAdmissionPolicyBindingUpdate validates an update.
func ValidatingAdmissionPolicyBindingUpdate(n, o *ar.ValidatingAdmissionPolicyBinding) field.ErrorList {
	return append(ValidatingAdmissionPolicyBinding(n), apimachineryvalidation.ValidateObjectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
}

// MutatingAdmissionPolicy validates a MutatingAdmissionPolicy on create.
func MutatingAdmissionPolicy(mp *ar.MutatingAdmissionPolicy) field.ErrorList {
	errs := plainMeta(&mp.ObjectMeta)
	p := field.NewPath("spec")
	s := &mp.Spec
	errs = append(errs, policyCommon(s.FailurePolicy, s.ParamKind, s.MatchConstraints, s.MatchConditions, s.Variables, true, p)...)
	if len(s.Mutations) == 0 {
		errs = append(errs, field.Required(p.Child("mutations"), "mutations must contain at least one item"))
	}
	for i, m := range s.Mutations {
		ip := p.Child("mutations").Index(i)
		switch m.PatchType {
		case "":
			errs = append(errs, field.Required(ip.Child("patchType"), ""))
		case ar.PatchTypeJSONPatch:
			if m.JSONPatch == nil {
				errs = append(errs, field.Required(ip.Child("jsonPatch"), "must be specified when patchType is JSONPatch"))
			} else if strings.TrimSpace(m.JSONPatch.Expression) == "" {
				errs = append(errs, field.Required(ip.Child("jsonPatch", "expression"), ""))
			}
			if m.ApplyConfiguration != nil {
				errs = append(errs, field.Invalid(ip.Child("applyConfiguration"), "{applyConfiguration}", "must not be specified when patchType is JSONPatch"))
			}
		case ar.PatchTypeApplyConfiguration:
			if m.ApplyConfiguration == nil {
				errs = append(errs, field.Required(ip.Child("applyConfiguration"), "must be specified when patchType is ApplyConfiguration"))
			} else if strings.TrimSpace(m.ApplyConfiguration.Expression) == "" {
				errs = append(errs, field.Required(ip.Child("applyConfiguration", "expression"), ""))
			}
			if m.JSONPatch != nil {
				errs = append(errs, field.Invalid(ip.Child("jsonPatch"), "{jsonPatch}", "must not be specified when patchType is ApplyConfiguration"))
			}
		default:
			errs = append(errs, field.NotSupported(ip.Child("patchType"), m.PatchType, patchTypes))
		}
	}
	if s.ReinvocationPolicy == "" {
		errs = append(errs, field.Required(p.Child("reinvocationPolicy"), ""))
	} else if !slices.Contains(reinvocation, string(s.ReinvocationPolicy)) {
		errs = append(errs, field.NotSupported(p.Child("reinvocationPolicy"), s.ReinvocationPolicy, reinvocation))
	}
	return errs
}

// MutatingAdmissionPolicyUpdate validates an update.
func MutatingAdmissionPolicyUpdate(n, o *ar.MutatingAdmissionPolicy) field.ErrorList {
	return append(MutatingAdmissionPolicy(n), apimachineryvalidation.ValidateObjectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
}

// MutatingAdmissionPolicyBinding validates a binding on create.
func MutatingAdmissionPolicyBinding(b *ar.MutatingAdmissionPolicyBinding) field.ErrorList {
	return bindingCommon(&b.ObjectMeta, b.Spec.PolicyName, b.Spec.ParamRef, b.Spec.MatchResources, true)
}

// MutatingAdmissionPolicyBindingUpdate validates an update.
func MutatingAdmissionPolicyBindingUpdate(n, o *ar.MutatingAdmissionPolicyBinding) field.ErrorList {
	return append(MutatingAdmissionPolicyBinding(n), apimachineryvalidation.ValidateObjectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
}
