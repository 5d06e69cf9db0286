package integration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/server/servertest"
)

func mkQuota(t *testing.T, s *servertest.Server, ns, name string, hard map[string]string) *corev1.ResourceQuota {
	t.Helper()
	rl := corev1.ResourceList{}
	for k, v := range hard {
		rl[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	q, err := s.Client.CoreV1().ResourceQuotas(ns).Create(ctxT(t), &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ResourceQuotaSpec{Hard: rl},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// used returns the quota's status.used as name → canonical string.
func used(t *testing.T, s *servertest.Server, ns, name string) map[string]string {
	t.Helper()
	q, err := s.Client.CoreV1().ResourceQuotas(ns).Get(ctxT(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range q.Status.Used {
		out[string(k)] = v.String()
	}
	return out
}

func expectUsed(t *testing.T, s *servertest.Server, ns, name string, want map[string]string) {
	t.Helper()
	got := used(t, s, ns, name)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("quota %s used[%s] = %q, want %q (all: %v)", name, k, got[k], v, got)
		}
	}
}

func expectForbidden(t *testing.T, err error, msg string) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Fatalf("err = %v, want 403 Forbidden", err)
	}
	if err.Error() != msg {
		t.Errorf("403 text:\n got %s\nwant %s", err.Error(), msg)
	}
}

func podWith(name string, req, lim corev1.ResourceList) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Image: "nginx", Resources: corev1.ResourceRequirements{Requests: req, Limits: lim},
		}}},
	}
}

func rl(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

// TestRequestLimitTable: charged the request; limit only → charged the limit; neither →
// refused when tracked.
func TestRequestLimitTable(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "q")
	mkQuota(t, s, "q", "compute", map[string]string{"requests.cpu": "1", "requests.memory": "1Gi", "limits.cpu": "2", "limits.memory": "2Gi"})
	pods := s.Client.CoreV1().Pods("q")
	if _, err := pods.Create(ctx, podWith("req", rl("cpu", "100m", "memory", "100Mi"), rl("cpu", "200m", "memory", "200Mi")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "q", "compute", map[string]string{"requests.cpu": "100m", "limits.cpu": "200m", "requests.memory": "100Mi", "limits.memory": "200Mi"})
	if _, err := pods.Create(ctx, podWith("lim", nil, rl("cpu", "300m", "memory", "300Mi")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "q", "compute", map[string]string{"requests.cpu": "400m", "limits.cpu": "500m", "requests.memory": "400Mi", "limits.memory": "500Mi"})
	_, err := pods.Create(ctx, podWith("none", nil, nil), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "none" is forbidden: failed quota: compute: must specify limits.cpu for: c; limits.memory for: c; requests.cpu for: c; requests.memory for: c`)
	_, err = pods.Create(ctx, podWith("big", rl("cpu", "700m", "memory", "1Mi"), rl("cpu", "700m", "memory", "1Mi")), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "big" is forbidden: exceeded quota: compute, requested: requests.cpu=700m, used: requests.cpu=400m, limited: requests.cpu=1`)
	// dryRun is checked, never charged.
	if _, err := pods.Create(ctx, podWith("dry", rl("cpu", "100m", "memory", "1Mi"), rl("cpu", "100m", "memory", "1Mi")), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	_, err = pods.Create(ctx, podWith("drybig", rl("cpu", "900m", "memory", "1Mi"), rl("cpu", "900m", "memory", "1Mi")), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("dry-run over quota: %v", err)
	}
	expectUsed(t, s, "q", "compute", map[string]string{"requests.cpu": "400m"})
	// Delete credits at once.
	if err := pods.Delete(ctx, "req", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "q", "compute", map[string]string{"requests.cpu": "300m", "limits.cpu": "300m", "requests.memory": "300Mi", "limits.memory": "300Mi"})
}

// TestTerminalPodsCredited: a pod reaching Succeeded keeps only count/pods.
func TestTerminalPodsCredited(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "q")
	mkQuota(t, s, "q", "q", map[string]string{"pods": "1", "count/pods": "5", "requests.cpu": "1"})
	pods := s.Client.CoreV1().Pods("q")
	p, err := pods.Create(ctx, podWith("a", rl("cpu", "1"), nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "q", "q", map[string]string{"pods": "1", "count/pods": "1", "requests.cpu": "1"})
	_, err = pods.Create(ctx, podWith("b", rl("cpu", "1"), nil), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "b" is forbidden: exceeded quota: q, requested: pods=1,requests.cpu=1, used: pods=1,requests.cpu=1, limited: pods=1,requests.cpu=1`)
	p.Status.Phase = corev1.PodSucceeded
	if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "q", "q", map[string]string{"pods": "0", "count/pods": "1", "requests.cpu": "0"})
	if _, err := pods.Create(ctx, podWith("b", rl("cpu", "1"), nil), metav1.CreateOptions{}); err != nil {
		t.Fatalf("after the first pod succeeded: %v", err)
	}
	expectUsed(t, s, "q", "q", map[string]string{"pods": "1", "count/pods": "2", "requests.cpu": "1"})
}

// TestServiceTypeChange: services.loadbalancers and nodeports follow type changes at once.
func TestServiceTypeChange(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "q")
	mkQuota(t, s, "q", "svc", map[string]string{"services": "5", "services.loadbalancers": "1", "services.nodeports": "2"})
	svcs := s.Client.CoreV1().Services("q")
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{
		Ports: []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "b", Port: 81}},
	}}
	if _, err := svcs.Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "q", "svc", map[string]string{"services": "1", "services.loadbalancers": "0", "services.nodeports": "0"})
	patch := []byte(`{"spec":{"type":"LoadBalancer"}}`)
	if _, err := svcs.Patch(ctx, "web", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "q", "svc", map[string]string{"services": "1", "services.loadbalancers": "1", "services.nodeports": "2"})
	lb2 := svc.DeepCopy()
	lb2.Name = "web2"
	lb2.Spec.Type = corev1.ServiceTypeLoadBalancer
	_, err := svcs.Create(ctx, lb2, metav1.CreateOptions{})
	expectForbidden(t, err, `services "web2" is forbidden: exceeded quota: svc, requested: services.loadbalancers=1,services.nodeports=2, used: services.loadbalancers=1,services.nodeports=2, limited: services.loadbalancers=1,services.nodeports=2`)
	if _, err := svcs.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"type":"ClusterIP","ports":[{"name":"a","port":80,"nodePort":null},{"name":"b","port":81,"nodePort":null}]}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "q", "svc", map[string]string{"services": "1", "services.loadbalancers": "0", "services.nodeports": "0"})
}

// TestPVCStorageQuota: requests.storage, per-class names and resizes.
func TestPVCStorageQuota(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "q")
	mkQuota(t, s, "q", "st", map[string]string{
		"requests.storage": "10Gi", "persistentvolumeclaims": "3",
		"gold.storageclass.storage.k8s.io/requests.storage":       "5Gi",
		"gold.storageclass.storage.k8s.io/persistentvolumeclaims": "1",
	})
	gold := "gold"
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{
		StorageClassName: &gold, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources: corev1.VolumeResourceRequirements{Requests: rl("storage", "2Gi")},
	}}
	pvcs := s.Client.CoreV1().PersistentVolumeClaims("q")
	if _, err := pvcs.Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "q", "st", map[string]string{"requests.storage": "2Gi", "persistentvolumeclaims": "1",
		"gold.storageclass.storage.k8s.io/requests.storage": "2Gi", "gold.storageclass.storage.k8s.io/persistentvolumeclaims": "1"})
	var err error
	second := pvc.DeepCopy()
	second.Name = "more"
	_, err = pvcs.Create(ctx, second, metav1.CreateOptions{})
	expectForbidden(t, err, `persistentvolumeclaims "more" is forbidden: exceeded quota: st, requested: gold.storageclass.storage.k8s.io/persistentvolumeclaims=1, used: gold.storageclass.storage.k8s.io/persistentvolumeclaims=1, limited: gold.storageclass.storage.k8s.io/persistentvolumeclaims=1`)
	// Resize (allowed for bound claims): the charge follows.
	bound, err := pvcs.Get(ctx, "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bound.Status.Phase = corev1.ClaimBound
	if _, err := pvcs.UpdateStatus(ctx, bound, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := pvcs.Patch(ctx, "data", types.MergePatchType, []byte(`{"spec":{"resources":{"requests":{"storage":"4Gi"}}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "q", "st", map[string]string{"requests.storage": "4Gi", "gold.storageclass.storage.k8s.io/requests.storage": "4Gi"})
	_, err = pvcs.Patch(ctx, "data", types.MergePatchType, []byte(`{"spec":{"resources":{"requests":{"storage":"6Gi"}}}}`), metav1.PatchOptions{})
	expectForbidden(t, err, `persistentvolumeclaims "data" is forbidden: exceeded quota: st, requested: gold.storageclass.storage.k8s.io/requests.storage=2Gi, used: gold.storageclass.storage.k8s.io/requests.storage=4Gi, limited: gold.storageclass.storage.k8s.io/requests.storage=5Gi`)
	if err := pvcs.Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "q", "st", map[string]string{"requests.storage": "0", "persistentvolumeclaims": "0"})
}

// TestQuotaEditIsExactAtOnce: adding names to spec.hard computes their usage in the same
// write; there is never a "status unknown" window.
func TestQuotaEditIsExactAtOnce(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "q")
	for _, n := range []string{"a", "b"} {
		if _, err := s.Client.CoreV1().ConfigMaps("q").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Client.CoreV1().Pods("q").Create(ctx, podWith("p", rl("cpu", "250m"), nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	q := mkQuota(t, s, "q", "edit", map[string]string{"pods": "10"})
	if q.Status.Used[corev1.ResourcePods] != resource.MustParse("1") {
		t.Errorf("create response used = %v", q.Status.Used)
	}
	q.Spec.Hard[corev1.ResourceConfigMaps] = resource.MustParse("10")
	q.Spec.Hard["count/configmaps"] = resource.MustParse("10")
	q.Spec.Hard[corev1.ResourceRequestsCPU] = resource.MustParse("1")
	q.Spec.Hard["count/resourcequotas"] = resource.MustParse("1")
	updated, err := s.Client.CoreV1().ResourceQuotas("q").Update(ctx, q, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// kube-root-ca.crt plus a and b.
	want := map[corev1.ResourceName]string{"pods": "1", "configmaps": "3", "count/configmaps": "3", "requests.cpu": "250m", "count/resourcequotas": "1"}
	for k, v := range want {
		got := updated.Status.Used[k]
		if got.String() != v {
			t.Errorf("update response used[%s] = %s, want %s", k, got.String(), v)
		}
	}
	// count/resourcequotas: 1 refuses a second quota.
	_, err = s.Client.CoreV1().ResourceQuotas("q").Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "second"}, Spec: corev1.ResourceQuotaSpec{Hard: rl("pods", "1")}}, metav1.CreateOptions{})
	expectForbidden(t, err, `resourcequotas "second" is forbidden: exceeded quota: edit, requested: count/resourcequotas=1, used: count/resourcequotas=1, limited: count/resourcequotas=1`)
}

// TestMultipleQuotasTightestRefuses: every matching quota is charged; the tightest refuses.
func TestMultipleQuotasTightestRefuses(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "q")
	mkQuota(t, s, "q", "loose", map[string]string{"pods": "10"})
	mkQuota(t, s, "q", "tight", map[string]string{"pods": "1"})
	if _, err := s.Client.CoreV1().Pods("q").Create(ctx, pod("a", "", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "q", "loose", map[string]string{"pods": "1"})
	expectUsed(t, s, "q", "tight", map[string]string{"pods": "1"})
	_, err := s.Client.CoreV1().Pods("q").Create(ctx, pod("b", "", ""), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "b" is forbidden: exceeded quota: tight, requested: pods=1, used: pods=1, limited: pods=1`)
	expectUsed(t, s, "q", "loose", map[string]string{"pods": "1"})
}

func TestLimitRangeDefaultsChargedByQuota(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "q")
	_, err := s.Client.CoreV1().LimitRanges("q").Create(ctx, &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Name: "defaults"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer, Default: rl("cpu", "500m", "memory", "256Mi"), DefaultRequest: rl("cpu", "250m", "memory", "128Mi"),
			Max: rl("cpu", "1"),
		}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mkQuota(t, s, "q", "compute", map[string]string{"requests.cpu": "500m", "limits.cpu": "1", "requests.memory": "1Gi", "limits.memory": "2Gi"})
	pods := s.Client.CoreV1().Pods("q")
	for _, n := range []string{"a", "b"} {
		if _, err := pods.Create(ctx, pod(n, "", ""), metav1.CreateOptions{}); err != nil {
			t.Fatalf("pod %s without resources: %v", n, err)
		}
	}
	expectUsed(t, s, "q", "compute", map[string]string{"requests.cpu": "500m", "limits.cpu": "1", "requests.memory": "256Mi", "limits.memory": "512Mi"})
	_, err = pods.Create(ctx, pod("c", "", ""), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "c" is forbidden: exceeded quota: compute, requested: limits.cpu=500m,requests.cpu=250m, used: limits.cpu=1,requests.cpu=500m, limited: limits.cpu=1,requests.cpu=500m`)
	_, err = pods.Create(ctx, podWith("huge", nil, rl("cpu", "2")), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "huge" is forbidden: maximum cpu usage per Container is 1, but limit is 2`)
}

func metaCreate() metav1.CreateOptions { return metav1.CreateOptions{} }

func metaName(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

func mkConfigMap(m *metav1.ObjectMeta) *corev1.ConfigMap { return &corev1.ConfigMap{ObjectMeta: *m} }
