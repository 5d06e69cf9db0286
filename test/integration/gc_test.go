package integration

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestCascadingDelete deletes a Deployment with each propagation policy and checks what is
// left: nothing (background, foreground) or the orphaned ReplicaSet and its pods, with
// quota credited for everything deleted and no reference to a missing owner.
func TestCascadingDelete(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	cases := []struct {
		policy                metav1.DeletionPropagation
		wantRS, wantPods      int
		wantUsedRS, wantUsedP int64
	}{
		{metav1.DeletePropagationBackground, 0, 0, 0, 0},
		{metav1.DeletePropagationForeground, 0, 0, 0, 0},
		{metav1.DeletePropagationOrphan, 1, 3, 1, 3},
	}
	for _, tc := range cases {
		t.Run(string(tc.policy), func(t *testing.T) {
			ns := "gc-" + map[metav1.DeletionPropagation]string{"Background": "bg", "Foreground": "fg", "Orphan": "orphan"}[tc.policy]
			mkNamespace(t, s, ns)
			mkQuota(t, s, ns, "counts", map[string]string{"count/deployments.apps": "2", "count/replicasets.apps": "4", "count/pods": "10"})
			if _, err := s.Client.AppsV1().Deployments(ns).Create(ctxT(t), wlDeployment("app", 3), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			wlEventually(t, "3 pods", func(ctx context.Context) (bool, error) {
				n, err := wlCountPods(ctx, s, ns, "app=app")
				return n == 3, err
			})
			policy := tc.policy
			if err := s.Client.AppsV1().Deployments(ns).Delete(ctxT(t), "app", metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil {
				t.Fatal(err)
			}
			want := map[string]int64{"count/deployments.apps": 0, "count/replicasets.apps": tc.wantUsedRS, "count/pods": tc.wantUsedP}
			wlEventually(t, fmt.Sprintf("%d replica sets, %d pods, quota %v", tc.wantRS, tc.wantPods, want), func(ctx context.Context) (bool, error) {
				if _, err := s.Client.AppsV1().Deployments(ns).Get(ctx, "app", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					return false, err
				}
				rss, err := s.Client.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
				if err != nil || len(rss.Items) != tc.wantRS {
					return false, err
				}
				n, err := wlCountPods(ctx, s, ns, "")
				if err != nil || n != tc.wantPods {
					return false, err
				}
				used, err := wlQuotaUsed(ctx, s, ns, "counts")
				return err == nil && wlUsedEquals(want)(used), err
			})
			assertNoDanglingOwners(t, s, ns)
			if tc.policy == metav1.DeletePropagationOrphan {
				rss, _ := s.Client.AppsV1().ReplicaSets(ns).List(ctxT(t), metav1.ListOptions{})
				for _, rs := range rss.Items {
					if len(rs.OwnerReferences) != 0 {
						t.Errorf("orphaned replica set %s still has owners %v", rs.Name, rs.OwnerReferences)
					}
				}
			}
		})
	}
}

// assertNoDanglingOwners fails when a pod, ReplicaSet or ConfigMap of ns references an owner
// that does not exist with that UID.
func assertNoDanglingOwners(t *testing.T, s *servertest.Server, ns string) {
	t.Helper()
	ctx := ctxT(t)
	live := map[types.UID]bool{}
	var refs []metav1.OwnerReference
	var names []string
	pods, err := s.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		live[p.UID] = true
		for _, r := range p.OwnerReferences {
			refs, names = append(refs, r), append(names, "pod/"+p.Name)
		}
	}
	rss, err := s.Client.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, rs := range rss.Items {
		live[rs.UID] = true
		for _, r := range rs.OwnerReferences {
			refs, names = append(refs, r), append(names, "replicaset/"+rs.Name)
		}
	}
	ds, err := s.Client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds.Items {
		live[d.UID] = true
	}
	cms, err := s.Client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		live[cm.UID] = true
		for _, r := range cm.OwnerReferences {
			refs, names = append(refs, r), append(names, "configmap/"+cm.Name)
		}
	}
	for i, r := range refs {
		if !live[r.UID] {
			t.Errorf("%s references missing owner %s %s (%s)", names[i], r.Kind, r.Name, r.UID)
		}
	}
}

func configMapOwnedBy(name string, owners ...*corev1.ConfigMap) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, o := range owners {
		cm.OwnerReferences = append(cm.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: o.Name, UID: o.UID})
	}
	return cm
}

// TestGarbageCollectorOwners covers dependents with several owners and with owners that
// never existed.
func TestGarbageCollectorOwners(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "gc-owners"
	mkNamespace(t, s, ns)
	mkQuota(t, s, ns, "cm", map[string]string{"count/configmaps": "20"})
	ctx := ctxT(t)
	cms := s.Client.CoreV1().ConfigMaps(ns)
	a, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, configMapOwnedBy("both", a, b), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ghost := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ghost", UID: "00000000-0000-0000-0000-000000000001"}}
	if _, err := cms.Create(ctx, configMapOwnedBy("of-ghost", ghost), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// 1. An owner that never existed: the dependent is collected.
	wlEventually(t, "of-ghost collected", func(ctx context.Context) (bool, error) {
		_, err := cms.Get(ctx, "of-ghost", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	// 2. One of two owners deleted: only its reference goes.
	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wlEventually(t, "both keeps only b", func(ctx context.Context) (bool, error) {
		cm, err := cms.Get(ctx, "both", metav1.GetOptions{})
		return err == nil && len(cm.OwnerReferences) == 1 && cm.OwnerReferences[0].UID == b.UID, err
	})
	// 3. The last owner deleted: the dependent goes, and quota with it.
	if err := cms.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wlEventually(t, "both collected", func(ctx context.Context) (bool, error) {
		_, err := cms.Get(ctx, "both", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	assertNoDanglingOwners(t, s, ns)
	used, err := wlQuotaUsed(ctx, s, ns, "cm")
	if err != nil {
		t.Fatal(err)
	}
	l, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil || used["count/configmaps"] != int64(len(l.Items)) {
		t.Errorf("count/configmaps used %d, configmaps %d (%v)", used["count/configmaps"], len(l.Items), err)
	}
}
