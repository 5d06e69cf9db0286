package evaluator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/quotad/quotad/internal/quota/quotatest"
)

// rl builds a resource list from "name=quantity" pairs.
func rl(t *testing.T, pairs ...string) corev1.ResourceList { return quotatest.List(t, pairs...) }

// show renders a list as sorted "name=quantity" pairs, quantities in canonical form.
func show(list corev1.ResourceList) string { return quotatest.Show(list) }
