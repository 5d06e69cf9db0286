package integration

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/quotad/quotad/internal/server/servertest"
)

// stsWithClaims is a StatefulSet "web" of replicas pods, each with a 1Gi "data" claim.
func stsWithClaims(replicas int32, policy appsv1.PodManagementPolicyType) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            &replicas,
			ServiceName:         "nginx",
			PodManagementPolicy: policy,
			Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template:            wlTemplate("web"),
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}},
		},
	}
}

// stsPodNames returns the names of the pods of app=web, sorted.
func stsPodNames(ctx context.Context, s *servertest.Server, ns string) ([]string, error) {
	l, err := s.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range l.Items {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out, nil
}

func stsClaimNames(ctx context.Context, s *servertest.Server, ns string) ([]string, error) {
	l, err := s.Client.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range l.Items {
		if c.DeletionTimestamp == nil {
			out = append(out, c.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

func stsEventMessages(ctx context.Context, s *servertest.Server, ns, reason string) ([]string, error) {
	evs, err := wlEvents(ctx, s, ns, "StatefulSet", "web", reason)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Message)
	}
	return out, nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestStatefulSetOrderedReady: pods come one at a time in ordinal order, each after the
// previous one is Running and Ready, each with its claim created first and charged to
// storage quota, with upstream's identity labels, hostname and subdomain, a
// ControllerRevision and status; scaling down removes the highest ordinal first and keeps
// the claims (Retain).
func TestStatefulSetOrderedReady(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "sts"
	mkNamespace(t, s, ns)
	mkQuota(t, s, ns, "storage", map[string]string{"requests.storage": "10Gi", "persistentvolumeclaims": "10",
		"fast.storageclass.storage.k8s.io/requests.storage": "5Gi", "fast.storageclass.storage.k8s.io/persistentvolumeclaims": "5"})
	set := stsWithClaims(3, appsv1.OrderedReadyPodManagement)
	fast := "fast"
	set.Spec.VolumeClaimTemplates[0].Spec.StorageClassName = &fast
	if _, err := s.Client.AppsV1().StatefulSets(ns).Create(ctxT(t), set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// 1. One pod at a time: web-<n> exists alone until web-<n-1> is ready.
	for n := 0; n < 3; n++ {
		want := []string{}
		for i := 0; i <= n; i++ {
			want = append(want, fmt.Sprintf("web-%d", i))
		}
		wlEventually(t, fmt.Sprintf("pods %v", want), func(ctx context.Context) (bool, error) {
			got, err := stsPodNames(ctx, s, ns)
			return err == nil && len(got) >= len(want), err
		})
		got, err := stsPodNames(ctxT(t), s, ns)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("pods = %v while web-%d is not ready, want %v", got, n, want)
		}
		if _, err := wlMakeReady(ctxT(t), s, ns, "app=web"); err != nil {
			t.Fatal(err)
		}
	}
	// 2. Claims, charged; identity; revision; status.
	wlEventually(t, "status ready 3", func(ctx context.Context) (bool, error) {
		set, err := s.Client.AppsV1().StatefulSets(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && set.Status.ReadyReplicas == 3 && set.Status.AvailableReplicas == 3 && set.Status.CurrentReplicas == 3 && set.Status.UpdatedReplicas == 3, err
	})
	claims, err := stsClaimNames(ctxT(t), s, ns)
	if err != nil || strings.Join(claims, ",") != "data-web-0,data-web-1,data-web-2" {
		t.Fatalf("claims = %v, %v", claims, err)
	}
	used, err := wlQuotaUsed(ctxT(t), s, ns, "storage")
	if err != nil || used["requests.storage"] != 3<<30 || used["persistentvolumeclaims"] != 3 ||
		used["fast.storageclass.storage.k8s.io/requests.storage"] != 3<<30 || used["fast.storageclass.storage.k8s.io/persistentvolumeclaims"] != 3 {
		t.Errorf("quota used = %v, %v", used, err)
	}
	set, err = s.Client.AppsV1().StatefulSets(ns).Get(ctxT(t), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := set.Status
	if st.Replicas != 3 || st.CurrentRevision == "" || st.CurrentRevision != st.UpdateRevision || st.ObservedGeneration != set.Generation || st.CollisionCount == nil || *st.CollisionCount != 0 {
		t.Errorf("status = %+v", st)
	}
	revs, err := s.Client.AppsV1().ControllerRevisions(ns).List(ctxT(t), metav1.ListOptions{})
	if err != nil || len(revs.Items) != 1 {
		t.Fatalf("revisions = %v, %v", revs, err)
	}
	rev := revs.Items[0]
	if ref := metav1.GetControllerOf(&rev); rev.Name != st.UpdateRevision || rev.Revision != 1 || ref == nil || ref.Kind != "StatefulSet" || ref.UID != set.UID || !strings.HasPrefix(rev.Name, "web-") || rev.Labels["controller-revision-hash"] != strings.TrimPrefix(rev.Name, "web-") {
		t.Errorf("revision = %+v", rev)
	}
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("web-%d", i)
		p, err := s.Client.CoreV1().Pods(ns).Get(ctxT(t), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Labels["statefulset.kubernetes.io/pod-name"] != name || p.Labels["apps.kubernetes.io/pod-index"] != fmt.Sprint(i) ||
			p.Labels["controller-revision-hash"] != rev.Name || p.Spec.Hostname != name || p.Spec.Subdomain != "nginx" {
			t.Errorf("pod %s labels %v hostname %q subdomain %q", name, p.Labels, p.Spec.Hostname, p.Spec.Subdomain)
		}
		if len(p.Spec.Volumes) == 0 || p.Spec.Volumes[0].Name != "data" || p.Spec.Volumes[0].PersistentVolumeClaim == nil || p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "data-"+name {
			t.Errorf("pod %s volumes %+v", name, p.Spec.Volumes)
		}
		if ref := metav1.GetControllerOf(p); ref == nil || ref.UID != set.UID {
			t.Errorf("pod %s owner %v", name, p.OwnerReferences)
		}
	}
	// The events are written asynchronously: wait for the last.
	var created []string
	wlEventually(t, "SuccessfulCreate events", func(ctx context.Context) (bool, error) {
		var err error
		created, err = stsEventMessages(ctx, s, ns, "SuccessfulCreate")
		return err == nil && contains(created, "create Pod web-2 in StatefulSet web successful"), err
	})
	for _, m := range []string{"create Claim data-web-0 Pod web-0 in StatefulSet web success", "create Pod web-0 in StatefulSet web successful", "create Pod web-2 in StatefulSet web successful"} {
		if !contains(created, m) {
			t.Errorf("SuccessfulCreate events %q lack %q", created, m)
		}
	}
	// 3. Scale down to 1: web-2 goes first, then web-1; the claims stay.
	w, err := s.Client.CoreV1().Pods(ns).Watch(ctxT(t), metav1.ListOptions{LabelSelector: "app=web", ResourceVersion: set.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := s.Client.AppsV1().StatefulSets(ns).Patch(ctxT(t), "web", "application/merge-patch+json", []byte(`{"spec":{"replicas":1}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for ev := range w.ResultChan() {
		if ev.Type == watch.Deleted {
			deleted = append(deleted, ev.Object.(*corev1.Pod).Name)
		}
		if len(deleted) == 2 {
			break
		}
	}
	if strings.Join(deleted, ",") != "web-2,web-1" {
		t.Errorf("deleted %v, want web-2 then web-1", deleted)
	}
	wlEventually(t, "status replicas 1", func(ctx context.Context) (bool, error) {
		set, err := s.Client.AppsV1().StatefulSets(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && set.Status.Replicas == 1 && set.Status.ReadyReplicas == 1, err
	})
	if claims, err := stsClaimNames(ctxT(t), s, ns); err != nil || len(claims) != 3 {
		t.Errorf("claims after scale down = %v, %v (Retain keeps them)", claims, err)
	}
	s.CheckInvariant()
}

// TestStatefulSetHeldAtStorageQuota: a Parallel StatefulSet of 3 under requests.storage
// 2Gi gets two claims and two pods; the third claim's refusal is a FailedCreate event for
// the claim and one for the pod, in upstream's words; raising the quota completes it.
func TestStatefulSetHeldAtStorageQuota(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "held"
	mkNamespace(t, s, ns)
	mkQuota(t, s, ns, "storage", map[string]string{"requests.storage": "2Gi"})
	if _, err := s.Client.AppsV1().StatefulSets(ns).Create(ctxT(t), stsWithClaims(3, appsv1.ParallelPodManagement), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	forbidden := `persistentvolumeclaims "data-web-2" is forbidden: exceeded quota: storage, requested: requests.storage=1Gi, used: requests.storage=2Gi, limited: requests.storage=2Gi`
	wantClaim := "create Claim data-web-2 for Pod web-2 in StatefulSet web failed error: " + forbidden
	wantPod := "create Pod web-2 in StatefulSet web failed error: failed to create PVC data-web-2: " + forbidden
	wlEventually(t, "FailedCreate events", func(ctx context.Context) (bool, error) {
		msgs, err := stsEventMessages(ctx, s, ns, "FailedCreate")
		return err == nil && contains(msgs, wantClaim) && contains(msgs, wantPod), err
	})
	pods, err := stsPodNames(ctxT(t), s, ns)
	if err != nil || strings.Join(pods, ",") != "web-0,web-1" {
		t.Errorf("pods = %v, %v", pods, err)
	}
	if msgs, _ := stsEventMessages(ctxT(t), s, ns, "FailedCreate"); len(msgs) != 2 {
		t.Errorf("FailedCreate events = %q", msgs)
	}
	if claims, err := stsClaimNames(ctxT(t), s, ns); err != nil || strings.Join(claims, ",") != "data-web-0,data-web-1" {
		t.Errorf("claims = %v, %v", claims, err)
	}
	q, err := s.Client.CoreV1().ResourceQuotas(ns).Get(ctxT(t), "storage", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Spec.Hard["requests.storage"] = resource.MustParse("3Gi")
	if _, err := s.Client.CoreV1().ResourceQuotas(ns).Update(ctxT(t), q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	wlEventually(t, "three pods after raising the quota", func(ctx context.Context) (bool, error) {
		pods, err := stsPodNames(ctx, s, ns)
		return err == nil && len(pods) == 3, err
	})
	s.CheckInvariant()
}

// stsStatus waits, making pods ready as a kubelet would, until cond holds for the set.
func stsWait(t *testing.T, s *servertest.Server, ns, what string, cond func(*appsv1.StatefulSet) bool) *appsv1.StatefulSet {
	t.Helper()
	var set *appsv1.StatefulSet
	wlEventually(t, what, func(ctx context.Context) (bool, error) {
		if _, err := wlMakeReady(ctx, s, ns, "app=web"); err != nil {
			return false, err
		}
		var err error
		set, err = s.Client.AppsV1().StatefulSets(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && set.Status.ObservedGeneration == set.Generation && cond(set), err
	})
	return set
}

func stsPodRevisions(t *testing.T, s *servertest.Server, ns string) map[string]string {
	t.Helper()
	l, err := s.Client.CoreV1().Pods(ns).List(ctxT(t), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range l.Items {
		out[p.Name] = p.Labels["controller-revision-hash"] + "/" + p.Spec.Containers[0].Image
	}
	return out
}

// TestStatefulSetRollingUpdatePartition: a template change with partition 1 updates web-2
// then web-1 and leaves web-0 at the current revision; partition 0 completes the rollout.
func TestStatefulSetRollingUpdatePartition(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "roll"
	mkNamespace(t, s, ns)
	set := stsWithClaims(3, appsv1.OrderedReadyPodManagement)
	set.Spec.VolumeClaimTemplates = nil
	set.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptrInt32(1)}}
	if _, err := s.Client.AppsV1().StatefulSets(ns).Create(ctxT(t), set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	v1 := stsWait(t, s, ns, "3 ready", func(set *appsv1.StatefulSet) bool { return set.Status.ReadyReplicas == 3 })
	rev1 := v1.Status.CurrentRevision
	if _, err := s.Client.AppsV1().StatefulSets(ns).Patch(ctxT(t), "web", "application/merge-patch+json",
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:2"}]}}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	v2 := stsWait(t, s, ns, "2 updated", func(set *appsv1.StatefulSet) bool {
		return set.Status.UpdatedReplicas == 2 && set.Status.ReadyReplicas == 3 && set.Status.CurrentReplicas == 1
	})
	rev2 := v2.Status.UpdateRevision
	if rev2 == rev1 || v2.Status.CurrentRevision != rev1 {
		t.Errorf("revisions: current %s update %s, first %s", v2.Status.CurrentRevision, rev2, rev1)
	}
	want := map[string]string{"web-0": rev1 + "/nginx", "web-1": rev2 + "/nginx:2", "web-2": rev2 + "/nginx:2"}
	if got := stsPodRevisions(t, s, ns); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pods = %v, want %v", got, want)
	}
	if _, err := s.Client.AppsV1().StatefulSets(ns).Patch(ctxT(t), "web", "application/merge-patch+json",
		[]byte(`{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	v3 := stsWait(t, s, ns, "rollout complete", func(set *appsv1.StatefulSet) bool {
		return set.Status.UpdatedReplicas == 3 && set.Status.ReadyReplicas == 3 && set.Status.CurrentRevision == rev2
	})
	if v3.Status.CurrentReplicas != 3 || v3.Status.UpdateRevision != rev2 {
		t.Errorf("status = %+v", v3.Status)
	}
	revs, err := s.Client.AppsV1().ControllerRevisions(ns).List(ctxT(t), metav1.ListOptions{})
	if err != nil || len(revs.Items) != 2 {
		t.Fatalf("revisions = %v, %v", revs, err)
	}
	for _, r := range revs.Items {
		if (r.Name == rev1) != (r.Revision == 1) || (r.Name == rev2) != (r.Revision == 2) {
			t.Errorf("revision %s = %d", r.Name, r.Revision)
		}
	}
}

func ptrInt32(v int32) *int32 { return &v }

// TestStatefulSetRetentionDeleteOnScaleDown: with whenScaled: Delete the claim of a
// scaled-down pod is owned by that pod and deleted with it (the garbage collector), and
// its storage is credited; the claims in range stay.
func TestStatefulSetRetentionDeleteOnScaleDown(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "retain"
	mkNamespace(t, s, ns)
	mkQuota(t, s, ns, "storage", map[string]string{"requests.storage": "10Gi"})
	set := stsWithClaims(2, appsv1.ParallelPodManagement)
	set.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
	}
	if _, err := s.Client.AppsV1().StatefulSets(ns).Create(ctxT(t), set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stsWait(t, s, ns, "2 ready", func(set *appsv1.StatefulSet) bool { return set.Status.ReadyReplicas == 2 })
	if _, err := s.Client.AppsV1().StatefulSets(ns).Patch(ctxT(t), "web", "application/merge-patch+json", []byte(`{"spec":{"replicas":1}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	wlEventually(t, "claim data-web-1 deleted and credited", func(ctx context.Context) (bool, error) {
		claims, err := stsClaimNames(ctx, s, ns)
		if err != nil {
			return false, err
		}
		used, err := wlQuotaUsed(ctx, s, ns, "storage")
		return err == nil && strings.Join(claims, ",") == "data-web-0" && used["requests.storage"] == 1<<30, err
	})
	if pods, err := stsPodNames(ctxT(t), s, ns); err != nil || strings.Join(pods, ",") != "web-0" {
		t.Errorf("pods = %v, %v", pods, err)
	}
	s.CheckInvariant()
}

// TestControllerRevisionAPI: controllerrevisions are served with upstream's validation,
// immutable data and count/controllerrevisions.apps quota.
func TestControllerRevisionAPI(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "revs"
	mkNamespace(t, s, ns)
	mkQuota(t, s, ns, "count", map[string]string{"count/controllerrevisions.apps": "1"})
	crs := s.Client.AppsV1().ControllerRevisions(ns)
	_, err := crs.Create(ctxT(t), &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Revision: -1}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || err.Error() != `ControllerRevision.apps "bad" is invalid: [data: Required value: data is mandatory, revision: Invalid value: -1: must be greater than or equal to 0]` {
		t.Errorf("invalid create: %v", err)
	}
	cr, err := crs.Create(ctxT(t), &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "r1"}, Data: runtime.RawExtension{Raw: []byte(`{"a":1}`)}, Revision: 1}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cr.Data = runtime.RawExtension{Raw: []byte(`{"a":2}`)}
	if _, err := crs.Update(ctxT(t), cr, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "data: Invalid value") || !strings.Contains(err.Error(), "field is immutable") {
		t.Errorf("data update: %v", err)
	}
	_, err = crs.Create(ctxT(t), &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "r2"}, Data: runtime.RawExtension{Raw: []byte(`{}`)}, Revision: 2}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || err.Error() != `controllerrevisions.apps "r2" is forbidden: exceeded quota: count, requested: count/controllerrevisions.apps=1, used: count/controllerrevisions.apps=1, limited: count/controllerrevisions.apps=1` {
		t.Errorf("create over quota: %v", err)
	}
}

// TestStatefulSetRetentionDeleteWhenDeleted: with whenDeleted: Delete the claims are owned
// by the set and go with it (the garbage collector), credited to quota.
func TestStatefulSetRetentionDeleteWhenDeleted(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "whendeleted"
	mkNamespace(t, s, ns)
	mkQuota(t, s, ns, "storage", map[string]string{"requests.storage": "10Gi"})
	set := stsWithClaims(2, appsv1.ParallelPodManagement)
	set.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
	}
	created, err := s.Client.AppsV1().StatefulSets(ns).Create(ctxT(t), set, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stsWait(t, s, ns, "2 ready", func(set *appsv1.StatefulSet) bool { return set.Status.ReadyReplicas == 2 })
	pvc, err := s.Client.CoreV1().PersistentVolumeClaims(ns).Get(ctxT(t), "data-web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(pvc); ref == nil || ref.UID != created.UID || ref.Kind != "StatefulSet" {
		t.Errorf("claim owners = %+v", pvc.OwnerReferences)
	}
	if err := s.Client.AppsV1().StatefulSets(ns).Delete(ctxT(t), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wlEventually(t, "claims and pods gone, storage credited", func(ctx context.Context) (bool, error) {
		claims, err := stsClaimNames(ctx, s, ns)
		if err != nil {
			return false, err
		}
		pods, err := stsPodNames(ctx, s, ns)
		if err != nil {
			return false, err
		}
		used, err := wlQuotaUsed(ctx, s, ns, "storage")
		return err == nil && len(claims) == 0 && len(pods) == 0 && used["requests.storage"] == 0, err
	})
	s.CheckInvariant()
}

// TestStatefulSetOnDelete: with OnDelete a template change replaces no pod until the pod
// is deleted; the replacement runs the update revision.
func TestStatefulSetOnDelete(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "ondelete"
	mkNamespace(t, s, ns)
	set := stsWithClaims(2, appsv1.OrderedReadyPodManagement)
	set.Spec.VolumeClaimTemplates = nil
	set.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	if _, err := s.Client.AppsV1().StatefulSets(ns).Create(ctxT(t), set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	v1 := stsWait(t, s, ns, "2 ready", func(set *appsv1.StatefulSet) bool { return set.Status.ReadyReplicas == 2 })
	if _, err := s.Client.AppsV1().StatefulSets(ns).Patch(ctxT(t), "web", "application/merge-patch+json",
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:2"}]}}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	v2 := stsWait(t, s, ns, "update revision recorded", func(set *appsv1.StatefulSet) bool {
		return set.Status.UpdateRevision != v1.Status.UpdateRevision
	})
	if v2.Status.UpdatedReplicas != 0 || v2.Status.CurrentReplicas != 2 || v2.Status.CurrentRevision != v1.Status.CurrentRevision {
		t.Errorf("status after the template change = %+v", v2.Status)
	}
	want := map[string]string{"web-0": v1.Status.CurrentRevision + "/nginx", "web-1": v1.Status.CurrentRevision + "/nginx"}
	if got := stsPodRevisions(t, s, ns); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pods = %v, want %v (OnDelete replaces none)", got, want)
	}
	if err := s.Client.CoreV1().Pods(ns).Delete(ctxT(t), "web-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	stsWait(t, s, ns, "web-1 at the update revision", func(set *appsv1.StatefulSet) bool {
		return set.Status.UpdatedReplicas == 1 && set.Status.ReadyReplicas == 2
	})
	want["web-1"] = v2.Status.UpdateRevision + "/nginx:2"
	if got := stsPodRevisions(t, s, ns); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pods = %v, want %v", got, want)
	}
	// A failed pod is deleted and created again, at the update revision.
	old, err := s.Client.CoreV1().Pods(ns).Get(ctxT(t), "web-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := wlSetPodPhase(ctxT(t), s, old, corev1.PodFailed); err != nil {
		t.Fatal(err)
	}
	stsWait(t, s, ns, "web-0 recreated", func(set *appsv1.StatefulSet) bool {
		p, err := s.Client.CoreV1().Pods(ns).Get(ctxT(t), "web-0", metav1.GetOptions{})
		return err == nil && p.UID != old.UID && set.Status.UpdatedReplicas == 2 && set.Status.ReadyReplicas == 2
	})
	var evs []corev1.Event
	wlEventually(t, "SuccessfulDelete event", func(ctx context.Context) (bool, error) {
		var err error
		evs, err = wlEvents(ctx, s, ns, "StatefulSet", "web", "SuccessfulDelete")
		return len(evs) > 0, err
	})
	if len(evs) != 1 || evs[0].Message != "delete Pod web-0 in StatefulSet web successful" || evs[0].Type != corev1.EventTypeNormal {
		t.Errorf("SuccessfulDelete events = %+v", evs)
	}
}

// TestStatefulSetHugeReplicas: spec.replicas at its maximum is not an allocation of that
// many slots; the set stops at its pod quota and the server keeps serving.
func TestStatefulSetHugeReplicas(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "huge"
	mkNamespace(t, s, ns)
	mkQuota(t, s, ns, "pods", map[string]string{"pods": "3"})
	set := stsWithClaims(1<<31-1, appsv1.ParallelPodManagement)
	set.Spec.VolumeClaimTemplates = nil
	if _, err := s.Client.AppsV1().StatefulSets(ns).Create(ctxT(t), set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := `create Pod web-3 in StatefulSet web failed error: pods "web-3" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=3, limited: pods=3`
	wlEventually(t, "the refusal of web-3", func(ctx context.Context) (bool, error) {
		msgs, err := stsEventMessages(ctx, s, ns, "FailedCreate")
		return err == nil && contains(msgs, want), err
	})
	if pods, err := stsPodNames(ctxT(t), s, ns); err != nil || strings.Join(pods, ",") != "web-0,web-1,web-2" {
		t.Errorf("pods = %v, %v", pods, err)
	}
	if n := controllerPanics(t, s); n != 0 {
		t.Errorf("controller panics = %v", n)
	}
}

// TestStatefulSetMaxUnavailable: with maxUnavailable 2 (MaxUnavailableStatefulSet is on in
// v1.37) a template change replaces the two highest ordinals at once, and no more while
// they are unavailable.
func TestStatefulSetMaxUnavailable(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "maxunavail"
	mkNamespace(t, s, ns)
	set := stsWithClaims(4, appsv1.OrderedReadyPodManagement)
	set.Spec.VolumeClaimTemplates = nil
	two := intstr.FromInt32(2)
	set.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{MaxUnavailable: &two}}
	if _, err := s.Client.AppsV1().StatefulSets(ns).Create(ctxT(t), set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	v1 := stsWait(t, s, ns, "4 ready", func(set *appsv1.StatefulSet) bool { return set.Status.ReadyReplicas == 4 })
	if _, err := s.Client.AppsV1().StatefulSets(ns).Patch(ctxT(t), "web", "application/merge-patch+json",
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:2"}]}}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// No kubelet now: web-3 and web-2 go at once; web-2 comes back (pending) and, as
	// OrderedReady, web-3 waits for it; web-1 and web-0 stay while two are unavailable.
	var rev2 string
	wlEventually(t, "web-2 at the new revision, web-3 gone", func(ctx context.Context) (bool, error) {
		set, err := s.Client.AppsV1().StatefulSets(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		rev2 = set.Status.UpdateRevision
		names, err := stsPodNames(ctx, s, ns)
		return err == nil && rev2 != v1.Status.UpdateRevision && strings.Join(names, ",") == "web-0,web-1,web-2" && stsPodRevisions(t, s, ns)["web-2"] == rev2+"/nginx:2", err
	})
	want := map[string]string{"web-0": v1.Status.UpdateRevision + "/nginx", "web-1": v1.Status.UpdateRevision + "/nginx", "web-2": rev2 + "/nginx:2"}
	if got := stsPodRevisions(t, s, ns); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pods = %v, want %v", got, want)
	}
	done := stsWait(t, s, ns, "rollout complete", func(set *appsv1.StatefulSet) bool {
		return set.Status.UpdatedReplicas == 4 && set.Status.ReadyReplicas == 4 && set.Status.CurrentRevision == rev2
	})
	if done.Status.CurrentReplicas != 4 {
		t.Errorf("status = %+v", done.Status)
	}
}

// TestStatefulSetOrdinalsStart: spec.ordinals.start numbers the pods and their claims.
func TestStatefulSetOrdinalsStart(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "ordinals"
	mkNamespace(t, s, ns)
	set := stsWithClaims(2, appsv1.ParallelPodManagement)
	set.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 5}
	if _, err := s.Client.AppsV1().StatefulSets(ns).Create(ctxT(t), set, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stsWait(t, s, ns, "2 ready", func(set *appsv1.StatefulSet) bool { return set.Status.ReadyReplicas == 2 })
	if pods, err := stsPodNames(ctxT(t), s, ns); err != nil || strings.Join(pods, ",") != "web-5,web-6" {
		t.Errorf("pods = %v, %v", pods, err)
	}
	if claims, err := stsClaimNames(ctxT(t), s, ns); err != nil || strings.Join(claims, ",") != "data-web-5,data-web-6" {
		t.Errorf("claims = %v, %v", claims, err)
	}
	p, err := s.Client.CoreV1().Pods(ns).Get(ctxT(t), "web-6", metav1.GetOptions{})
	if err != nil || p.Labels["apps.kubernetes.io/pod-index"] != "6" {
		t.Errorf("web-6 labels %v, %v", p.Labels, err)
	}
}

// TestStatefulSetAndDaemonSetAcrossReplicas: two quotad replicas sharing one etcd both run
// the StatefulSet and DaemonSet controllers; deterministic names make them agree, so there
// is one pod per ordinal and per node, one claim per ordinal and one revision each.
func TestStatefulSetAndDaemonSetAcrossReplicas(t *testing.T) {
	t.Parallel()
	a, b := twoReplicas(t)
	ns := "replicas"
	mkNamespace(t, a, ns)
	mkQuota(t, a, ns, "storage", map[string]string{"requests.storage": "100Gi"})
	for _, n := range []string{"n1", "n2", "n3"} {
		dsNode(t, b, n, nil)
	}
	if _, err := a.Client.AppsV1().StatefulSets(ns).Create(ctxT(t), stsWithClaims(5, appsv1.ParallelPodManagement), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Client.AppsV1().DaemonSets(ns).Create(ctxT(t), &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}, Template: wlTemplate("agent")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stsWait(t, a, ns, "5 ready", func(set *appsv1.StatefulSet) bool { return set.Status.ReadyReplicas == 5 })
	dsWait(t, b, ns, "3 ready", func(ds *appsv1.DaemonSet, byNode map[string][]string) bool {
		return ds.Status.NumberReady == 3 && dsNodes(byNode) == "n1,n2,n3"
	})
	if pods, err := stsPodNames(ctxT(t), b, ns); err != nil || strings.Join(pods, ",") != "web-0,web-1,web-2,web-3,web-4" {
		t.Errorf("stateful pods = %v, %v", pods, err)
	}
	all, err := a.Client.CoreV1().Pods(ns).List(ctxT(t), metav1.ListOptions{})
	if err != nil || len(all.Items) != 8 {
		t.Errorf("pods = %d, %v; want 5 stateful + 3 daemon", len(all.Items), err)
	}
	if claims, err := stsClaimNames(ctxT(t), b, ns); err != nil || len(claims) != 5 {
		t.Errorf("claims = %v, %v", claims, err)
	}
	used, err := wlQuotaUsed(ctxT(t), b, ns, "storage")
	if err != nil || used["requests.storage"] != 5<<30 {
		t.Errorf("quota used = %v, %v", used, err)
	}
	revs, err := b.Client.AppsV1().ControllerRevisions(ns).List(ctxT(t), metav1.ListOptions{})
	if err != nil || len(revs.Items) != 2 {
		t.Errorf("revisions = %d, %v; want one per set", len(revs.Items), err)
	}
	a.CheckInvariant()
}

// TestStatefulSetMountsClaimTemplates: a container may mount a volumeClaimTemplate by name
// without a volume of that name in the template (clusterloader2's load test does): upstream
// validates the template with the claims' volumes added. A mount of a name that is neither
// is still refused, with upstream's message, and the pods get the claim's volume.
func TestStatefulSetMountsClaimTemplates(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "mounts"
	mkNamespace(t, s, ns)
	set := stsWithClaims(1, appsv1.ParallelPodManagement)
	set.Spec.Template.Spec.Hostname = "not a hostname" // set by the controller: not validated
	set.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/var/data"}}
	if _, err := s.Client.AppsV1().StatefulSets(ns).Create(ctxT(t), set, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a mount of a claim template: %v", err)
	}
	wlEventually(t, "web-0 with the claim's volume", func(ctx context.Context) (bool, error) {
		p, err := s.Client.CoreV1().Pods(ns).Get(ctx, "web-0", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		for _, v := range p.Spec.Volumes {
			if v.Name == "data" && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "data-web-0" {
				return true, nil
			}
		}
		return false, fmt.Errorf("web-0's volumes: %+v", p.Spec.Volumes)
	})

	bad := stsWithClaims(1, appsv1.ParallelPodManagement)
	bad.Name = "bad"
	bad.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "pv", MountPath: "/var/pv"}}
	_, err := s.Client.AppsV1().StatefulSets(ns).Create(ctxT(t), bad, metav1.CreateOptions{})
	want := `StatefulSet.apps "bad" is invalid: spec.template.spec.containers[0].volumeMounts[0].name: Not found: "pv"`
	if !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("a mount of no volume: %v, want %s", err, want)
	}
}
