// Package kubernetesservice keeps the cluster's own Service current, as kube-apiserver's
// kubernetes-service controller and endpoint reconciler do: the `kubernetes` Service in
// `default` (ClusterIP the first address of the service range, port `https` 443 to the
// secure port), and its Endpoints and EndpointSlice listing each live replica.
//
// Each replica records a heartbeat for its address in an annotation of the Endpoints
// object (the lease upstream keeps in etcd) at start and every interval, and drops the
// addresses whose heartbeat is older than three intervals. The desired objects are a pure
// function of the heartbeats (Desired), so replicas converge on the same objects and do not
// fight; every write is guarded by the object's resourceVersion.
//
// The Endpoints may name a loopback address (a replica serving on 127.0.0.1), which users
// may not write: these writes skip validation.
package kubernetesservice
