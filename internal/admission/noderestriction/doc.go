// Package noderestriction is quotad's NodeRestriction admission plugin, upstream's
// plugin/pkg/admission/noderestriction: it limits what a node's credentials (user
// system:node:<name> in group system:nodes) may write to what concerns that node. A node may
// create and modify only its own Node (no configSource, no taints or ownerReferences changed,
// no labels under node-restriction.kubernetes.io/ nor other kubernetes.io and k8s.io labels
// outside the kubelet's own), update only the status of pods bound to it (not their labels or
// resource claim statuses), create only mirror pods bound to itself and owned by its Node that
// reference no API object, delete and evict only pods bound to it, update only the status of
// claims (no other field), write only its own Lease in kube-node-lease and its own CSINode,
// create and delete only ResourceSlices of its own, ask tokens only bound to a pod on it (for
// an audience the pod uses, unless authorized for another), create kubelet CSRs only for
// its own name, and create PodCertificateRequests only for itself and a pod bound to it
// (node, pod and service account UIDs as stored; not a mirror pod; for a signer a
// podCertificate volume of the pod names, unless authorized for another) and do nothing
// else to them. Other users' requests are not its concern.
//
// The Node authorizer (internal/auth/node) lets nodes make these requests; this plugin checks
// the objects, which the authorizer does not see.
//
// Invariants:
//   - Refusals are 403s whose texts are upstream's byte for byte (pinned by golden tests),
//     except the PVC status diff, which prints quotad's v1 objects where upstream prints its
//     internal ones. As upstream's, a PodCertificateRequest naming a UID that differs from
//     the stored object's, or an object not found, is refused with a plain error (a 500),
//     which the kubelet retries.
//   - It never changes an object; it runs in the mutating phase as upstream (Admit), and in
//     the validating phase only for subresource updates, which the registry's mutating
//     phase does not see.
//   - Pods and Nodes it checks are read from storage (Reader) at the latest revision. A
//     PodCertificateRequest's missing node, pod or service account is reported as
//     upstream's listers report it ("node \"x\" not found").
package noderestriction
