// Package flowcontrol keeps upstream's API Priority and Fairness configuration objects as
// kube-apiserver keeps them: the mandatory FlowSchemas and PriorityLevelConfigurations
// (exempt and catch-all) exist from the first start and come back when deleted, and every
// FlowSchema's status carries the Dangling condition saying whether the priority level it
// references exists. quotad does not otherwise act on the objects (it has its own fairness
// at the edge).
//
// Invariants:
//   - Every FlowSchema or PriorityLevelConfiguration change re-checks everything (one queue
//     key, so bursts collapse).
//   - Writes are made only when something differs: a missing mandatory object is created, a
//     condition whose status, reason or message changed is replaced (its transition time
//     set when the status changes). Users' objects are never otherwise changed.
package flowcontrol
