package quota_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/quotad/quotad/internal/quota"
)

// rl builds a resource list from "name=quantity" pairs.
func rl(t testing.TB, pairs ...string) corev1.ResourceList {
	t.Helper()
	out := corev1.ResourceList{}
	for _, p := range pairs {
		name, value, ok := strings.Cut(p, "=")
		if !ok {
			t.Fatalf("bad pair %q", p)
		}
		q, err := resource.ParseQuantity(value)
		if err != nil {
			t.Fatalf("bad quantity %q: %v", value, err)
		}
		out[corev1.ResourceName(name)] = q
	}
	return out
}

// show renders a list as sorted "name=quantity" pairs.
func show(list corev1.ResourceList) string {
	var parts []string
	for _, name := range quota.ResourceNames(list) {
		q := list[name]
		parts = append(parts, string(name)+"="+q.String())
	}
	return strings.Join(parts, " ")
}

// names renders resource names separated by spaces.
func names(list []corev1.ResourceName) string {
	s := make([]string, len(list))
	for i, n := range list {
		s[i] = string(n)
	}
	return strings.Join(s, " ")
}
