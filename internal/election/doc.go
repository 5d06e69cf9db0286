// Package election is leader election for quotad's controllers, with the semantics of
// kube-controller-manager's (client-go's leaderelection with a LeaseLock), written against
// the registry: the lock is a coordination.k8s.io/v1 Lease (kube-system/kube-controller-manager
// by default) read and written through registry.Store, so `kubectl get lease -n kube-system`
// shows the holder, and every write is guarded by the resourceVersion the elector read.
//
// The algorithm (client-go's tryAcquireOrRenew):
//   - A candidate reads the Lease. When its spec differs from the one last observed, the
//     candidate records it with the time on its own clock. It takes the Lease only when the
//     Lease has no holder, or has stayed unchanged for the Lease's leaseDurationSeconds since
//     it was observed; it writes holderIdentity, leaseDurationSeconds, acquireTime,
//     renewTime and leaseTransitions+1 with the observed resourceVersion as precondition.
//   - The leader renews every retry period (renewTime only; acquireTime and
//     leaseTransitions are kept). When it has not renewed within the renew deadline of its
//     last successful renewal attempt, or finds another holder, it stops leading.
//   - On a clean stop (ReleaseOnCancel) the leader writes the Lease with no holder and
//     leaseDurationSeconds 1, so a candidate takes over at once.
//
// Invariants:
//   - Two candidates never both succeed in taking the same Lease: each write is guarded by
//     the resourceVersion read, so of two writes based on one read only one commits.
//   - Lead runs only while this elector holds the Lease; before Run campaigns again, or
//     releases the Lease, Lead's context is cancelled and Lead has returned (its work has
//     stopped). OnLeading(false) is called after Lead returned, OnLeading(true) before it
//     starts.
//   - A leader that cannot renew stops within the renew deadline of its last renewal; a
//     candidate waits at least the lease duration after it last saw the Lease change, so
//     (with renew deadline < lease duration, which Validate requires) the old leader's work
//     has had lease duration - renew deadline to stop before another's starts.
//
// All waiting uses the injected clock; nothing sleeps for correctness.
package election
