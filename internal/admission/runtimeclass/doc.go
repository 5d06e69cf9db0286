// Package runtimeclass is quotad's RuntimeClass admission plugin, upstream's
// plugin/pkg/admission/runtimeclass. In the mutating phase a new pod naming a
// spec.runtimeClassName gets the class's overhead.podFixed as spec.overhead and the class's
// scheduling nodeSelector and tolerations merged into its own; in the validating phase a
// new pod's spec.overhead must equal its class's overhead, and a pod without a class
// overhead may not carry one. Quota then counts the overhead in the pod's requests and
// limits (internal/quota/evaluator adds spec.overhead).
//
// Invariants:
//   - Only pod creates are handled; subresources are ignored.
//   - Refusals are 403s with upstream's texts ("pod rejected: RuntimeClass "x" not found",
//     the overhead mismatch, a nodeSelector conflict); storage failures are returned as
//     plain errors.
//   - The stored RuntimeClass is read-only: what the pod gets is copied.
package runtimeclass
