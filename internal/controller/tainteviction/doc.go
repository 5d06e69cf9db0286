// Package tainteviction is kube-controller-manager's taint eviction controller
// (pkg/controller/tainteviction, "taint-eviction-controller"): it deletes the pods bound to
// a node with NoExecute taints they do not tolerate at once, and those whose tolerations
// have tolerationSeconds once the least of them has passed since the taint was seen (the
// DefaultTolerationSeconds admission plugin gives every pod 300s for not-ready and
// unreachable). A pod that stops being bound or tainted, or whose node loses the taints,
// has its pending eviction cancelled.
//
// Before deleting it sets the pod's DisruptionTarget condition (reason
// "DeletionByTaintManager"), then deletes it with default options: the registry decides
// whether the deletion is graceful. Events: TaintManagerEviction "Marking for deletion Pod
// ns/name" and "Cancelling deletion of Pod ns/name".
//
// Time comes from the injected clock (its AfterFunc timers), so a fake clock drives it in
// tests. Invariants: at most one pending eviction per pod; a pod's eviction, once done, is
// not scheduled again until the pod is gone or its taints cleared.
package tainteviction
