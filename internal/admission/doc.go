// Package admission owns the admission chain of quotad: the request attributes every plugin
// sees, the plugin interfaces (mutating, then validating), and the chain that runs them in
// kube-apiserver's order. One folder per plugin lives beneath it (namespacelifecycle,
// limitranger, priority, runtimeclass, defaultingressclass, quotaenforce (ResourceQuota); policy holds both
// admission policy plugins, MutatingAdmissionPolicy and ValidatingAdmissionPolicy). Warn
// gives the request's client a warning (a Warning header) and AuditAnnotate adds an
// annotation to the request's audit event, both through the request context.
//
// Invariants:
//   - Plugins never write to storage. Mutating plugins change Attributes.Object in place;
//     validating plugins only accept or refuse. The ResourceQuota plugin returns the quota
//     status changes, which the registry commits in the same transaction as the object.
//   - Refusals are *apierrors.StatusError values built with upstream's constructors, so the
//     HTTP edge serializes them unchanged.
package admission
