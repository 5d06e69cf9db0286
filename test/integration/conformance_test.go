package integration

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestConformanceVersion: /version, read by client-go's discovery as kubectl does, reports
// the emulated Kubernetes v1.37 in apimachinery's version.Info shape.
func TestConformanceVersion(t *testing.T) {
	s := servertest.Start(t)
	v, err := s.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.Major != "1" || v.Minor != "37" || v.EmulationMajor != "1" || v.EmulationMinor != "37" ||
		v.MinCompatibilityMajor != "1" || v.MinCompatibilityMinor != "36" ||
		v.GitVersion != "v1.37.0+quotad" || v.BuildDate == "" || v.GoVersion == "" || v.Compiler != "gc" || v.Platform == "" {
		t.Fatalf("version: %+v", v)
	}
}

// TestConformanceQuotaStatusWrite: a /status write of a ResourceQuota is stored as written
// (its answer and a watch show the written status.hard, as upstream's conformance spec
// expects), then quotad restores the exact status at once: the next event and every read
// after the write returns show status.hard = spec.hard with exact usage, and admission
// judges on spec.hard.
func TestConformanceQuotaStatusWrite(t *testing.T) {
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rq"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	q := mkQuota(t, s, "rq", "q", map[string]string{"cpu": "1", "memory": "1Gi", "pods": "1"})
	rqs := s.Client.CoreV1().ResourceQuotas("rq")
	w, err := rqs.Watch(ctx, metav1.ListOptions{ResourceVersion: q.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// 1. A status write keeps what it wrote in the answer.
	patched, err := rqs.Patch(ctx, "q", types.StrategicMergePatchType, []byte(`{"status":{"hard":{"cpu":"2","memory":"2Gi","pods":"5"}}}`), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	if !equalRL(patched.Status.Hard, rl("cpu", "2", "memory", "2Gi", "pods", "5")) || !equalRL(patched.Spec.Hard, rl("cpu", "1", "memory", "1Gi", "pods", "1")) {
		t.Fatalf("status write answered spec %v status %v", patched.Spec.Hard, patched.Status.Hard)
	}
	// 2. The watch shows the written status, then the restored one.
	sawWritten := false
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch closed")
			}
			got := ev.Object.(*corev1.ResourceQuota)
			if equalRL(got.Status.Hard, rl("cpu", "2", "memory", "2Gi", "pods", "5")) {
				sawWritten = true
				continue
			}
			if sawWritten && equalRL(got.Status.Hard, got.Spec.Hard) {
				if !equalRL(got.Status.Used, rl("cpu", "0", "memory", "0", "pods", "0")) {
					t.Fatalf("restored used %v", got.Status.Used)
				}
				goto restored
			}
		case <-ctx.Done():
			t.Fatalf("no written then restored status in the watch (written seen: %v)", sawWritten)
		}
	}
restored:
	// 3. Once the write has answered, reads show the exact status.
	cur, err := rqs.Get(ctx, "q", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !equalRL(cur.Status.Hard, cur.Spec.Hard) {
		t.Fatalf("status not restored after the write: %v", cur.Status.Hard)
	}
	// 4. An update of the status sending only hard (as client-go's UpdateStatus in the spec)
	// is answered with the server's exact used.
	cur.Status = corev1.ResourceQuotaStatus{Hard: rl("cpu", "1", "memory", "1Gi", "pods", "1")}
	upd, err := rqs.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !equalRL(upd.Status.Used, rl("cpu", "0", "memory", "0", "pods", "0")) {
		t.Fatalf("UpdateStatus answered used %v", upd.Status.Used)
	}
	// 5. Admission judges on spec.hard: one pod, not five.
	if _, err := rqs.Patch(ctx, "q", types.StrategicMergePatchType, []byte(`{"status":{"hard":{"pods":"5"}}}`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	pod := podWith("p1", rl("cpu", "100m", "memory", "10Mi"), nil)
	if _, err := s.Client.CoreV1().Pods("rq").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod.Name = "p2"
	_, err = s.Client.CoreV1().Pods("rq").Create(ctx, pod, metav1.CreateOptions{})
	expectForbidden(t, err, `pods "p2" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1`)
	expectUsed(t, s, "rq", "q", map[string]string{"pods": "1", "cpu": "100m", "memory": "10Mi"})
}

// TestConformanceNamespaceStatusPatch: a namespace's /status patch applies the metadata it
// carries (upstream's namespace status strategy keeps only the spec), as the conformance
// spec "should apply changes to a namespace status" expects; other kinds' /status writes
// still keep their metadata.
func TestConformanceNamespaceStatusPatch(t *testing.T) {
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "nss"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patched, err := s.Client.CoreV1().Namespaces().Patch(ctx, "nss", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"e2e-patched-ns-status":"nss"}},"status":{"conditions":[{"type":"StatusPatch","status":"True","reason":"E2E","message":"Patched by an e2e test"}]}}`),
		metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	if patched.Annotations["e2e-patched-ns-status"] != "nss" || len(patched.Status.Conditions) == 0 || patched.Status.Conditions[len(patched.Status.Conditions)-1].Reason != "E2E" {
		t.Fatalf("patched namespace: annotations %v conditions %v", patched.Annotations, patched.Status.Conditions)
	}
	got, err := s.Client.CoreV1().Namespaces().Get(ctx, "nss", metav1.GetOptions{})
	if err != nil || got.Annotations["e2e-patched-ns-status"] != "nss" {
		t.Fatalf("stored namespace annotations %v (%v)", got.Annotations, err)
	}
	if _, err := s.Client.CoreV1().PersistentVolumeClaims("nss").Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "c"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: rl("storage", "1Gi")}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pvc, err := s.Client.CoreV1().PersistentVolumeClaims("nss").Patch(ctx, "c", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"a":"b"}},"status":{"phase":"Bound"}}`), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pvc.Annotations["a"]; ok || pvc.Status.Phase != corev1.ClaimBound {
		t.Fatalf("pvc status patch: annotations %v phase %s", pvc.Annotations, pvc.Status.Phase)
	}
}

func equalRL(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}
