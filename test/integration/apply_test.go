package integration

import (
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestServerSideApplyOwnsFields: server-side apply tracks who owns which field, as
// kube-apiserver does. A manager that stops naming a field removes it; another manager
// changing an owned field gets upstream's 409 unless it forces, and then owns it; the
// quota keeps charging throughout, and status is owned by nobody who applies.
func TestServerSideApplyOwnsFields(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "ssa")
	quotas := s.Client.CoreV1().ResourceQuotas("ssa")
	apply := func(manager string, force bool, hard corev1.ResourceList) (*corev1.ResourceQuota, error) {
		return quotas.Apply(ctx, corev1ac.ResourceQuota("team", "ssa").WithSpec(corev1ac.ResourceQuotaSpec().WithHard(hard)),
			metav1.ApplyOptions{FieldManager: manager, Force: force})
	}
	hard := func(q *corev1.ResourceQuota) string {
		return resourceListString(q.Spec.Hard)
	}

	// 1. Created by applying; the manager owns what it named, not status.
	q, err := apply("platform", false, corev1.ResourceList{corev1.ResourcePods: resource.MustParse("5"), corev1.ResourceRequestsCPU: resource.MustParse("2")})
	if err != nil {
		t.Fatal(err)
	}
	if len(q.ManagedFields) != 1 || q.ManagedFields[0].Manager != "platform" || q.ManagedFields[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Fatalf("managedFields after the first apply: %+v", q.ManagedFields)
	}
	if got, want := string(q.ManagedFields[0].FieldsV1.Raw), `{"f:spec":{"f:hard":{"f:pods":{},"f:requests.cpu":{}}}}`; got != want {
		t.Fatalf("platform owns %s, want %s", got, want)
	}

	// 2. A field the manager no longer names is removed.
	if q, err = apply("platform", false, corev1.ResourceList{corev1.ResourcePods: resource.MustParse("5")}); err != nil {
		t.Fatal(err)
	}
	if got := hard(q); got != "pods=5" {
		t.Fatalf("hard after dropping requests.cpu: %s, want pods=5", got)
	}

	// 3. Another manager changing an owned field conflicts, with upstream's text.
	_, err = apply("tenant", false, corev1.ResourceList{corev1.ResourcePods: resource.MustParse("6")})
	want := `Apply failed with 1 conflict: conflict with "platform": .spec.hard.pods`
	if !apierrors.IsConflict(err) || err.Error() != want {
		t.Fatalf("conflicting apply: %v, want 409 %s", err, want)
	}

	// 4. Forced, it takes the field; the former owner no longer removes it.
	if q, err = apply("tenant", true, corev1.ResourceList{corev1.ResourcePods: resource.MustParse("6")}); err != nil {
		t.Fatal(err)
	}
	if q, err = apply("platform", false, corev1.ResourceList{corev1.ResourceLimitsMemory: resource.MustParse("1Gi")}); err != nil {
		t.Fatal(err)
	}
	if got := hard(q); got != "limits.memory=1Gi,pods=6" {
		t.Fatalf("hard after the takeover: %s, want limits.memory=1Gi,pods=6", got)
	}

	// 5. Charging goes on under the applied limits, and the managers are kept.
	if _, err := s.Client.CoreV1().Pods("ssa").Create(ctx, pod("p", "", "64Mi"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "ssa", "team", map[string]string{"pods": "1", "limits.memory": "64Mi"})
	q, err = quotas.Get(ctx, "team", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var managers []string
	for _, e := range q.ManagedFields {
		managers = append(managers, e.Manager)
	}
	// Both entries are Apply: upstream orders them by time (in seconds), then by manager, so
	// tenant (which applied first) comes first unless both applied within the same second.
	wantManagers := []string{"platform", "tenant"}
	if len(q.ManagedFields) == 2 && q.ManagedFields[0].Time != nil && q.ManagedFields[1].Time != nil &&
		q.ManagedFields[0].Time.Unix() != q.ManagedFields[1].Time.Unix() {
		wantManagers = []string{"tenant", "platform"}
	}
	if !slices.Equal(managers, wantManagers) {
		t.Fatalf("managers after charging: %v, want %v", managers, wantManagers)
	}
}

// resourceListString renders a resource list as sorted name=quantity pairs.
func resourceListString(l corev1.ResourceList) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(l)) {
		v := l[name]
		parts = append(parts, string(name)+"="+v.String())
	}
	return strings.Join(parts, ",")
}

// TestServerSideApplyListItemsByKey: items of associative lists are owned by their keys,
// with a key field's default filled in (a port applied without a protocol is the TCP port):
// a manager that names another port instead removes the first, as upstream does.
func TestServerSideApplyListItemsByKey(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "ssa-svc")
	svcs := s.Client.CoreV1().Services("ssa-svc")
	for _, port := range []int32{80, 81} {
		cfg := corev1ac.Service("web", "ssa-svc").WithSpec(corev1ac.ServiceSpec().WithPorts(corev1ac.ServicePort().WithPort(port)))
		if _, err := svcs.Apply(ctx, cfg, metav1.ApplyOptions{FieldManager: "deployer"}); err != nil {
			t.Fatalf("apply port %d: %v", port, err)
		}
	}
	svc, err := svcs.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 81 || svc.Spec.Ports[0].Protocol != corev1.ProtocolTCP {
		t.Fatalf("ports after applying 81 instead of 80: %+v", svc.Spec.Ports)
	}
}

// TestEditTakesOwnership: an ordinary write to an applied object makes its writer the
// owner of what it changed (kubectl edit, patch, scale), so the applier naming the old value
// conflicts with it instead of undoing it; an object nobody applied to records nothing.
func TestEditTakesOwnership(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "ssa-edit")
	quotas := s.Client.CoreV1().ResourceQuotas("ssa-edit")
	cfg := corev1ac.ResourceQuota("team", "ssa-edit").WithSpec(corev1ac.ResourceQuotaSpec().WithHard(corev1.ResourceList{corev1.ResourcePods: resource.MustParse("5")}))
	if _, err := quotas.Apply(ctx, cfg, metav1.ApplyOptions{FieldManager: "platform"}); err != nil {
		t.Fatal(err)
	}
	if _, err := quotas.Patch(ctx, "team", types.MergePatchType, []byte(`{"spec":{"hard":{"pods":"7"}}}`), metav1.PatchOptions{FieldManager: "editor"}); err != nil {
		t.Fatal(err)
	}
	_, err := quotas.Apply(ctx, cfg, metav1.ApplyOptions{FieldManager: "platform"})
	want := `Apply failed with 1 conflict: conflict with "editor" using v1: .spec.hard.pods`
	if !apierrors.IsConflict(err) || err.Error() != want {
		t.Fatalf("applying over an edit: %v, want 409 %s", err, want)
	}
	// Untracked: a quota created and patched without apply carries no managedFields.
	mkQuota(t, s, "ssa-edit", "plain", map[string]string{"pods": "1"})
	q, err := quotas.Patch(ctx, "plain", types.MergePatchType, []byte(`{"spec":{"hard":{"pods":"2"}}}`), metav1.PatchOptions{FieldManager: "editor"})
	if err != nil || len(q.ManagedFields) != 0 {
		t.Fatalf("patching an object nobody applied to: managedFields %+v, err %v", q.ManagedFields, err)
	}
}

// TestManagedFieldsSentByClients: valid managedFields a client sends with a create are kept
// (tools copy objects with them), invalid ones are dropped rather than refused, and an update
// that leaves them out keeps the stored ones, its writer taking over the field it changed.
func TestManagedFieldsSentByClients(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "mf")
	cms := s.Client.CoreV1().ConfigMaps("mf")
	valid := []metav1.ManagedFieldsEntry{{Manager: "copier", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{"f:a":{}}}`)}}}
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "copied", ManagedFields: valid}, Data: map[string]string{"a": "b"}}, metav1.CreateOptions{})
	if err != nil || len(cm.ManagedFields) != 1 || cm.ManagedFields[0].Manager != "copier" {
		t.Fatalf("create with valid managedFields: %+v, %v", cm.ManagedFields, err)
	}
	// An update that leaves them out keeps them, and its writer takes over what it changed.
	cm.ManagedFields = nil
	cm.Data["a"] = "c"
	cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "editor"})
	if err != nil || len(cm.ManagedFields) != 1 || cm.ManagedFields[0].Manager != "editor" || cm.ManagedFields[0].Operation != metav1.ManagedFieldsOperationUpdate {
		t.Fatalf("update leaving managedFields out: %+v, %v", cm.ManagedFields, err)
	}
	invalid := []metav1.ManagedFieldsEntry{{Manager: "broken", Operation: "Sideways", APIVersion: "v1", FieldsType: "Bogus"}}
	cm, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "broken", ManagedFields: invalid}}, metav1.CreateOptions{})
	if err != nil || len(cm.ManagedFields) != 0 {
		t.Fatalf("create with invalid managedFields: %+v, %v", cm.ManagedFields, err)
	}
}
