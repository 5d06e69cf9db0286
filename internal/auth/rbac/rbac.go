package rbac

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/quotad/quotad/internal/auth"
)

// Objects is every RBAC object the policy is built from. The objects are read-only: the
// Authorizer keeps references to their rules.
type Objects struct {
	Roles               []*rbacv1.Role
	ClusterRoles        []*rbacv1.ClusterRole
	RoleBindings        []*rbacv1.RoleBinding
	ClusterRoleBindings []*rbacv1.ClusterRoleBinding
}

// Authorizer implements auth.Authorizer and auth.RuleResolver over the last Objects given to
// Update. It is safe for concurrent use; the zero value is not, use New.
type Authorizer struct {
	policy atomic.Pointer[policy]
}

var (
	_ auth.Authorizer   = (*Authorizer)(nil)
	_ auth.RuleResolver = (*Authorizer)(nil)
)

// New returns an Authorizer with no roles or bindings: only system:masters is allowed.
func New() *Authorizer {
	a := &Authorizer{}
	a.policy.Store(build(Objects{}))
	return a
}

// Update replaces the policy with one built from objs.
func (a *Authorizer) Update(objs Objects) { a.policy.Store(build(objs)) }

// grant is one binding's role resolved: its rules, or the error resolving its role.
type grant struct {
	// order is the binding's place in the visiting order (cluster bindings first, each kind
	// in the order given to Update).
	order int
	rules []rbacv1.PolicyRule
	err   error
	// The binding, for the reason an allowed request is given: its name, namespace ("" for
	// a ClusterRoleBinding), role and subjects.
	name, namespace string
	roleRef         rbacv1.RoleRef
	subjects        []rbacv1.Subject
}

// reason is upstream's "RBAC: allowed by …" for a request of u the grant allowed: the
// binding, its role, and the first of its subjects that names u.
func (g *grant) reason(u *auth.User) string {
	var subject string
	for i := range g.subjects {
		if d, ok := appliesTo(&g.subjects[i], u, g.namespace); ok {
			subject = d
			break
		}
	}
	if g.namespace == "" {
		return fmt.Sprintf("RBAC: allowed by ClusterRoleBinding %q of %s %q to %s", g.name, g.roleRef.Kind, g.roleRef.Name, subject)
	}
	return fmt.Sprintf("RBAC: allowed by RoleBinding %q of %s %q to %s", g.name+"/"+g.namespace, g.roleRef.Kind, g.roleRef.Name, subject)
}

// appliesTo reports whether sub names u (as bySubject.add indexes it), and describes it as
// upstream does: Kind "name", a ServiceAccount as "name/namespace".
func appliesTo(sub *rbacv1.Subject, u *auth.User, bindingNamespace string) (string, bool) {
	switch sub.Kind {
	case rbacv1.UserKind:
		return fmt.Sprintf("%s %q", sub.Kind, sub.Name), u.Name == sub.Name
	case rbacv1.GroupKind:
		return fmt.Sprintf("%s %q", sub.Kind, sub.Name), u.InGroup(sub.Name)
	case rbacv1.ServiceAccountKind:
		ns := bindingNamespace
		if sub.Namespace != "" {
			ns = sub.Namespace
		}
		return fmt.Sprintf("%s %q", sub.Kind, sub.Name+"/"+ns), ns != "" && u.Name == auth.ServiceAccountPrefix+ns+":"+sub.Name
	}
	return "", false
}

// bySubject indexes the grants of a set of bindings by the users and groups they name.
type bySubject struct {
	users  map[string][]*grant
	groups map[string][]*grant
}

func (s *bySubject) add(g *grant, subjects []rbacv1.Subject, namespace string) {
	for _, sub := range subjects {
		switch sub.Kind {
		case rbacv1.UserKind:
			s.users[sub.Name] = appendOnce(s.users[sub.Name], g)
		case rbacv1.GroupKind:
			s.groups[sub.Name] = appendOnce(s.groups[sub.Name], g)
		case rbacv1.ServiceAccountKind:
			// 1. A RoleBinding's ServiceAccount subject defaults to the binding's namespace;
			// one without a namespace in a ClusterRoleBinding matches nobody.
			ns := namespace
			if sub.Namespace != "" {
				ns = sub.Namespace
			}
			if ns == "" {
				continue
			}
			name := auth.ServiceAccountPrefix + ns + ":" + sub.Name
			s.users[name] = appendOnce(s.users[name], g)
		}
	}
}

func appendOnce(gs []*grant, g *grant) []*grant {
	if n := len(gs); n > 0 && gs[n-1] == g {
		return gs
	}
	return append(gs, g)
}

// grantsOf appends the grants naming u or one of its groups to out.
func (s *bySubject) grantsOf(u *auth.User, out []*grant) []*grant {
	out = append(out, s.users[u.Name]...)
	for _, g := range u.Groups {
		out = append(out, s.groups[g]...)
	}
	return out
}

// policy is an immutable index of one set of Objects.
type policy struct {
	cluster    bySubject
	namespaces map[string]*bySubject
}

func newBySubject() *bySubject {
	return &bySubject{users: map[string][]*grant{}, groups: map[string][]*grant{}}
}

// build indexes objs.
func build(objs Objects) *policy {
	// 1. Roles by namespace and name, ClusterRoles by name.
	roles := map[[2]string][]rbacv1.PolicyRule{}
	for _, r := range objs.Roles {
		if r != nil {
			roles[[2]string{r.Namespace, r.Name}] = r.Rules
		}
	}
	clusterRoles := map[string][]rbacv1.PolicyRule{}
	for _, r := range objs.ClusterRoles {
		if r != nil {
			clusterRoles[r.Name] = r.Rules
		}
	}
	// 2. Each binding's role resolved once, as upstream's GetRoleReferenceRules does.
	resolve := func(ref rbacv1.RoleRef, namespace string, order int) *grant {
		g := &grant{order: order}
		switch ref.Kind {
		case "Role":
			rules, ok := roles[[2]string{namespace, ref.Name}]
			if !ok {
				g.err = apierrors.NewNotFound(rbacv1.Resource("role"), ref.Name)
			}
			g.rules = rules
		case "ClusterRole":
			rules, ok := clusterRoles[ref.Name]
			if !ok {
				g.err = apierrors.NewNotFound(rbacv1.Resource("clusterrole"), ref.Name)
			}
			g.rules = rules
		default:
			g.err = errors.New("unsupported role reference kind: \"" + ref.Kind + "\"")
		}
		return g
	}
	// 3. Grants indexed by subject: ClusterRoleBindings cluster-wide, RoleBindings by their
	// namespace.
	p := &policy{cluster: *newBySubject(), namespaces: map[string]*bySubject{}}
	order := 0
	for _, b := range objs.ClusterRoleBindings {
		if b == nil {
			continue
		}
		g := resolve(b.RoleRef, "", order)
		g.name, g.roleRef, g.subjects = b.Name, b.RoleRef, b.Subjects
		p.cluster.add(g, b.Subjects, "")
		order++
	}
	for _, b := range objs.RoleBindings {
		if b == nil || b.Namespace == "" {
			continue
		}
		ns := p.namespaces[b.Namespace]
		if ns == nil {
			ns = newBySubject()
			p.namespaces[b.Namespace] = ns
		}
		g := resolve(b.RoleRef, b.Namespace, order)
		g.name, g.namespace, g.roleRef, g.subjects = b.Name, b.Namespace, b.RoleRef, b.Subjects
		ns.add(g, b.Subjects, b.Namespace)
		order++
	}
	return p
}

// grants returns the grants that apply to u for a request in namespace ("" for cluster
// scope and non-resource URLs), each once, in visiting order.
func (p *policy) grants(u *auth.User, namespace string) []*grant {
	gs := p.cluster.grantsOf(u, make([]*grant, 0, 8))
	if namespace != "" {
		if ns := p.namespaces[namespace]; ns != nil {
			gs = ns.grantsOf(u, gs)
		}
	}
	slices.SortFunc(gs, func(a, b *grant) int { return a.order - b.order })
	return slices.CompactFunc(gs, func(a, b *grant) bool { return a == b })
}

// Authorize allows a request when the user is in system:masters or a rule bound to it
// allows the request, with upstream's reason naming the binding that allowed it; otherwise
// it has no opinion, with upstream's reason naming the roles that applied but could not be
// resolved.
func (a *Authorizer) Authorize(_ context.Context, attrs auth.Attributes) (auth.Decision, string, error) {
	if attrs.User.InGroup(auth.SystemMasters) {
		return auth.Allow, "", nil
	}
	ns := attrs.Namespace
	if !attrs.ResourceRequest {
		ns = ""
	}
	var errs []error
	for _, g := range a.policy.Load().grants(&attrs.User, ns) {
		if g.err != nil {
			errs = append(errs, g.err)
			continue
		}
		if auth.RulesAllow(g.rules, &attrs) {
			return auth.Allow, g.reason(&attrs.User), nil
		}
	}
	if len(errs) > 0 {
		return auth.NoOpinion, "RBAC: " + utilerrors.NewAggregate(errs).Error(), nil
	}
	return auth.NoOpinion, "", nil
}

// RulesFor returns the rules bound to u cluster-wide and, when namespace is set, in
// namespace; incomplete reports bindings whose role could not be resolved.
func (a *Authorizer) RulesFor(_ context.Context, u auth.User, namespace string) ([]rbacv1.PolicyRule, bool, error) {
	var rules []rbacv1.PolicyRule
	var errs []error
	for _, g := range a.policy.Load().grants(&u, namespace) {
		if g.err != nil {
			errs = append(errs, g.err)
			continue
		}
		rules = append(rules, g.rules...)
	}
	if len(errs) > 0 {
		return rules, true, utilerrors.NewAggregate(errs)
	}
	return rules, false, nil
}
