package controller

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestCacheFeed(t *testing.T) {
	c := NewCache()
	var seen []string
	h := c.Feed(func(obj runtime.Object, deleted bool) {
		// The cache is updated before the handler runs.
		p := obj.(*corev1.Pod)
		seen = append(seen, fmt.Sprintf("%s deleted=%v cached=%v", p.Name, deleted, c.Get(p.Namespace, p.Name) != nil))
	})
	pod := func(ns, name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	h(pod("a", "2"), false)
	h(pod("a", "1"), false)
	h(pod("b", "1"), false)
	h(pod("a", "2"), true)
	var names []string
	for _, o := range c.List("a") {
		names = append(names, o.(*corev1.Pod).Name)
	}
	if fmt.Sprint(names) != "[1]" || len(c.List("b")) != 1 || len(c.List("c")) != 0 {
		t.Fatalf("a: %v, b: %d, c: %d", names, len(c.List("b")), len(c.List("c")))
	}
	want := "[2 deleted=false cached=true 1 deleted=false cached=true 1 deleted=false cached=true 2 deleted=true cached=false]"
	if fmt.Sprint(seen) != want {
		t.Fatalf("handler saw %v", seen)
	}
}
