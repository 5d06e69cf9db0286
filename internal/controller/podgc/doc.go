// Package podgc is kube-controller-manager's pod garbage collector (podgc): every check
// period (20s) it force-deletes, in upstream's order,
//
//  1. terminated pods (phase neither Pending, Running nor Unknown) beyond the
//     --terminated-pod-gc-threshold (default 12500; <= 0 turns this pass off), evicted
//     ones first, then the oldest (creation time, then name);
//  2. terminating pods on a node that is not Ready and has the
//     node.kubernetes.io/out-of-service taint;
//  3. pods bound to a node that does not exist, once the node has been missing for the
//     quarantine time (40s) and a read of the node confirms it is gone (marked with the
//     DisruptionTarget condition, reason DeletionByPodGC);
//  4. terminating pods bound to no node.
//
// Invariants:
//   - Each pod not yet Succeeded or Failed is first written Failed through /status (its
//     quota credit commits with that write, design.md §2), then deleted with grace 0;
//     the status write is guarded by the pod's UID.
//   - A pass reads pods and nodes from storage at the time it runs, not from a cache that
//     may lag: nothing is deleted for a node a stale view missed, and a node is judged
//     gone only by a read after its quarantine.
//   - Time is the injected clock's: the check period and the quarantine.
package podgc
