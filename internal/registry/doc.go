// Package registry owns quotad's resource catalogue (which kinds are served, under which
// group, version, plural and short names, with which subresources, including custom resources
// once their CRD is Established; the create-only review kinds, which are never stored; the
// synthesized componentstatuses; versions served from another version's storage, such
// as events.k8s.io/v1 events, converted by package convert on every read and write; and
// the read-only AppliedClusterResourceQuota view, computed from cluster quotas)
// and the generic store every resource goes through: decode,
// defaults, mutating admission, validation, validating admission, and ONE storage transaction
// that writes the object together with every quota status change.
//
// What differs by kind is the kind's Strategy (strategy.go), one file per kind under
// kinds/<group>/, named by the kind's catalogue line; the store asks it for the optional
// steps (defaults, create and update preparation, subresource validation, warnings, field
// labels, table) and has no per-kind switch beyond the IO a strategy cannot do (Service
// allocations, quota status, namespace finalization).
//
// The store composes packages that know nothing of it: commit (the commit engine: group
// commit with every quota charge, cluster quotas, quota status), codec (request bodies and
// stored forms, seeing a Resource as a codec.Kind), selector (label and field selectors; a
// Resource gives an object's field labels), graceful (graceful deletion's decisions),
// watchhub (one storage watch per resource fanned out to its watchers) and fieldindex (the
// keys of a resource's objects by one field's value, with their labels, for lists that
// select one value or have a label selector).
//
// Invariants:
//   - Objects handed out by the store are fresh decodes; callers may change them.
//   - Every write in a namespace bumps the usage epoch of each group-resource it writes in
//     that namespace (under EpochKey(ns)) in the same transaction, or puts one of the
//     namespace's ResourceQuotas (recomputations guard on both), and is guarded by "no
//     ResourceQuota of the namespace changed since the revision its quotas were read at",
//     so quota status can never drift from storage.
//   - The same holds for the ClusterResourceQuotas selecting the namespace (commit/clusterquota.go):
//     each is charged in the write's transaction, guarded by its revision (or the value a
//     joined transaction planned on) and by the cluster-quota-set key; a namespace's move
//     into or out of a cluster quota and a cluster quota's own writes recompute what they
//     change at one revision, guarded by the usage epochs they counted. A cluster quota is
//     one key; its entries are stored without their hard when it is spec.quota.hard's text
//     and every decode puts it back (codec/clusterquota.go), so readers see OpenShift's shape.
//   - Every write that raises usage, through any subresource, is checked against hard in
//     the transaction that commits it; a write that changes nothing writes nothing.
//   - Quota findings (quota.Prepared.Findings of the check a write's commit or refusal was
//     planned on) are delivered once the write is settled, in the writer's goroutine
//     (commit.Engine.deliverFindings): Warning headers for Warn-mode quotas and crossed thresholds, the
//     audit annotation quota.AuditAnnotation for Audit-mode quotas, then
//     Config.QuotaFindings (metrics, Events). A dry run gets the same warnings.
//   - A list or watch selects exactly the objects a whole decode would select: selectors
//     are evaluated on a copy of each stored object pruned to the paths they read
//     (selection.go; every kind's field labels held to it by TestSelectionReadsWhatFieldsRead).
//   - A list read through a field index (fieldindexes.go) is read at a revision at least the
//     one a list of every object would be read at, and tests every object it reads against
//     its whole selector; it reads every object instead whenever the index cannot give that.
//   - Errors leaving the package are *apierrors.StatusError values with upstream's texts.
package registry
