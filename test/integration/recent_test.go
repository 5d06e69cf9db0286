package integration

import (
	"testing"

	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestUpdatesStartFromRecentWrites: a replica starts an update from its own last write of
// the object, yet every answer is as if it had read etcd: another replica's write in between
// is neither lost nor refused (a resourceVersion precondition naming it passes), a stale
// precondition is still a 409, a no-op answers the stored object, a deleted object is a 404,
// and a patch applies to what is stored.
func TestUpdatesStartFromRecentWrites(t *testing.T) {
	t.Parallel()
	etcd := sharedEtcd(t)
	a := servertest.Start(t, servertest.WithEtcd(etcd))
	b := servertest.Start(t, servertest.WithEtcd(etcd))
	ctx := ctxT(t)
	mkNamespace(t, a, "recent")
	la, lb := a.Client.CoordinationV1().Leases("recent"), b.Client.CoordinationV1().Leases("recent")
	holder := func(s string) *string { return &s }
	l, err := la.Create(ctx, &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "node"}, Spec: coordv1.LeaseSpec{HolderIdentity: holder("a0")}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// a updates twice: it remembers its write.
	for _, h := range []string{"a1", "a2"} {
		l.Spec.HolderIdentity = holder(h)
		if l, err = la.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	stale := l.DeepCopy()
	// b writes behind a's back.
	l.Spec.HolderIdentity = holder("b1")
	fromB, err := lb.Update(ctx, l, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A precondition naming b's write passes on a.
	next := fromB.DeepCopy()
	next.Spec.HolderIdentity = holder("a3")
	got, err := la.Update(ctx, next, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update through a at b's resourceVersion: %v", err)
	}
	if *got.Spec.HolderIdentity != "a3" || got.ResourceVersion == fromB.ResourceVersion {
		t.Fatalf("update through a: holder %s, resourceVersion %s (b's %s)", *got.Spec.HolderIdentity, got.ResourceVersion, fromB.ResourceVersion)
	}
	// A stale precondition is a conflict on a as on b.
	stale.Spec.HolderIdentity = holder("lost")
	if _, err := la.Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("update through a at an old resourceVersion: %v, want 409", err)
	}
	// b writes again; a no-op update through a (the object as b stored it) answers it.
	got.Spec.HolderIdentity = holder("b2")
	fromB, err = lb.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	same, err := la.Update(ctx, fromB.DeepCopy(), metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if same.ResourceVersion != fromB.ResourceVersion || *same.Spec.HolderIdentity != "b2" {
		t.Fatalf("no-op through a: resourceVersion %s holder %s, want b's %s b2", same.ResourceVersion, *same.Spec.HolderIdentity, fromB.ResourceVersion)
	}
	// a writes, b deletes: a's next update is a 404.
	same.Spec.HolderIdentity = holder("a4")
	if same, err = la.Update(ctx, same, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := lb.Delete(ctx, "node", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	same.ResourceVersion = ""
	if _, err := la.Update(ctx, same, metav1.UpdateOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("update through a of an object b deleted: %v, want 404", err)
	}

	// A patch applies to what etcd holds, not to a's last write.
	ca, cb := a.Client.CoreV1().ConfigMaps("recent"), b.Client.CoreV1().ConfigMaps("recent")
	cm, err := ca.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"v": "a0"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["v"] = "a1"
	if cm, err = ca.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm.Data["v"] = "b1"
	cm.Labels = map[string]string{"by": "b"}
	if _, err = cb.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	patched, err := ca.Patch(ctx, "cm", "application/merge-patch+json", []byte(`{"data":{"v":"a2"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if patched.Labels["by"] != "b" || patched.Data["v"] != "a2" {
		t.Fatalf("patch through a: labels %v data %v, want b's label kept", patched.Labels, patched.Data)
	}
	a.CheckInvariant()
}
