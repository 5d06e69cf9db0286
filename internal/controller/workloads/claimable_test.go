package workloads

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/controller"
)

// TestClaimableReadsWithoutCopies: a ReplicaSet's sync reads every pod it owns and every
// labelled orphan on each change of any of them. claimable gives them owned ones first
// (each part in name order when asked), active ones only, orphans only when selected;
// and, while the pods of the previous sync are still held, it makes no pod again and
// copies no name: a few allocations for 1,100 pods, where each sync once made every pod
// anew.
func TestClaimableReadsWithoutCopies(t *testing.T) {
	views := controller.NewPodViews()
	x := controller.NewSharedPods(views).Sub(ownedPods(replicaSetKind))
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "rs-uid"}}
	ref := controllerRef(rs, replicaSetKind)
	add := func(name string, lbls map[string]string, owner *metav1.OwnerReference, phase corev1.PodPhase) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("u-" + name), ResourceVersion: "1", Labels: lbls},
			Status: corev1.PodStatus{Phase: phase}}
		if owner != nil {
			p.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		x.Apply(p, false)
	}
	web := map[string]string{"app": "web"}
	for i := 999; i >= 0; i-- {
		add(fmt.Sprintf("web-%04d", i), web, ref, corev1.PodRunning)
	}
	add("web-done", web, ref, corev1.PodSucceeded)
	for i := range 100 {
		add(fmt.Sprintf("orphan-%03d", i), web, nil, corev1.PodPending)
	}
	add("other", map[string]string{"app": "other"}, nil, corev1.PodPending)
	sel := labels.SelectorFromSet(web)

	held := claimable(x, "ns", rs.UID, sel, controller.CachedPod, isPodActive, true)
	var names []string
	for _, p := range held {
		names = append(names, p.Name)
	}
	if len(names) != 1100 || names[0] != "web-0000" || names[999] != "web-0999" || names[1000] != "orphan-000" || names[1099] != "orphan-099" ||
		!slices.IsSortedFunc(names[:1000], strings.Compare) || !slices.IsSortedFunc(names[1000:], strings.Compare) {
		t.Fatalf("claimable gave %d pods: %v ... %v", len(names), names[:3], names[len(names)-3:])
	}
	allocs := testing.AllocsPerRun(20, func() { claimable(x, "ns", rs.UID, sel, controller.CachedPod, isPodActive, true) })
	if allocs > 50 {
		t.Errorf("claimable made %.0f allocations for 1,100 pods already made and held", allocs)
	}
	// A ReplicaSet reads the index's views themselves: the same pods, no pod made.
	active := activePods(x, "ns", rs.UID, sel)
	if len(active) != len(held) {
		t.Fatalf("activePods gave %d views, want %d", len(active), len(held))
	}
	for j, v := range active {
		if !slices.Contains(names, v.Name) || (j < 1000) != strings.HasPrefix(v.Name, "web-") {
			t.Fatalf("activePods' view %d, %s: not claimable, or an orphan before an owned pod", j, v.Name)
		}
		if x.Get("ns", v.Name) != v {
			t.Fatalf("activePods' view %d, %s: not the index's own", j, v.Name)
		}
	}
	if allocs := testing.AllocsPerRun(20, func() { activePods(x, "ns", rs.UID, sel) }); allocs > 50 {
		t.Errorf("activePods made %.0f allocations for 1,100 views", allocs)
	}
}
