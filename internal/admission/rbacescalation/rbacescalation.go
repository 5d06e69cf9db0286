package rbacescalation

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/auth"
)

// fullAuthority is every permission: what setting an aggregationRule needs.
var fullAuthority = []rbacv1.PolicyRule{
	{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
	{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
}

// Checker is the escalation check; the zero value lets only system:masters write RBAC
// objects.
type Checker struct {
	// Resolver lists the rules a user holds; nil means none.
	Resolver auth.RuleResolver
	// Reader reads the roles bindings reference; nil means none is found.
	Reader admission.Reader
}

// Validate refuses a create or update of an RBAC object that would grant the requesting
// user (auth.UserFrom) permissions it does not hold; other requests pass.
func (c *Checker) Validate(ctx context.Context, a *admission.Attributes) error {
	if a == nil || a.Object == nil || reflect.ValueOf(a.Object).IsNil() || a.Resource.Group != rbacv1.GroupName || a.Subresource != "" ||
		(a.Operation != admission.Create && a.Operation != admission.Update) {
		return nil
	}
	u, ok := auth.UserFrom(ctx)
	if !ok || u.InGroup(auth.SystemMasters) {
		return nil
	}
	if a.Operation == admission.Update && onlyGCFields(a.Object, a.OldObject) {
		return nil
	}
	gr := a.Resource.GroupResource()
	switch o := a.Object.(type) {
	case *rbacv1.Role:
		return c.confirmRole(ctx, u, gr, a.Namespace, o.Name, o.Rules, false)
	case *rbacv1.ClusterRole:
		aggregates := o.AggregationRule != nil
		if old, ok := a.OldObject.(*rbacv1.ClusterRole); ok && old.AggregationRule != nil {
			aggregates = true
		}
		return c.confirmRole(ctx, u, gr, "", o.Name, o.Rules, aggregates)
	case *rbacv1.RoleBinding:
		return c.confirmBinding(ctx, u, gr, a.Namespace, o.Name, o.RoleRef)
	case *rbacv1.ClusterRoleBinding:
		return c.confirmBinding(ctx, u, gr, "", o.Name, o.RoleRef)
	}
	return nil
}

// confirmRole: 1. a user who may escalate on the role passes; 2. otherwise the rules must be
// covered by the user's; 3. an aggregationRule (set now or before) needs every permission.
func (c *Checker) confirmRole(ctx context.Context, u auth.User, gr schema.GroupResource, ns, name string, rules []rbacv1.PolicyRule, aggregates bool) error {
	if c.allowed(ctx, u, &auth.Attributes{User: u, Verb: "escalate", ResourceRequest: true, APIGroup: rbacv1.GroupName, Resource: gr.Resource, Namespace: ns, Name: name}) {
		return nil
	}
	if err := c.confirmNoEscalation(ctx, u, ns, rules); err != nil {
		return kerrors.NewForbidden(gr, name, err)
	}
	if aggregates {
		if err := c.confirmNoEscalation(ctx, u, ns, fullAuthority); err != nil {
			return kerrors.NewForbidden(gr, name, errors.New("must have cluster-admin privileges to use the aggregationRule"))
		}
	}
	return nil
}

// confirmBinding: 1. a user who may bind the referenced role passes; 2. otherwise the
// role's rules must be covered by the user's.
func (c *Checker) confirmBinding(ctx context.Context, u auth.User, gr schema.GroupResource, ns, name string, ref rbacv1.RoleRef) error {
	resource := map[string]string{"Role": "roles", "ClusterRole": "clusterroles"}[ref.Kind]
	if c.allowed(ctx, u, &auth.Attributes{User: u, Verb: "bind", ResourceRequest: true, APIGroup: rbacv1.GroupName, Resource: resource, Namespace: ns, Name: ref.Name}) {
		return nil
	}
	rules, err := c.roleRules(ctx, ref, ns)
	if err != nil {
		return kerrors.NewForbidden(gr, name, err)
	}
	if err := c.confirmNoEscalation(ctx, u, ns, rules); err != nil {
		return kerrors.NewForbidden(gr, name, err)
	}
	return nil
}

func (c *Checker) roleRules(ctx context.Context, ref rbacv1.RoleRef, ns string) ([]rbacv1.PolicyRule, error) {
	var gvr schema.GroupVersionResource
	switch ref.Kind {
	case "Role":
		gvr = rbacv1.SchemeGroupVersion.WithResource("roles")
	case "ClusterRole":
		gvr = rbacv1.SchemeGroupVersion.WithResource("clusterroles")
		ns = ""
	default:
		return nil, fmt.Errorf("unsupported role reference kind: %q", ref.Kind)
	}
	if c.Reader == nil {
		return nil, kerrors.NewNotFound(gvr.GroupResource(), ref.Name)
	}
	obj, err := c.Reader.Get(ctx, gvr, ns, ref.Name)
	if err != nil {
		return nil, err
	}
	switch r := obj.(type) {
	case *rbacv1.Role:
		return r.Rules, nil
	case *rbacv1.ClusterRole:
		return r.Rules, nil
	}
	return nil, fmt.Errorf("unexpected %T for %s %q", obj, ref.Kind, ref.Name)
}

func (c *Checker) rulesFor(ctx context.Context, u auth.User, ns string) ([]rbacv1.PolicyRule, error) {
	if c.Resolver == nil {
		return nil, nil
	}
	rules, _, err := c.Resolver.RulesFor(ctx, u, ns)
	return rules, err
}

func (c *Checker) allowed(ctx context.Context, u auth.User, a *auth.Attributes) bool {
	rules, _ := c.rulesFor(ctx, u, a.Namespace)
	return auth.RulesAllow(rules, a)
}

// confirmNoEscalation is upstream's ConfirmNoEscalation: the user's rules in ns must cover
// rules; resolution errors do not stop the check but are named in the refusal.
func (c *Checker) confirmNoEscalation(ctx context.Context, u auth.User, ns string, rules []rbacv1.PolicyRule) error {
	owner, err := c.rulesFor(ctx, u, ns)
	ok, missing := Covers(owner, rules)
	if ok {
		return nil
	}
	groups := u.Groups
	if groups == nil {
		groups = []string{}
	}
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s", u.Name, groups, missingText(missing))
	if err != nil {
		msg += fmt.Sprintf("; resolution errors: %v", []error{err})
	}
	return errors.New(msg)
}

// onlyGCFields is upstream's IsOnlyMutatingGCFields: the update changes nothing but
// ownerReferences, finalizers and managed fields.
func onlyGCFields(obj, old runtime.Object) bool {
	if obj == nil || old == nil || reflect.ValueOf(old).IsNil() {
		return false
	}
	cp := obj.DeepCopyObject()
	m, err1 := meta.Accessor(cp)
	om, err2 := meta.Accessor(old)
	if err1 != nil || err2 != nil {
		return false
	}
	m.SetOwnerReferences(om.GetOwnerReferences())
	m.SetFinalizers(om.GetFinalizers())
	m.SetManagedFields(om.GetManagedFields())
	m.SetResourceVersion(om.GetResourceVersion())
	m.SetGeneration(om.GetGeneration())
	return equality.Semantic.DeepEqual(cp, old)
}
