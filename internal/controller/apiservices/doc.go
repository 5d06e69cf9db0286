// Package apiservices is upstream's APIService auto-registration (kube-aggregator's
// autoregister controller fed by kube-apiserver's served paths and the CRD registration
// controller): every group-version quotad serves has a local APIService "<version>.<group>"
// ("v1." for the core group), Available as local services always are.
//
// Invariants:
//   - Built-in group-versions get upstream's priorities and the automanaged=onstart label;
//     custom resource group-versions (every served version of every CRD) get priority
//     1000/100 and automanaged=true, and are deleted when no CRD serves them any more.
//   - The desired set is computed from the catalogue's built-ins and the stored CRDs, never
//     from the catalogue's custom resources, so it does not depend on the order in which a
//     CRD write reaches the catalogue and the watch.
//   - APIServices without the automanaged label (users' own) are never changed; an
//     automanaged one whose spec was changed is put back.
//   - The apiregistration.k8s.io group itself gets none, as upstream.
package apiservices
