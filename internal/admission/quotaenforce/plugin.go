package quotaenforce

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/quota"
)

// Plugin is the ResourceQuota admission plugin. It is not run by the admission chain: the
// registry calls Prepare when a write is submitted, and the result's Check when the write's
// namespace batch plans its transaction, against the quotas as that batch holds them (read
// at a revision, plus the usage of the batch's earlier writes). The transaction's compares
// on those quotas make the decision hold at commit; a failed compare plans the batch again.
type Plugin struct {
	registry quota.Registry
	limited  []quota.LimitedResource
}

var _ admission.Handler = (*Plugin)(nil)

// NewPlugin returns the plugin with the evaluators of reg and the configured limited
// resources (from LoadConfigFile; nil for none).
func NewPlugin(reg quota.Registry, limited []quota.LimitedResource) *Plugin {
	return &Plugin{registry: reg, limited: limited}
}

// Name returns "ResourceQuota".
func (p *Plugin) Name() string {
	return PluginName
}

// Handles reports true for CREATE, UPDATE and DELETE: unlike upstream, quotad credits
// usage in admission, so deletes are evaluated too.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update || op == admission.Delete
}

// Evaluate checks one request against quotas, the quotas of the request's namespace in
// a stable order, and returns the quotas whose status.used changes (copies that share all
// but status.used with quotas, which is not modified), or the refusal (see
// quota.CheckRequest). Cluster-scoped requests (empty namespace) touch no quota. For
// dry-run requests the result is computed exactly and the caller does not commit it.
func (p *Plugin) Evaluate(attrs *admission.Attributes, quotas []corev1.ResourceQuota) ([]corev1.ResourceQuota, error) {
	prepared, err := p.Prepare(attrs)
	if err != nil {
		return nil, err
	}
	return prepared.Check(quotas)
}

// Limits reports whether the configuration limits anything (limitedResources): without it,
// a namespace with no quota admits every request unchanged.
func (p *Plugin) Limits() bool { return len(p.limited) > 0 }

// Prepare is the part of Evaluate that does not depend on the quotas (see quota.Prepare),
// so that a writer can do it before its namespace's batch evaluates it. A nil result
// (with a nil error) is a request no quota governs.
func (p *Plugin) Prepare(attrs *admission.Attributes) (*quota.Prepared, error) {
	if attrs.Namespace == "" {
		return nil, nil
	}
	return quota.Prepare(quota.Request{
		Operation:   quota.Operation(attrs.Operation),
		Resource:    attrs.Resource.GroupResource(),
		Subresource: attrs.Subresource,
		Name:        attrs.Name,
		Object:      attrs.Object,
		OldObject:   attrs.OldObject,
	}, p.registry, p.limited)
}
