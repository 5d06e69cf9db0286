package selector

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// podFields gives a pod's field labels as the pods strategy does for the fields these
// tests select on.
type podFields struct{}

func (podFields) Fields(obj runtime.Object) fields.Set {
	p := obj.(*corev1.Pod)
	return fields.Set{
		"metadata.name":      p.Name,
		"metadata.namespace": p.Namespace,
		"spec.nodeName":      p.Spec.NodeName,
		"status.phase":       string(p.Status.Phase),
	}
}

// TestCompiledSelectorsMatchAsApimachinery: compiled selectors match exactly the objects
// apimachinery's selectors match, over random requirements of every operator.
func TestCompiledSelectorsMatchAsApimachinery(t *testing.T) {
	var pods podFields
	r := rand.New(rand.NewPCG(3, 4))
	keys := []string{"a", "b", "c"}
	vals := []string{"1", "2", "10", "x", ""}
	label := func() string {
		k := keys[r.IntN(len(keys))]
		v := func() string { return vals[r.IntN(len(vals)-1)] }
		switch r.IntN(8) {
		case 0:
			return k + "=" + v()
		case 1:
			return k + "!=" + v()
		case 2:
			return k + " in (" + v() + "," + v() + ")"
		case 3:
			return k + " notin (" + v() + "," + v() + ")"
		case 4:
			return k
		case 5:
			return "!" + k
		case 6:
			return k + ">" + []string{"1", "2", "5"}[r.IntN(3)]
		}
		return k + "<" + []string{"1", "2", "5"}[r.IntN(3)]
	}
	fieldReq := func() string {
		f := []string{"metadata.name", "status.phase", "spec.nodeName"}[r.IntN(3)]
		op := []string{"=", "==", "!="}[r.IntN(3)]
		return f + op + []string{"p", "q", "Running", ""}[r.IntN(4)]
	}
	for i := 0; i < 5000; i++ {
		var ls, fs []string
		for j := r.IntN(4); j >= 0; j-- {
			ls = append(ls, label())
		}
		for j := r.IntN(3); j >= 0; j-- {
			fs = append(fs, fieldReq())
		}
		l, err := labels.Parse(strings.Join(ls, ","))
		if err != nil {
			continue
		}
		f, err := fields.ParseSelector(strings.Join(fs, ","))
		if err != nil {
			continue
		}
		sel := New(l, f)
		plain := Selector{Label: l, Field: f}
		for k := 0; k < 10; k++ {
			set := map[string]string{}
			for _, key := range keys {
				if r.IntN(2) == 0 {
					set[key] = vals[r.IntN(len(vals))]
				}
			}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: []string{"p", "q"}[r.IntN(2)], Namespace: "ns", Labels: set},
				Spec: corev1.PodSpec{NodeName: []string{"", "p"}[r.IntN(2)]}, Status: corev1.PodStatus{Phase: corev1.PodPhase([]string{"Running", ""}[r.IntN(2)])}}
			if got, want := sel.Matches(pods, pod), plain.Matches(pods, pod); got != want {
				t.Fatalf("labels %q fields %q on %v %s/%s/%s: compiled %v, apimachinery %v", ls, fs, set, pod.Name, pod.Spec.NodeName, pod.Status.Phase, got, want)
			}
		}
	}
}

// TestCompiledSelectorCostIsTheObjects: a selector of a hundred thousand values or
// requirements matches an object in about the time of a small one.
func TestCompiledSelectorCostIsTheObjects(t *testing.T) {
	var pods podFields
	var in, notExists strings.Builder
	in.WriteString("a in (")
	for i := 0; i < 100000; i++ {
		if i > 0 {
			in.WriteString(",")
			notExists.WriteString(",")
		}
		fmt.Fprintf(&in, "v%d", i)
		fmt.Fprintf(&notExists, "!k%d", i)
	}
	in.WriteString(")")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "zz", "b": "1"}}}
	for _, text := range []string{in.String(), notExists.String()} {
		l, err := labels.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		sel := New(l, nil)
		start := time.Now()
		matched := 0
		for range 10000 {
			if sel.Matches(pods, pod) {
				matched++
			}
		}
		// Each of the 10,000 matches walks two labels; apimachinery's walks 100,000
		// values or requirements (seconds in all). Logged, not asserted.
		t.Logf("%d of 10000 matched in %v", matched, time.Since(start))
		if want := (Selector{Label: l}).Matches(pods, pod); (matched > 0) != want {
			t.Fatalf("compiled matched %d, apimachinery %v", matched, want)
		}
	}
}
