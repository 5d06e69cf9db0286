// Package quota is the pure core of quotad's ResourceQuota system: resource-list algebra,
// resource-name classification, scopes and scope selectors, QoS, the evaluator interfaces,
// ResourceQuota validation, CheckRequest, which takes the quotas of a namespace and one
// request and returns the quotas with their status.used changed, or upstream's refusal,
// and CalculateUsage, which recomputes a quota from the objects of its namespace.
//
// Invariants:
//   - No IO, no clocks, no package-level mutable state. Usage is a pure function of an
//     object, so recomputing it from storage at any revision gives exactly what admission
//     charged (CalculateUsage and a sequence of CheckRequest calls agree).
//   - Inputs are read-only: every returned quota and resource list is a deep copy.
//   - Quotas are matched and enforced on status.hard, never spec.hard.
//   - Accounting is exact: for every quota, the new used is used minus usage(old) when the
//     quota matched the old object, plus usage(new) when it matches the new object, masked
//     to status.hard. Only increases are checked against status.hard; a request that only
//     lowers usage is never refused.
//   - Quantities are compared and combined through package quantity, never by Quantity's
//     own Cmp/Add/Sub: a value stored before quantities were bounded (hard: 1e1000000000)
//     costs what a normal one does. Validation refuses values beyond quantity.Bound before
//     any other check of them.
//   - User-visible texts (field errors, refusals, warnings) are upstream's, byte for byte;
//     they are pinned by the golden files under testdata/.
//   - quota does not import the admission package (imports point admission → quota ←
//     evaluator); the evaluators live in internal/quota/evaluator.
package quota
