// Package quota is the pure core of quotad's ResourceQuota system: resource-list algebra,
// scopes and scope selectors, QoS, the evaluator interface, ResourceQuota validation, and
// CheckRequest, which takes the quotas of a namespace and one request and returns the quotas
// with their status.used changed, or upstream's refusal.
//
// Invariants: no IO, no clocks, no package-level state. Usage is a pure function of an object,
// so recomputing it from storage at any revision gives exactly what admission charged.
package quota
