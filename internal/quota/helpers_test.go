package quota_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/quotad/quotad/internal/quota/quotatest"
)

// rl builds a resource list from "name=quantity" pairs.
func rl(t testing.TB, pairs ...string) corev1.ResourceList { return quotatest.List(t, pairs...) }

// show renders a list as sorted "name=quantity" pairs.
func show(list corev1.ResourceList) string { return quotatest.Show(list) }

// names renders resource names separated by spaces.
func names(list []corev1.ResourceName) string {
	s := make([]string, len(list))
	for i, n := range list {
		s[i] = string(n)
	}
	return strings.Join(s, " ")
}
