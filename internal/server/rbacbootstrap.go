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
	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/controller/clusterroleaggregation"
	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/quota/fit"
	"github.com/quotad/quotad/internal/registry"
)

// Labels and annotations upstream's bootstrap policy puts on the default roles.
const (
	autoUpdateAnnotation = "rbac.authorization.kubernetes.io/autoupdate"
	bootstrapLabel       = "kubernetes.io/bootstrapping"
	aggregateToAdmin     = "rbac.authorization.k8s.io/aggregate-to-admin"
	aggregateToEdit      = "rbac.authorization.k8s.io/aggregate-to-edit"
	aggregateToView      = "rbac.authorization.k8s.io/aggregate-to-view"
	// monitoringGroup is the group upstream binds system:monitoring to.
	monitoringGroup = "system:monitoring"
)

var (
	readVerbs  = []string{"get", "list", "watch"}
	writeVerbs = []string{"create", "delete", "deletecollection", "patch", "update"}
	rwVerbs    = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
)

func rule(verbs []string, group string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: []string{group}, Resources: resources}
}

func urlRule(verbs []string, urls ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, NonResourceURLs: urls}
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

func aggregated(name, selectorLabel string, labels map[string]string) rbacv1.ClusterRole {
	r := defaultRole(name, labels)
	r.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{selectorLabel: "true"}}}}
	return r
}

// DefaultClusterRoles are the ClusterRoles upstream bootstraps (plugin/pkg/auth/authorizer/
// rbac/bootstrappolicy): the user-facing ones with their rules restricted to the API groups
// quotad serves or will serve (core, apps, batch, autoscaling, rbac and the review APIs; as
// upstream, admin and edit may read ResourceQuotas but not change them), and the ones of
// nodes and the control plane's components exactly as upstream's (nodeClusterRoles).
func DefaultClusterRoles() []rbacv1.ClusterRole {
	const core, apps, batch, autoscaling = "", "apps", "batch", "autoscaling"
	return append([]rbacv1.ClusterRole{
		defaultRole("cluster-admin", nil,
			rule([]string{"*"}, "*", "*"),
			urlRule([]string{"*"}, "*")),
		aggregated("admin", aggregateToAdmin, nil),
		aggregated("edit", aggregateToEdit, map[string]string{aggregateToAdmin: "true"}),
		aggregated("view", aggregateToView, map[string]string{aggregateToEdit: "true"}),
		defaultRole("system:aggregate-to-admin", map[string]string{aggregateToAdmin: "true"},
			rule([]string{"create"}, "authorization.k8s.io", "localsubjectaccessreviews"),
			rule(rwVerbs, rbacv1.GroupName, "rolebindings", "roles")),
		defaultRole("system:aggregate-to-edit", map[string]string{aggregateToEdit: "true"},
			rule(readVerbs, core, "secrets"),
			rule([]string{"impersonate"}, core, "serviceaccounts"),
			rule(writeVerbs, core, "pods"),
			rule([]string{"create"}, core, "pods/eviction"),
			rule(writeVerbs, core, "configmaps", "events", "persistentvolumeclaims", "replicationcontrollers", "replicationcontrollers/scale", "secrets", "serviceaccounts", "services"),
			rule([]string{"create"}, core, "serviceaccounts/token"),
			rule(writeVerbs, apps, "daemonsets", "deployments", "deployments/rollback", "deployments/scale", "replicasets", "replicasets/scale", "statefulsets", "statefulsets/scale"),
			rule(writeVerbs, autoscaling, "horizontalpodautoscalers"),
			rule(writeVerbs, batch, "cronjobs", "jobs"),
			rule(writeVerbs, "networking.k8s.io", "networkpolicies", "ingresses"),
			rule(writeVerbs, "resource.k8s.io", "resourceclaims", "resourceclaimtemplates")),
		defaultRole("system:aggregate-to-view", map[string]string{aggregateToView: "true"},
			rule(readVerbs, core, "configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services", "services/status"),
			rule(readVerbs, core, "bindings", "events", "limitranges", "namespaces/status", "pods/log", "pods/status", "replicationcontrollers/status", "resourcequotas", "resourcequotas/status"),
			rule(readVerbs, core, "namespaces"),
			rule(readVerbs, apps, "controllerrevisions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status", "replicasets", "replicasets/scale", "replicasets/status", "statefulsets", "statefulsets/scale", "statefulsets/status"),
			rule(readVerbs, autoscaling, "horizontalpodautoscalers", "horizontalpodautoscalers/status"),
			rule(readVerbs, batch, "cronjobs", "cronjobs/status", "jobs", "jobs/status"),
			rule(readVerbs, "networking.k8s.io", "networkpolicies", "ingresses", "ingresses/status"),
			// As OpenShift's admin, edit and view: a tenant reads the cluster quotas that bind
			// its namespace through the applied view, never the cluster quotas themselves.
			rule(readVerbs, clusterquota.GroupName, "appliedclusterresourcequotas"),
			rule(readVerbs, "resource.k8s.io", "resourceclaims", "resourceclaims/status", "resourceclaimtemplates"),
			// quotad's what-if review: a tenant who reads its quotas may ask what fits them.
			rule([]string{"create"}, fit.GroupName, "quotareviews")),
		defaultRole("system:basic-user", nil,
			rule([]string{"create"}, "authorization.k8s.io", "selfsubjectaccessreviews", "selfsubjectrulesreviews"),
			rule([]string{"create"}, "authentication.k8s.io", "selfsubjectreviews")),
		defaultRole("system:discovery", nil,
			urlRule([]string{"get"}, "/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/")),
		defaultRole("system:monitoring", nil,
			urlRule([]string{"get"}, "/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics", "/metrics/slis", "/readyz", "/readyz/*")),
		defaultRole("system:public-info-viewer", nil,
			urlRule([]string{"get"}, "/healthz", "/livez", "/readyz", "/version", "/version/")),
	}, nodeClusterRoles()...)
}

func groupSubject(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: name}
}

func userSubject(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}
}

func serviceAccountSubject(namespace, name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}
}

func defaultBinding(role string, subjects ...rbacv1.Subject) rbacv1.ClusterRoleBinding {
	return rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role, Labels: map[string]string{bootstrapLabel: "rbac-defaults"},
			Annotations: map[string]string{autoUpdateAnnotation: "true"}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects: subjects,
	}
}

// DefaultClusterRoleBindings are upstream's bindings of the default roles.
func DefaultClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	return append([]rbacv1.ClusterRoleBinding{
		defaultBinding("cluster-admin", groupSubject(auth.SystemMasters)),
		defaultBinding("system:basic-user", groupSubject(auth.AllAuthenticated)),
		defaultBinding("system:discovery", groupSubject(auth.AllAuthenticated)),
		defaultBinding("system:monitoring", groupSubject(monitoringGroup)),
		defaultBinding("system:public-info-viewer", groupSubject(auth.AllAuthenticated), groupSubject(auth.AllUnauthenticated)),
	}, nodeClusterRoleBindings()...)
}

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
	if err := clusterroleaggregation.New(store, log, nil).SyncAll(ctx); err != nil {
		return fmt.Errorf("aggregating clusterroles: %w", err)
	}
	return nil
}

// reconcileOne creates want or updates the stored object with merge, unless it is annotated
// autoupdate=false. A binding whose roleRef changed is replaced.
func reconcileOne(ctx context.Context, store *registry.Store, res *registry.Resource, want metav1.Object, merge func(cur runtime.Object) (runtime.Object, bool)) error {
	obj := want.(runtime.Object)
	for attempt := 0; attempt < 8; attempt++ {
		cur, err := store.Get(ctx, res, "", want.GetName())
		if apierrors.IsNotFound(err) {
			_, err = store.Create(ctx, res, "", obj.DeepCopyObject(), registry.WriteOptions{})
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
		if have, ok := cur.(*rbacv1.ClusterRoleBinding); ok && have.RoleRef != obj.(*rbacv1.ClusterRoleBinding).RoleRef {
			if _, err := store.Delete(ctx, res, "", want.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &have.UID}}, registry.WriteOptions{}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return err
			}
			continue
		}
		if _, changed := merge(cur.DeepCopyObject()); !changed {
			return nil
		}
		_, err = store.Update(ctx, res, "", want.GetName(), "", func(c runtime.Object) (runtime.Object, error) {
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
