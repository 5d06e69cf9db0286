// Package controller holds what quotad's in-process controllers share. Each controller
// lives in its own sub-package (namespace, crd, quotaverify, workloads,
// garbagecollector, etcdsnapshot…) and, unless it is a timer (etcdsnapshot), runs on a Loop:
//
//   - Loop.Watch: a watch of the registry that survives compaction and restarts
//     (re-listing), delivering every object to a Handler;
//   - Loop.Process: workers over a rate-limited work queue (NewQueue) of string keys;
//   - Throttle: the rate limiter of repeated identical failure log lines (first failure
//     logged, repeats counted and summarised at most once per interval), usable by any
//     component;
//   - As, On and Meta: checked access to objects of any kind, typed or unstructured.
//
// Invariants: controllers are level-triggered (every object is seen at start and after any
// watch restart), idempotent, and write only through the registry store, so every write is
// admitted and quota-accounted like a user's. No object can take the server down: a panic
// in a handler or a sync is recovered, logged once at Error with its stack, reported to
// the PanicObserver (quotad_controller_panics_total), and a panicking sync's key is
// retried with backoff. Failures already reported to users (Expected, such as a quota
// refusal recorded as an Event) log at Debug.
package controller
