package quotatest

import (
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// List builds a resource list from "name=quantity" pairs, failing t on a malformed pair.
func List(t testing.TB, pairs ...string) corev1.ResourceList {
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

// Show renders a list as "name=quantity" pairs sorted by name, quantities in canonical form.
func Show(list corev1.ResourceList) string {
	names := make([]string, 0, len(list))
	for name := range list {
		names = append(names, string(name))
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, name := range names {
		q := list[corev1.ResourceName(name)]
		parts = append(parts, name+"="+q.String())
	}
	return strings.Join(parts, " ")
}
