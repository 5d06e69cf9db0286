//go:build e2eapps

package conformance

// With the e2eapps build tag, e2e.test also links upstream's [sig-apps] specs
// (test/e2e/apps): the workload controllers driven against a cluster whose control plane
// is quotad, with kube-scheduler and KWOK nodes (hack/conformance.sh APPS=1).
import _ "k8s.io/kubernetes/test/e2e/apps"
