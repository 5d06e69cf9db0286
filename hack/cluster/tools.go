//go:build tools

// Package cluster pins the upstream components quotad's cluster tests and hack/cluster.sh
// run: kube-scheduler and kubemark of k8s.io/kubernetes (the version quotad emulates), and
// kube-apiserver and kube-controller-manager, the upstream control plane hack/clusterloader2.sh
// measures quotad against. It is
// its own module, so the main module never imports them; KWOK is in ./kwok, a module of its
// own too, because it requires older k8s.io modules than k8s.io/kubernetes pins.
package cluster

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubemark"
)
