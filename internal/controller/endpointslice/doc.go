// Package endpointslice is kube-controller-manager's EndpointSlice controller
// (pkg/controller/endpointslice and k8s.io/endpointslice's reconciler): every Service with a
// selector (not ExternalName) gets discovery.k8s.io/v1 EndpointSlices listing the pods its
// selector matches that have an IP and are not terminal, one slice per address type and
// set of ports (a named targetPort is resolved per pod), at most --max-endpoints-per-slice
// (100) endpoints each. Each endpoint carries upstream's conditions (ready: Ready and not
// terminating, or publishNotReadyAddresses; serving: Ready; terminating: being deleted),
// the pod's node and zone, the hostname of a pod whose subdomain is the Service, and a
// targetRef. Slices are named generateName "<service>-", owned by the Service (controller
// reference), labelled kubernetes.io/service-name, endpointslice.kubernetes.io/managed-by:
// endpointslice-controller.k8s.io, service.kubernetes.io/headless for a headless Service,
// plus the Service's own labels. A Service with no endpoints has one empty placeholder
// slice. Slices are reused before new ones are made, and only slices that change are
// written.
//
// It also holds the helpers upstream's endpoints controller shares (FindPort,
// ShouldPodBeInEndpoints, PodReady), as k8s.io/endpointslice does.
//
// Not done (as of this writing): topology hints, trafficDistribution and the
// endpoints.kubernetes.io/last-change-trigger-time annotation.
//
// Invariants: only slices labelled managed-by this controller are read or written; the
// controller never writes a slice that did not change.
package endpointslice
