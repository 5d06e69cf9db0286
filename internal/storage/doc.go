// Package storage owns quotad's persistence: a small key/value interface over etcd v3
// (get, list, watch and one guarded transaction), its etcd implementation, the embedded
// single-member etcd, and a conformance suite every implementation must pass.
//
// Invariants:
//   - Every value is the JSON of one API object; every key follows kube-apiserver's layout
//     (/registry/<resource>/<namespace>/<name>, /registry/<group>/<resource>/... otherwise).
//   - A revision is an etcd revision; an object's resourceVersion is its key's mod revision.
//   - Txn is all-or-nothing: either every compare holds and every op commits at one revision,
//     or nothing changes and ErrConflict is returned.
//   - Errors are typed (ErrNotFound, ErrConflict, ErrCompacted, ErrTooLarge); callers use errors.Is.
//   - A list at a revision the cluster has committed never fails with ErrFutureRevision,
//     even when serializable and served by a member of an external cluster that lags the
//     one the revision was read from: it is read again linearizably.
//   - The embedded etcd is reachable only in process and by clients presenting the client
//     certificate in its data dir's etcd-pki (signed by a CA whose key is discarded); its
//     directories are 0700 and its keys 0600.
package storage
