package integration

import (
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestRestartKeepsObjectsAndResourceVersions stops quotad and starts it on the same data
// dir: objects, uids, resourceVersions and quota usage survive, and resourceVersions go on
// growing.
func TestRestartKeepsObjectsAndResourceVersions(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "keep")
	settle(t, s, "keep")
	core := s.Client.CoreV1()
	if _, err := core.ResourceQuotas("keep").Create(ctx, &corev1.ResourceQuota{ObjectMeta: meta("q"),
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceConfigMaps: resource.MustParse("10"), corev1.ResourcePods: resource.MustParse("5")}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{} // name → uid/resourceVersion
	for i := 0; i < 3; i++ {
		cm, err := core.ConfigMaps("keep").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta(fmt.Sprintf("cm-%d", i)), Data: map[string]string{"i": fmt.Sprint(i)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want[cm.Name] = string(cm.UID) + "/" + cm.ResourceVersion
	}
	p, err := core.Pods("keep").Create(ctx, pod("p", "100m", "64Mi"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want["pod/p"] = string(p.UID) + "/" + p.ResourceVersion
	listed, err := core.ConfigMaps("keep").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q1, err := core.ResourceQuotas("keep").Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	s = s.Restart(t)
	core = s.Client.CoreV1()
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("cm-%d", i)
		cm, err := core.ConfigMaps("keep").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s after restart: %v", name, err)
		}
		if got := string(cm.UID) + "/" + cm.ResourceVersion; got != want[name] || cm.Data["i"] != fmt.Sprint(i) {
			t.Errorf("%s after restart: %s %v, want %s", name, got, cm.Data, want[name])
		}
	}
	p2, err := core.Pods("keep").Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(p2.UID) + "/" + p2.ResourceVersion; got != want["pod/p"] {
		t.Errorf("pod after restart: %s, want %s", got, want["pod/p"])
	}
	q2, err := core.ResourceQuotas("keep").Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if q2.ResourceVersion != q1.ResourceVersion || !equalResources(q2.Status.Used, q1.Status.Used) {
		t.Errorf("quota after restart: rv %s used %v, before rv %s used %v", q2.ResourceVersion, q2.Status.Used, q1.ResourceVersion, q1.Status.Used)
	}
	// A watch from the pre-restart list's resourceVersion sees what happens after.
	w, err := core.ConfigMaps("keep").Watch(ctx, metav1.ListOptions{ResourceVersion: listed.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	created, err := core.ConfigMaps("keep").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("after")}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, w); ev.Type != watch.Added || ev.Object.(*corev1.ConfigMap).Name != "after" {
		t.Errorf("watch across the restart: %s %v", ev.Type, ev.Object)
	}
	before, _ := strconv.ParseInt(listed.ResourceVersion, 10, 64)
	after, _ := strconv.ParseInt(created.ResourceVersion, 10, 64)
	if after <= before {
		t.Errorf("resourceVersion after restart %d, not above %d", after, before)
	}
	q3, err := core.ResourceQuotas("keep").Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if used := q3.Status.Used[corev1.ResourceConfigMaps]; used.String() != "5" {
		t.Errorf("configmaps used after restart and one create = %s, want 5 (root CA, 3, after)", used.String())
	}
}

func equalResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}
