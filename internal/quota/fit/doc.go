// Package fit answers "will this fit?": the quotad.io QuotaReview API types
// (quota.quotad.io/v1, a create-only review resource like SubjectAccessReview), and the
// pure computation behind QuotaReview, the workload warnings of admission and
// `kubectl quota fit`: given a namespace's quotas (ResourceQuotas and the views of the
// cluster quotas selecting it), an object and a replica count, it reports for every quota
// that matches used, requested, hard and remaining per resource, whether the object is
// admitted, and how many replicas fit.
//
// Invariants:
//   - No IO, no clocks, no package-level mutable state (as package quota).
//   - The decision on the object itself is quota.CheckRequest's, so a review answers
//     exactly what admission would, and nothing is charged.
//   - Quantities are combined through package quantity, bounded as quota's.
package fit

//go:generate go run k8s.io/code-generator/cmd/deepcopy-gen@v0.37.0 --output-file zz_generated.deepcopy.go .
