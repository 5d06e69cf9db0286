// Package storage owns quotad's persistence: a small key/value interface over etcd v3
// (get, list, watch and one guarded transaction), its etcd implementation, the embedded
// etcd (a single member, or a member of a cluster others join: cluster.go), its snapshots
// (SaveSnapshot with etcd's client snapshot, RestoreSnapshot with etcdutl's restore into the
// member the embedded etcd starts from: same name, peer URL and cluster token), and a
// conformance suite every implementation must pass.
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
//     certificate in its data dir's etcd-pki; its directories are 0700 and its keys 0600. A
//     single member's CA key is discarded and it has no peer listener. A cluster member
//     keeps the CA key (shared by all members, to sign a member's own certificates), and
//     its peer listener requires a certificate of that CA too.
//   - A cluster member serves quotad only as a voting member: a joiner is added as a
//     learner, and StartEmbedded returns once the leader has promoted it. Until then (or
//     until a restarted member reaches a quorum of its cluster) it logs every
//     ClusterConfig.WaitLogInterval what it waits for, and a cancelled start returns at once,
//     the member stopped and the data dir released.
//   - Every watch has its own etcd watch stream, so cancelling watches never sends cancel
//     requests on a stream shared with live ones (which deadlocks the in-process client).
//   - Lists keep at most about ListPageOutBytes (16 MiB) of an embedded member's mapped
//     database resident once it is larger than ResidentDatabaseBytes (128 MiB in use;
//     smaller, it stays resident): each time its stores' lists have returned that much, the
//     list that crossed the mark pages the mapping out (MADV_PAGEOUT, which discards no
//     data) before going on.
//   - Snapshot files are written 0600, never half (a .part file renamed when complete); a
//     restore never writes into a data dir that already holds etcd data.
package storage
