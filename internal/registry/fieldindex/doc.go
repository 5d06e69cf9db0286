// Package fieldindex holds the keys of one resource's objects grouped by the value of one
// field label (a pod's spec.nodeName), with each key's labels, at a revision, so that a
// list selecting one value, or with a label selector, reads the objects that can match
// instead of every object of the resource. kube-apiserver's watch cache indexes pods by
// spec.nodeName for the same lists (each kubelet's list of its own pods, `kubectl describe
// node`, KWOK's and the hollow kubelets' lists) and evaluates label selectors on the
// objects it holds. Label sets are interned: the pods of one ReplicaSet share one.
//
// An Index is pure state: the registry loads it from a list at one revision, then feeds it
// the resource's watch events and progress notifications (every change up to a revision
// delivered), and reads it once it has reached the revision a list must be read at.
//
// Invariants:
//   - Synced at revision r, an index holds exactly the keys the store held at r, each in
//     the group of its value at r with its labels at r; a key whose value or labels could
//     not be read is in every group and matches every label selector (Select returns a
//     superset: the list tests every object it reads against its whole selector).
//   - The revision only grows while synced; Reset forgets everything and unsyncs.
//   - Select returns copies: nothing the index holds is handed out but the label maps
//     it gives match, which match only reads.
package fieldindex
