// Package storagetest is the conformance suite every storage.Store implementation must
// pass: reads (get, list, pagination, revision reads), watches (order, one batch per
// revision, compaction, cancellation), guarded transactions (create-if-absent,
// update-if-unchanged, range guards, deletes, all-or-nothing, size limits), revision
// monotonicity and concurrent guarded updates.
//
// Invariants:
//   - Each run works under its own random key prefix, so one store (one etcd) may serve
//     many runs and subtests; the suite never relies on absolute revisions.
//   - Subtests run one after another: the compaction case would otherwise break revision
//     reads of its neighbours.
//   - No sleeps: every wait is a channel receive bounded by a generous failure timeout.
package storagetest
