// Package flowcontrol keeps upstream's API Priority and Fairness configuration objects as
// kube-apiserver keeps them: the mandatory FlowSchemas and PriorityLevelConfigurations
// (exempt and catch-all) and upstream's suggested ones (system, node-high, leader-election,
// workload-high, workload-low, global-default and their schemas, probes) exist from the
// first start and come back when deleted; a suggested one's spec is put back while its
// apf.kubernetes.io/autoupdate-spec annotation is "true"; and every
// FlowSchema's status carries the Dangling condition saying whether the priority level it
// references exists. quotad does not otherwise act on the objects (it has its own fairness
// at the edge).
//
// Invariants:
//   - Every FlowSchema or PriorityLevelConfiguration change re-checks everything (one queue
//     key, so bursts collapse).
//   - Writes are made only when something differs: a missing mandatory object is created, a
//     condition whose status, reason or message changed is replaced (its transition time
//     set when the status changes), a changed spec of an autoupdated object is put back.
//     Users' own objects are never changed but for their Dangling condition.
package flowcontrol
