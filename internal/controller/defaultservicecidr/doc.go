// Package defaultservicecidr is upstream's default-servicecidr controller (kube-apiserver's
// kubernetes-service-cidr-controller): the ServiceCIDR named `kubernetes` holds the
// cluster's service range, and is Ready.
//
// Invariants:
//   - The object is created when missing (at start and whenever it is deleted).
//   - When it holds exactly the service range and has no Ready condition, or an Unknown
//     one, its status gets Ready=True with upstream's message and no reason; a Ready
//     condition already True or False is left alone, as upstream leaves it.
//   - A `kubernetes` ServiceCIDR holding another range is never changed: the running
//     controller reports it once (a Warning event, KubernetesDefaultServiceCIDRInconsistent,
//     with upstream's text), as it reports a Ready=False condition on the range it keeps
//     ("Configuration matches, but …", under the condition's reason). Sync alone, as the
//     server's start runs it, reports nothing.
package defaultservicecidr
