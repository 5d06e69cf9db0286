// Package quota is the pure core of quotad's ResourceQuota system: resource-list algebra,
// resource-name classification, scopes and scope selectors, QoS, the evaluator interfaces,
// ResourceQuota validation, CheckRequest, which takes the quotas of a namespace and one
// request and returns the quotas with their status.used changed, or upstream's refusal,
// and CalculateUsage, which recomputes a quota from the objects of its namespace.
//
// Enforcement modes and thresholds (enforcement.go, findings.go) are read from each quota's
// annotations by Prepared.Check, once per Check and only for quotas that have annotations:
// Warn and Audit quotas admit what Enforce would refuse for "exceeded quota" or "must
// specify", and every quota reports the resources a write takes above its warn-at
// threshold. What they report is the Prepared's Findings of its last Check; delivering them
// (Warning headers, audit annotations, Events, metrics) is the registry's and the server's.
//
// Invariants:
//   - No IO, no clocks, no package-level mutable state. Usage is a pure function of an
//     object, so recomputing it from storage at any revision gives exactly what admission
//     charged (CalculateUsage and a sequence of CheckRequest calls agree).
//   - Inputs are read-only: every returned quota and resource list is a deep copy.
//   - Quotas are matched and enforced on status.hard, never spec.hard.
//   - Only Enforce quotas (the default) refuse for "exceeded quota" and "must specify"; the
//     accounting below is the same in every mode.
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
