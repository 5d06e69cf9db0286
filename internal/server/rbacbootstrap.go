package server

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/admission/rbacescalation"
	"github.com/quotad/quotad/internal/controller/clusterroleaggregation"
	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/quota/fit"
	"github.com/quotad/quotad/internal/registry"
)

// Labels and annotations upstream's bootstrap policy puts on the default roles.
const (
	autoUpdateAnnotation = "rbac.authorization.kubernetes.io/autoupdate"
	bootstrapLabel       = "kubernetes.io/bootstrapping"
	aggregateToView      = "rbac.authorization.k8s.io/aggregate-to-view"
)

var readVerbs = []string{"get", "list", "watch"}

func rule(verbs []string, group string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: []string{group}, Resources: resources}
}

func defaultRole(name string, labels map[string]string, rules ...rbacv1.PolicyRule) rbacv1.ClusterRole {
	l := map[string]string{bootstrapLabel: "rbac-defaults"}
	for k, v := range labels {
		l[k] = v
	}
	return rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l, Annotations: map[string]string{autoUpdateAnnotation: "true"}},
		Rules:      rules,
	}
}

// DefaultClusterRoles are upstream's bootstrap ClusterRoles of v1.37.2, rule for rule
// (upstreamClusterRoles, checked against upstream's testdata), and quotad's own: what its
// own APIs add to the aggregated admin, edit and view roles.
func DefaultClusterRoles() []rbacv1.ClusterRole {
	return append(upstreamClusterRoles(),
		// As OpenShift's admin, edit and view: a tenant reads the cluster quotas that bind its
		// namespace through the applied view, never the cluster quotas themselves; and a
		// tenant who reads its quotas may ask what fits them (quotad's what-if review).
		defaultRole("quotad:aggregate-to-view", map[string]string{aggregateToView: "true"},
			rule(readVerbs, clusterquota.GroupName, "appliedclusterresourcequotas"),
			rule([]string{"create"}, fit.GroupName, "quotareviews")),
	)
}

func groupSubject(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: name}
}

func defaultBinding(role string, subjects ...rbacv1.Subject) rbacv1.ClusterRoleBinding {
	return rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role, Labels: map[string]string{bootstrapLabel: "rbac-defaults"},
			Annotations: map[string]string{autoUpdateAnnotation: "true"}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects: subjects,
	}
}

// DefaultClusterRoleBindings are upstream's bootstrap ClusterRoleBindings of v1.37.2.
func DefaultClusterRoleBindings() []rbacv1.ClusterRoleBinding { return upstreamClusterRoleBindings() }

// reconcileRBAC brings the default roles and bindings to upstream's bootstrap policy, as
// kube-apiserver's storage_rbac post-start hook does with reconciliation that never removes:
// missing objects are created; existing ones not annotated autoupdate=false get the
// missing labels, annotations, rules (not for aggregated roles, whose rules the aggregation
// controller computes), aggregation selectors and subjects; a binding whose roleRef differs
// is deleted and created again. Then the aggregated roles (admin, edit, view) are computed
// before the server serves, so a tenant bound to admin holds its rules from the first request.
func reconcileRBAC(ctx context.Context, store *registry.Store, log *slog.Logger) error {
	cat := store.Catalogue()
	roles := cat.Get(rbacv1.SchemeGroupVersion.WithResource("clusterroles"))
	bindings := cat.Get(rbacv1.SchemeGroupVersion.WithResource("clusterrolebindings"))
	for _, want := range DefaultClusterRoles() {
		if err := reconcileOne(ctx, store, roles, &want, func(cur runtime.Object) (runtime.Object, bool) {
			have := cur.(*rbacv1.ClusterRole)
			changed := mergeMeta(&have.ObjectMeta, &want.ObjectMeta)
			if want.AggregationRule != nil {
				if have.AggregationRule == nil {
					have.AggregationRule = &rbacv1.AggregationRule{}
				}
				for _, s := range want.AggregationRule.ClusterRoleSelectors {
					if !slices.ContainsFunc(have.AggregationRule.ClusterRoleSelectors, func(h metav1.LabelSelector) bool { return equality.Semantic.DeepEqual(h, s) }) {
						have.AggregationRule.ClusterRoleSelectors = append(have.AggregationRule.ClusterRoleSelectors, s)
						changed = true
					}
				}
				return have, changed
			}
			// As upstream's reconciliation, the missing rules are added broken down (one
			// group, resource and verb each).
			if ok, missing := rbacescalation.Covers(have.Rules, want.Rules); !ok {
				have.Rules = append(have.Rules, missing...)
				changed = true
			}
			return have, changed
		}); err != nil {
			return fmt.Errorf("clusterrole %s: %w", want.Name, err)
		}
	}
	for _, want := range append(DefaultClusterRoleBindings(), joinClusterRoleBindings()...) {
		if err := reconcileOne(ctx, store, bindings, &want, func(cur runtime.Object) (runtime.Object, bool) {
			have := cur.(*rbacv1.ClusterRoleBinding)
			changed := mergeMeta(&have.ObjectMeta, &want.ObjectMeta)
			for _, s := range want.Subjects {
				if !slices.Contains(have.Subjects, s) {
					have.Subjects = append(have.Subjects, s)
					changed = true
				}
			}
			return have, changed
		}); err != nil {
			return fmt.Errorf("clusterrolebinding %s: %w", want.Name, err)
		}
	}
	for _, want := range upstreamRoles() {
		if err := reconcileOne(ctx, store, cat.Get(rbacv1.SchemeGroupVersion.WithResource("roles")), &want, func(cur runtime.Object) (runtime.Object, bool) {
			have := cur.(*rbacv1.Role)
			changed := mergeMeta(&have.ObjectMeta, &want.ObjectMeta)
			if ok, missing := rbacescalation.Covers(have.Rules, want.Rules); !ok {
				have.Rules = append(have.Rules, missing...)
				changed = true
			}
			return have, changed
		}); err != nil {
			return fmt.Errorf("role %s/%s: %w", want.Namespace, want.Name, err)
		}
	}
	for _, want := range upstreamRoleBindings() {
		if err := reconcileOne(ctx, store, cat.Get(rbacv1.SchemeGroupVersion.WithResource("rolebindings")), &want, func(cur runtime.Object) (runtime.Object, bool) {
			have := cur.(*rbacv1.RoleBinding)
			changed := mergeMeta(&have.ObjectMeta, &want.ObjectMeta)
			for _, s := range want.Subjects {
				if !slices.Contains(have.Subjects, s) {
					have.Subjects = append(have.Subjects, s)
					changed = true
				}
			}
			return have, changed
		}); err != nil {
			return fmt.Errorf("rolebinding %s/%s: %w", want.Namespace, want.Name, err)
		}
	}
	if err := clusterroleaggregation.New(store, log, nil).SyncAll(ctx); err != nil {
		return fmt.Errorf("aggregating clusterroles: %w", err)
	}
	return nil
}

// reconcileOne creates want or updates the stored object with merge, unless it is annotated
// autoupdate=false. A binding whose roleRef changed is replaced.
func reconcileOne(ctx context.Context, store *registry.Store, res *registry.Resource, want metav1.Object, merge func(cur runtime.Object) (runtime.Object, bool)) error {
	obj := want.(runtime.Object)
	ns := want.GetNamespace()
	for attempt := 0; attempt < 8; attempt++ {
		cur, err := store.Get(ctx, res, ns, want.GetName())
		if apierrors.IsNotFound(err) {
			_, err = store.Create(ctx, res, ns, obj.DeepCopyObject(), registry.WriteOptions{})
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			return err
		}
		if err != nil {
			return err
		}
		m, _ := cur.(metav1.Object)
		if m == nil || m.GetAnnotations()[autoUpdateAnnotation] == "false" {
			return nil
		}
		if roleRefChanged(cur, obj) {
			uid := m.GetUID()
			if _, err := store.Delete(ctx, res, ns, want.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}, registry.WriteOptions{}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return err
			}
			continue
		}
		if _, changed := merge(cur.DeepCopyObject()); !changed {
			return nil
		}
		_, err = store.Update(ctx, res, ns, want.GetName(), "", func(c runtime.Object) (runtime.Object, error) {
			if m, ok := c.(metav1.Object); ok && m.GetAnnotations()[autoUpdateAnnotation] == "false" {
				return c, nil
			}
			out, _ := merge(c)
			return out, nil
		}, registry.WriteOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		return err
	}
	return fmt.Errorf("too many concurrent changes")
}

// roleRefChanged reports a stored binding whose roleRef is not want's (a roleRef cannot be
// updated: the binding is replaced).
func roleRefChanged(cur, want runtime.Object) bool {
	switch have := cur.(type) {
	case *rbacv1.ClusterRoleBinding:
		return have.RoleRef != want.(*rbacv1.ClusterRoleBinding).RoleRef
	case *rbacv1.RoleBinding:
		return have.RoleRef != want.(*rbacv1.RoleBinding).RoleRef
	}
	return false
}

// mergeMeta adds want's labels and annotations missing from have.
func mergeMeta(have, want *metav1.ObjectMeta) bool {
	changed := false
	for k, v := range want.Labels {
		if _, ok := have.Labels[k]; !ok {
			if have.Labels == nil {
				have.Labels = map[string]string{}
			}
			have.Labels[k] = v
			changed = true
		}
	}
	for k, v := range want.Annotations {
		if _, ok := have.Annotations[k]; !ok {
			if have.Annotations == nil {
				have.Annotations = map[string]string{}
			}
			have.Annotations[k] = v
			changed = true
		}
	}
	return changed
}

// rbacAdmission runs the admission chain, then escalation prevention for RBAC writes.
type rbacAdmission struct {
	registry.Admission
	escalation *rbacescalation.Checker
}

func (a rbacAdmission) Validate(ctx context.Context, attrs *admission.Attributes) error {
	if err := a.Admission.Validate(ctx, attrs); err != nil {
		return err
	}
	return a.escalation.Validate(ctx, attrs)
}
