package review

import (
	"context"
	"fmt"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/registry/convert"
)

// TokenAuthenticator authenticates a bearer token for audiences (nil: the server's own),
// returning the audiences it is good for among those.
type TokenAuthenticator interface {
	AuthenticateToken(token string, audiences []string) (auth.User, []string, bool)
}

// Func answers one review create: namespace is the request's, obj the decoded review.
type Func func(ctx context.Context, namespace string, obj runtime.Object) (runtime.Object, error)

// Reviews answers the review APIs.
type Reviews struct {
	// Tokens authenticates TokenReview's tokens (nil: none authenticates).
	Tokens TokenAuthenticator
	// Authorizer and Rules decide the access reviews (nil: see the package doc).
	Authorizer auth.Authorizer
	Rules      auth.RuleResolver
	// APIAudiences are reported for a TokenReview without audiences.
	APIAudiences []string
}

// Handlers returns the review of each group-resource.
func (rv *Reviews) Handlers() map[schema.GroupResource]Func {
	a, z := authenticationv1.GroupName, authorizationv1.GroupName
	return map[schema.GroupResource]Func{
		{Group: a, Resource: "tokenreviews"}:              rv.tokenReview,
		{Group: a, Resource: "selfsubjectreviews"}:        rv.selfSubjectReview,
		{Group: z, Resource: "selfsubjectaccessreviews"}:  rv.selfSubjectAccessReview,
		{Group: z, Resource: "selfsubjectrulesreviews"}:   rv.selfSubjectRulesReview,
		{Group: z, Resource: "localsubjectaccessreviews"}: rv.localSubjectAccessReview,
		{Group: z, Resource: "subjectaccessreviews"}:      rv.subjectAccessReview,
	}
}

func userOf(ctx context.Context) auth.User {
	if u, ok := auth.UserFrom(ctx); ok {
		return u
	}
	return auth.SystemUser()
}

func userInfo(u auth.User) authenticationv1.UserInfo {
	info := authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: slices.Clone(u.Groups)}
	if len(u.Extra) > 0 {
		info.Extra = map[string]authenticationv1.ExtraValue{}
		for k, v := range u.Extra {
			info.Extra[k] = slices.Clone(v)
		}
	}
	return info
}

func (rv *Reviews) tokenReview(ctx context.Context, ns string, obj runtime.Object) (runtime.Object, error) {
	tr := obj.(*authenticationv1.TokenReview)
	if ns != "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("namespace is not allowed on this type: %v", ns))
	}
	if tr.Spec.Token == "" {
		return nil, apierrors.NewBadRequest("token is required for TokenReview in authentication")
	}
	tr.Status = authenticationv1.TokenReviewStatus{}
	if rv.Tokens == nil {
		return tr, nil
	}
	var asked []string
	if len(tr.Spec.Audiences) > 0 {
		asked = tr.Spec.Audiences
	}
	u, auds, ok := rv.Tokens.AuthenticateToken(tr.Spec.Token, asked)
	if !ok {
		tr.Status.Error = "[invalid bearer token, token lookup failed]"
		return tr, nil
	}
	if auds == nil {
		auds = rv.APIAudiences
	}
	tr.Status.Authenticated, tr.Status.User, tr.Status.Audiences = true, userInfo(u), auds
	return tr, nil
}

func (rv *Reviews) selfSubjectReview(ctx context.Context, _ string, obj runtime.Object) (runtime.Object, error) {
	r := obj.(*authenticationv1.SelfSubjectReview)
	r.Status = authenticationv1.SelfSubjectReviewStatus{UserInfo: userInfo(userOf(ctx))}
	return r, nil
}

// authorize decides a through the Authorizer: system:masters always allowed.
func (rv *Reviews) authorize(ctx context.Context, a auth.Attributes) (allowed, denied bool, reason, evalErr string) {
	if a.User.InGroup(auth.SystemMasters) {
		return true, false, "", ""
	}
	if rv.Authorizer == nil {
		return false, false, "", ""
	}
	d, reason, err := rv.Authorizer.Authorize(ctx, a)
	if err != nil {
		evalErr = err.Error()
	}
	return d == auth.Allow, d == auth.Deny, reason, evalErr
}

func attributes(u auth.User, ra *authorizationv1.ResourceAttributes, nra *authorizationv1.NonResourceAttributes) auth.Attributes {
	a := auth.Attributes{User: u}
	if ra != nil {
		a.ResourceRequest = true
		a.Namespace, a.Verb, a.APIGroup, a.APIVersion = ra.Namespace, ra.Verb, ra.Group, ra.Version
		a.Resource, a.Subresource, a.Name = ra.Resource, ra.Subresource, ra.Name
	} else if nra != nil {
		a.Path, a.Verb = nra.Path, nra.Verb
	}
	return a
}

// validateSpec is upstream's check of what an access review asks about (1.37: one union
// error on spec, with the non-resource attributes as its value, as upstream prints them).
func validateSpec(ra *authorizationv1.ResourceAttributes, nra *authorizationv1.NonResourceAttributes, fld *field.Path) field.ErrorList {
	if (ra != nil) == (nra != nil) {
		return field.ErrorList{field.Invalid(fld, convert.InternalJSON(nra), `exactly one of nonResourceAttributes or resourceAttributes must be specified`)}
	}
	return nil
}

// emptyMeta reports whether an ObjectMeta is empty but for managedFields.
func emptyMeta(m metav1.ObjectMeta) bool {
	m.ManagedFields = nil
	return apiequality.Semantic.DeepEqual(metav1.ObjectMeta{}, m)
}

// invalid is upstream's 422 for a review: its group with no kind (upstream names the kind
// of the decoded review, whose type meta decoding has cleared).
func invalid(errs field.ErrorList) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: authorizationv1.GroupName}, "", errs)
}

func (rv *Reviews) selfSubjectAccessReview(ctx context.Context, ns string, obj runtime.Object) (runtime.Object, error) {
	r := obj.(*authorizationv1.SelfSubjectAccessReview)
	errs := validateSpec(r.Spec.ResourceAttributes, r.Spec.NonResourceAttributes, field.NewPath("spec"))
	if !emptyMeta(r.ObjectMeta) {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), r.ObjectMeta, `must be empty`))
	}
	if len(errs) > 0 {
		return nil, invalid(errs)
	}
	allowed, denied, reason, evalErr := rv.authorize(ctx, attributes(userOf(ctx), r.Spec.ResourceAttributes, r.Spec.NonResourceAttributes))
	r.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: allowed, Denied: denied, Reason: reason, EvaluationError: evalErr}
	return r, nil
}

// subject is the user a SubjectAccessReview asks about.
func subject(spec *authorizationv1.SubjectAccessReviewSpec) auth.User {
	u := auth.User{Name: spec.User, UID: spec.UID, Groups: slices.Clone(spec.Groups)}
	if len(spec.Extra) > 0 {
		u.Extra = map[string][]string{}
		for k, v := range spec.Extra {
			u.Extra[k] = slices.Clone(v)
		}
	}
	return u
}

func validateSubjectSpec(spec *authorizationv1.SubjectAccessReviewSpec) field.ErrorList {
	errs := validateSpec(spec.ResourceAttributes, spec.NonResourceAttributes, field.NewPath("spec"))
	if spec.User == "" && len(spec.Groups) == 0 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "user"), spec.User, `at least one of user or group must be specified`))
	}
	return errs
}

func (rv *Reviews) subjectAccessReview(ctx context.Context, _ string, obj runtime.Object) (runtime.Object, error) {
	r := obj.(*authorizationv1.SubjectAccessReview)
	errs := validateSubjectSpec(&r.Spec)
	if !emptyMeta(r.ObjectMeta) {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), r.ObjectMeta, `must be empty`))
	}
	if len(errs) > 0 {
		return nil, invalid(errs)
	}
	allowed, denied, reason, evalErr := rv.authorize(ctx, attributes(subject(&r.Spec), r.Spec.ResourceAttributes, r.Spec.NonResourceAttributes))
	r.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: allowed, Denied: denied, Reason: reason, EvaluationError: evalErr}
	return r, nil
}

func (rv *Reviews) localSubjectAccessReview(ctx context.Context, ns string, obj runtime.Object) (runtime.Object, error) {
	r := obj.(*authorizationv1.LocalSubjectAccessReview)
	if ns == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("namespace is required on this type: %v", ns))
	}
	if r.Spec.ResourceAttributes != nil && r.Spec.ResourceAttributes.Namespace != ns {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("spec.resourceAttributes.namespace must match namespace: %v", ns))
	}
	errs := validateSubjectSpec(&r.Spec)
	m := r.ObjectMeta
	m.Namespace = ""
	if !emptyMeta(m) {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), r.ObjectMeta, `must be empty except for namespace`))
	}
	if r.Spec.ResourceAttributes != nil && r.Spec.ResourceAttributes.Namespace != r.Namespace {
		errs = append(errs, field.Invalid(field.NewPath("spec.resourceAttributes.namespace"), r.Spec.ResourceAttributes.Namespace, `must match metadata.namespace`))
	}
	if r.Spec.NonResourceAttributes != nil {
		errs = append(errs, field.Invalid(field.NewPath("spec.nonResourceAttributes"), convert.InternalJSON(r.Spec.NonResourceAttributes), `disallowed on this kind of request`))
	}
	if len(errs) > 0 {
		return nil, invalid(errs)
	}
	allowed, denied, reason, evalErr := rv.authorize(ctx, attributes(subject(&r.Spec), r.Spec.ResourceAttributes, nil))
	r.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: allowed, Denied: denied, Reason: reason, EvaluationError: evalErr}
	return r, nil
}

// everything is what system:masters holds when no RuleResolver is configured.
var everything = []rbacv1.PolicyRule{
	{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
	{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
}

func (rv *Reviews) selfSubjectRulesReview(ctx context.Context, _ string, obj runtime.Object) (runtime.Object, error) {
	r := obj.(*authorizationv1.SelfSubjectRulesReview)
	if r.Spec.Namespace == "" {
		return nil, apierrors.NewBadRequest("no namespace on request")
	}
	u := userOf(ctx)
	var rules []rbacv1.PolicyRule
	var incomplete bool
	var evalErr string
	switch {
	case rv.Rules != nil:
		var err error
		rules, incomplete, err = rv.Rules.RulesFor(ctx, u, r.Spec.Namespace)
		if err != nil {
			evalErr = err.Error()
		}
	case u.InGroup(auth.SystemMasters):
		rules = everything
	}
	st := authorizationv1.SubjectRulesReviewStatus{
		ResourceRules: []authorizationv1.ResourceRule{}, NonResourceRules: []authorizationv1.NonResourceRule{},
		Incomplete: incomplete, EvaluationError: evalErr,
	}
	for _, rule := range rules {
		if len(rule.NonResourceURLs) > 0 {
			st.NonResourceRules = append(st.NonResourceRules, authorizationv1.NonResourceRule{Verbs: rule.Verbs, NonResourceURLs: rule.NonResourceURLs})
			continue
		}
		st.ResourceRules = append(st.ResourceRules, authorizationv1.ResourceRule{Verbs: rule.Verbs, APIGroups: rule.APIGroups, Resources: rule.Resources, ResourceNames: rule.ResourceNames})
	}
	r.Status = st
	return r, nil
}
