// Package registry owns quotad's resource catalogue (which kinds are served, under which
// group, version, plural and short names, with which subresources, including custom resources
// once their CRD is Established; the create-only review kinds, which are never stored; the
// synthesized componentstatuses; and versions served from another version's storage, such
// as events.k8s.io/v1 events, converted by package convert on every read and write)
// and the generic store every resource goes through: decode,
// defaults, mutating admission, validation, validating admission, and ONE storage transaction
// that writes the object together with every quota status change.
//
// Invariants:
//   - Objects handed out by the store are fresh decodes; callers may change them.
//   - Every write in a namespace bumps that namespace's usage epoch key in the same
//     transaction, and is guarded by "no ResourceQuota of the namespace changed since the
//     revision its quotas were read at", so quota status can never drift from storage.
//   - Every write that raises usage, through any subresource, is checked against hard in
//     the transaction that commits it; a write that changes nothing writes nothing.
//   - Errors leaving the package are *apierrors.StatusError values with upstream's texts.
package registry
