// Package controller holds what quotad's in-process controllers share: a watch loop over the
// registry that survives compaction and restarts, and a rate-limited work queue. Each
// controller lives in its own sub-package (namespace, crd, resourcequota, workloads,
// garbagecollector).
//
// Invariants: controllers are level-triggered (every object is seen at start and after any
// watch restart), idempotent, and write only through the registry store, so every write is
// admitted and quota-accounted like a user's.
package controller
