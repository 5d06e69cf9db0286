// Package commit is quotad's commit engine: every write reaches storage through it, with
// its quota charges and credits in the same etcd transaction (design.md §2, §3).
//
//   - Group commit (engine.go): the writes waiting on a namespace are evaluated in arrival
//     order against its quotas and committed in one guarded transaction; batches are
//     pipelined on the quota state the previous one leaves; transactions of different
//     namespaces share etcd requests (combine.go).
//   - Turns (turn.go): replicas sharing an etcd group-commit a namespace each on its own,
//     and the one whose batches keep committing would starve the others' retries. A
//     replica whose writes failed their guards twice claims the namespace's turn, a key
//     every transaction of the namespace guards as read (absent, or the claimant's, which
//     its commit deletes); the other replicas wait for the key to go (a watch, or its expiry
//     on their own clock) instead of retrying, and the claimant releases it on every exit.
//   - Planning (plan.go) is a function of data without IO: quota state and writes in, the
//     transaction, the next state and each write's result out. It is tested on an
//     in-memory model of etcd's transactions, with a property test whose oracle is
//     quota.CheckRequest (I1 and I2 after any sequence of writes, edits and failures).
//   - Cluster quotas (clusterquota.go, join.go, clusterquotacheck.go): which cluster quotas
//     bind a namespace, their slots, the batches of many namespaces joined into one
//     transaction per cluster quota, cluster quota and namespace writes with their status
//     recomputed, and the checks and repairs the verifier runs.
//   - Quota status (quotastatus.go): a ResourceQuota's status computed from the namespace's
//     objects, and the quotas as admission judges them.
//
// The engine knows nothing of the registry: the store gives it writes already decoded,
// defaulted, admitted and (but for quotas and cluster quotas) encoded, and an Env for the
// keys and stored forms of the kinds the engine reads itself, lists at a revision and its
// watch hubs.
package commit
