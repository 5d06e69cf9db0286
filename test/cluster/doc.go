// Package cluster runs quotad as the control plane of a cluster made of upstream's own
// components: kube-scheduler of the emulated version (k8s.io/kubernetes, built from
// hack/cluster, a module of its own) leader-elected on its Lease, and KWOK (sigs.k8s.io/kwok,
// built from hack/cluster/kwok) simulating the nodes with its default stages. The tests
// check with real client-go and the real kubectl (/usr/bin/kubectl) that pods are bound
// through pods/binding, run, become Ready and complete, and that ResourceQuota follows them
// exactly and is never exceeded. TestHollowKubelets runs hollow kubelets (kubemark
// --morph=kubelet, the kubelet's own code with a fake runtime, from hack/cluster) that join
// with a bootstrap token through the CSR flow and run pods under their node identity.
// TestNodeDeath kills the kwok process of two nodes (a second kwok, managing its own
// nodes) and follows the node lifecycle, taint eviction and pod GC controllers, and the
// quota, until the nodes' pods are replaced; TestDrainWithPodDisruptionBudget runs kubectl
// drain against a PodDisruptionBudget.
//
// The components (kube-scheduler, kubemark, kwok) are built by hack/cluster/build.sh and cached next to the Go build cache
// (quotad-components/), so only the first run builds them: several minutes on a small
// machine, beyond go test's default 10m timeout; run it as
//
//	go test -timeout 30m ./test/cluster/
//
// Outside CI the tests skip until the components are built (saying how); a missing
// kubectl, go toolchain or a failed build fails them.
// Nothing is measured by time: every wait is a watch or a poll of a condition under a
// context deadline.
package cluster
