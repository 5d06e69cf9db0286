// Package limitranger is quotad's LimitRanger admission plugin: it enforces the LimitRange
// objects of a namespace on pods (types Container and Pod) and PersistentVolumeClaims (type
// PersistentVolumeClaim).
//
// Invariants:
//   - Admit (mutating phase, before Priority and before quota is charged) only applies the
//     Container defaults (default → limits, defaultRequest → requests) to containers and
//     init containers that lack them, and records what it set in the
//     kubernetes.io/limit-ranger annotation. Validate (validating phase) only checks min,
//     max and maxLimitRequestRatio and never changes the object.
//   - Pods are checked on CREATE and on UPDATE of the resize subresource; PVCs on CREATE
//     and UPDATE; no other subresource. An update of an object already being deleted is
//     never checked.
//   - LimitRanges are applied in the order the Reader lists them; the first one a request
//     violates refuses it with a 403 listing all of that LimitRange's violations, in
//     upstream's text and aggregate format. Within one LimitRange the violations are in
//     spec order, per container, then min, max, ratio, each by resource name (upstream walks
//     maps there, so its order varies; quotad's is stable).
package limitranger
