package policy

import (
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/admission"
)

var namespacesResource = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// Request is what matching reads of an admission request: its attributes and the labels of
// its namespace (nil for a cluster-scoped request, or when the namespace is not found).
type Request struct {
	Attr *admission.Attributes
	// NamespaceLabels returns the labels of the request's namespace; it is called only
	// when a namespaceSelector must be checked.
	NamespaceLabels func() (map[string]string, error)
}

// Matches reports whether m selects the request, as upstream's matching.Matcher does:
// namespaceSelector, objectSelector, excludeResourceRules, then resourceRules (none means
// every resource). A nil m matches everything (a binding without matchResources).
// quotad serves each kind at one version, so matchPolicy Equivalent matches as Exact.
func Matches(m *admissionregistrationv1.MatchResources, r Request) (bool, error) {
	if m == nil {
		return true, nil
	}
	// 1. namespaceSelector: a cluster-scoped request other than for a namespace is never
	// exempted; a namespace request is judged on the namespace's own labels.
	if ok, err := matchNamespace(m.NamespaceSelector, r); !ok || err != nil {
		return false, err
	}
	// 2. objectSelector: the new object's or the old object's labels.
	if ok, err := matchObject(m.ObjectSelector, r.Attr); !ok || err != nil {
		return false, err
	}
	// 3. Exclusions, then rules.
	for _, rule := range m.ExcludeResourceRules {
		if ruleMatches(rule, r.Attr) {
			return false, nil
		}
	}
	if len(m.ResourceRules) == 0 {
		return true, nil
	}
	for _, rule := range m.ResourceRules {
		if ruleMatches(rule, r.Attr) {
			return true, nil
		}
	}
	return false, nil
}

func selectorOf(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(s)
}

func matchNamespace(s *metav1.LabelSelector, r Request) (bool, error) {
	a := r.Attr
	if a.Namespace == "" && a.Resource.Resource != "namespaces" {
		return true, nil
	}
	sel, err := selectorOf(s)
	if err != nil {
		return false, err
	}
	if sel.Empty() {
		return true, nil
	}
	if a.Resource == namespacesResource {
		// The namespace's own request: its new (or, on delete, old) labels.
		obj := a.Object
		if obj == nil {
			obj = a.OldObject
		}
		return sel.Matches(labels.Set(labelsOf(obj))), nil
	}
	if r.NamespaceLabels == nil {
		return false, nil
	}
	l, err := r.NamespaceLabels()
	if err != nil {
		return false, err
	}
	return sel.Matches(labels.Set(l)), nil
}

func matchObject(s *metav1.LabelSelector, a *admission.Attributes) (bool, error) {
	sel, err := selectorOf(s)
	if err != nil {
		return false, err
	}
	if sel.Empty() {
		return true, nil
	}
	for _, obj := range []runtime.Object{a.Object, a.OldObject} {
		if obj != nil && sel.Matches(labels.Set(labelsOf(obj))) {
			return true, nil
		}
	}
	return false, nil
}

func labelsOf(obj runtime.Object) map[string]string {
	if obj == nil {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	return m.GetLabels()
}

// ruleMatches is upstream's webhook rules.Matcher for one NamedRuleWithOperations.
func ruleMatches(rule admissionregistrationv1.NamedRuleWithOperations, a *admission.Attributes) bool {
	if len(rule.ResourceNames) > 0 && !contains(rule.ResourceNames, a.Name) {
		return false
	}
	ops := make([]string, len(rule.Operations))
	for i, op := range rule.Operations {
		ops[i] = string(op)
	}
	return matchesAny(ops, string(a.Operation)) &&
		matchesAny(rule.APIGroups, a.Resource.Group) &&
		matchesAny(rule.APIVersions, a.Resource.Version) &&
		resourceMatches(rule.Resources, a.Resource.Resource, a.Subresource) &&
		scopeMatches(rule.Scope, a)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func matchesAny(list []string, s string) bool {
	for _, x := range list {
		if x == "*" || x == s {
			return true
		}
	}
	return false
}

// resourceMatches: "pods" matches the main resource only, "pods/status" one subresource,
// "pods/*" the resource and all its subresources, "*" every main resource, "*/*" everything,
// "*/scale" the scale subresource of every resource.
func resourceMatches(rules []string, res, sub string) bool {
	for _, r := range rules {
		rr, rs, _ := strings.Cut(r, "/")
		if (rr == "*" || rr == res) && (rs == "*" || rs == sub) {
			return true
		}
	}
	return false
}

func scopeMatches(scope *admissionregistrationv1.ScopeType, a *admission.Attributes) bool {
	if scope == nil || *scope == admissionregistrationv1.AllScopes {
		return true
	}
	isNamespace := a.Resource == namespacesResource
	switch *scope {
	case admissionregistrationv1.NamespacedScope:
		return !isNamespace && a.Namespace != ""
	case admissionregistrationv1.ClusterScope:
		return isNamespace || a.Namespace == ""
	}
	return false
}
