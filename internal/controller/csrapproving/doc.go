// Package csrapproving is kube-controller-manager's csrapproving controller: it approves
// a kubelet's client certificate requests (signer kubernetes.io/kube-apiserver-client-kubelet)
// when the requester may, as upstream decides it, by asking the authorizer whether the
// request's user may "create" certificatesigningrequests/selfnodeclient (a node renewing
// its own certificate: the requester is the certificate's subject) or
// certificatesigningrequests/nodeclient (a new node, through a bootstrap token whose
// group is bound to the nodeclient role).
//
// Invariants:
//   - Only requests neither approved nor denied and without a certificate are considered;
//     a request that is not a kubelet's client request (subject system:node:<name> in
//     system:nodes, no alternative names, a client's usages) is left to people.
//   - The decision is the authorizer's for the request's user, groups and extra as
//     recorded in spec, never the controller's own rights; a refusal leaves the request
//     pending.
//   - Approval is written through /approval with upstream's condition: Approved,
//     reason AutoApproved, and upstream's message.
package csrapproving
