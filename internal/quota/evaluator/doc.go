// Package evaluator holds quotad's quota evaluators, one file per kind: pods, services,
// persistentvolumeclaims, and the generic object count used for every other namespaced
// resource (built-in or custom), plus the Registry that maps group-resources to them.
//
// Invariants: evaluators are stateless and do no IO; Usage is a pure function of the
// object (no clock), so the usage recomputed from storage always equals what admission
// charged. Objects are never modified. Built-in kinds arrive as typed k8s.io/api structs,
// custom resources as *unstructured.Unstructured (only object counts apply to them).
package evaluator
