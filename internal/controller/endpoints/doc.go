// Package endpoints is kube-controller-manager's endpoints controller
// (pkg/controller/endpoint): every Service with a selector (not ExternalName) gets a v1
// Endpoints of its name listing, per port set, the Ready pods its selector matches in
// addresses and the others in notReadyAddresses (all in addresses with
// publishNotReadyAddresses), repacked and sorted as upstream's RepackSubsets. Terminating
// and terminal pods and pods without an IP are left out. The Endpoints carries the
// Service's labels, endpoints.kubernetes.io/managed-by: endpoint-controller and
// service.kubernetes.io/headless for a headless Service; past 1000 addresses it is
// truncated and annotated endpoints.kubernetes.io/over-capacity: truncated. The Endpoints
// of a deleted Service is deleted.
//
// Services without a selector are left alone, so the kubernetes Service's Endpoints
// (package kubernetesservice) is not touched.
//
// Invariants: the controller writes only Endpoints whose content would change.
package endpoints
