// Package namespace is quotad's namespace controller. For every active namespace it keeps a
// `default` ServiceAccount and a `kube-root-ca.crt` ConfigMap holding the cluster CA, as
// upstream's controllers do (a bundle: replicas with CAs of their own each add theirs and
// keep the others' valid CA certificates, see caBundle). For a Terminating namespace it deletes everything inside,
// custom resources included (through the registry, so quotas are credited at once), reports
// upstream's deletion conditions in status.conditions (NamespaceDeletionDiscoveryFailure,
// NamespaceDeletionGroupVersionParsingFailure, NamespaceDeletionContentFailure,
// NamespaceContentRemaining, NamespaceFinalizersRemaining, with upstream's exact reasons
// and messages, so `kubectl describe namespace` says what holds it), and once nothing is
// left removes the namespace's `kubernetes` finalizer, which deletes the namespace.
//
// Invariants: objects of every kind are read through meta.Accessor (typed or
// unstructured); the conditions are pure functions of one pass's findings
// (conditions.go) and are written only when they change.
package namespace
