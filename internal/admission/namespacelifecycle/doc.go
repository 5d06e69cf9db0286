// Package namespacelifecycle is quotad's NamespaceLifecycle admission plugin: it refuses
// new objects in a namespace that does not exist (404) or is terminating (403), and refuses
// to delete the immortal namespaces default, kube-system and kube-public (403).
//
// Invariants:
//   - It runs in the mutating phase, first in the chain, as upstream's plugin does, so its
//     404 and 403 come before any other plugin's refusal and before object validation. It
//     never changes the object.
//   - Only CREATE of namespaced objects is checked against the namespace; updates and
//     deletes of other objects, and every operation on Namespace objects themselves (other
//     than deleting an immortal one), are allowed. localsubjectaccessreviews are exempt.
//   - The namespace is read straight from storage through admission.Reader, so there is no
//     stale cache to wait for (upstream sleeps and retries; quotad does not need to).
//   - Error texts are upstream's byte for byte.
package namespacelifecycle
