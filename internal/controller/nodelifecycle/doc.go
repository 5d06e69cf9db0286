// Package nodelifecycle is kube-controller-manager's node lifecycle controller
// (pkg/controller/nodelifecycle): it watches each Node's Ready condition and its Lease in
// kube-node-lease and
//
//   - marks a node whose kubelet stopped posting status (no new Ready heartbeat and no Lease
//     renewal within --node-monitor-grace-period, or --node-startup-grace-period for a node
//     that never posted one) Ready=Unknown, with MemoryPressure, DiskPressure and PIDPressure,
//     with upstream's reasons and messages ("NodeStatusUnknown", "Kubelet stopped posting
//     node status."), once a read of the node's Lease from storage confirmed the Lease
//     the watch delivered (upstream's NodeControllerLeaseCircuitBreaker, on by default in
//     v1.37: while the watch is behind, no node's health is judged);
//   - keeps the NoSchedule taints of node conditions (node.kubernetes.io/not-ready,
//     unreachable, memory-pressure, disk-pressure, pid-pressure, network-unavailable and
//     unschedulable) in step with them;
//   - taints a node whose Ready is False or Unknown node.kubernetes.io/not-ready or
//     unreachable:NoExecute through a per-zone rate-limited queue (--node-eviction-rate,
//     --secondary-node-eviction-rate when a zone is partially disrupted and larger than
//     --large-cluster-size-threshold, none when every zone is fully disrupted), and removes
//     those taints when it is Ready again; the taint eviction controller
//     (package tainteviction) deletes the pods that do not tolerate them;
//   - sets the Ready condition of the pods of a node that is not Ready to False.
//
// Time comes from the injected clock only: the passes (Monitor, TaintPass) are methods a
// test calls after stepping a fake clock; Start runs them on the clock's tickers.
//
// Invariants: the controller's view of health (probe and transition timestamps) is kept in
// memory as upstream's, so a new leader starts every node's grace period afresh; it writes
// Node status (conditions), Node spec (taints only) and Pod status (the Ready condition
// only), every write through the registry.
package nodelifecycle
