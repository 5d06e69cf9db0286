// Package node is quotad's Node authorizer, upstream's plugin/pkg/auth/authorizer/node: a
// kubelet's credentials (user system:node:<name> in group system:nodes) may read the
// Secrets, ConfigMaps, PersistentVolumeClaims, PersistentVolumes, ResourceClaims,
// VolumeAttachments and ServiceAccounts, and create the ServiceAccount tokens, only of what
// the pods bound to that node reference; may read its own Node and write Nodes, pod status,
// mirror pods, evictions, Leases, CSINodes, ResourceSlices and PodCertificateRequests (which
// the NodeRestriction admission plugin narrows to its own); and may do what upstream's
// static NodeRules grant. Anything else is NoOpinion, so RBAC decides next.
//
// Graph is the pure part: what each bound pod, bound PersistentVolume, VolumeAttachment,
// ResourceSlice and PodCertificateRequest relates to which node, updated by whoever feeds it
// (internal/server, from the registry's watches and this replica's own commits). Authorizer
// answers from the graph, and where the graph says no it asks Lookup, the stored objects at
// the latest revision, before refusing, so a pod bound a moment ago (or on another replica)
// is usable at once.
//
// Invariants:
//   - The package does no IO of its own: storage is reached only through Lookup.
//   - Every refusal is NoOpinion with upstream's reason text; nothing here ever Denies.
//   - Objects handed to Graph are read, never kept or modified.
package node
