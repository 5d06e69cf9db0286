//go:build tools

// Package kwok pins KWOK (sigs.k8s.io/kwok), the node and pod simulator quotad's cluster
// tests and hack/cluster.sh run. It is its own module so that KWOK's k8s.io dependencies
// are its own, not k8s.io/kubernetes's.
package kwok

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
