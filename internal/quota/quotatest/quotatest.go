package quotatest

import (
	"sort"
	"strings"
	"testing"
	"time"

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

// StallBound is the time one fuzz input may take before Within reports a stall: generous
// enough for a loaded machine, far below the minutes a stalled input takes.
const StallBound = 20 * time.Second

// Within runs fn in its own goroutine and fails t with fn's error, or if fn panics, or if
// fn has not returned after d. It catches stalls (an input that keeps a core busy for
// minutes), not slowness. fn reports through its error, as t.Fatal may only be called on
// the test's goroutine. A stalled fn is left running: the test fails and the process ends
// with it.
func Within(t testing.TB, d time.Duration, what string, fn func() error) {
	t.Helper()
	type result struct {
		err      error
		panicked interface{}
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			r.panicked = recover()
			done <- r
		}()
		r.err = fn()
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case r := <-done:
		if r.panicked != nil {
			t.Fatalf("%s panicked: %v", what, r.panicked)
		}
		if r.err != nil {
			t.Fatalf("%s: %v", what, r.err)
		}
	case <-timer.C:
		t.Fatalf("%s did not return within %v", what, d)
	}
}
