package integration

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestPodMovesBetweenScopes: setting activeDeadlineSeconds moves a pod from the
// NotTerminating quota to the Terminating one in the same write; BestEffort pods are
// charged only to BestEffort quotas.
func TestPodMovesBetweenScopes(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "sc")
	mkQuotaScoped(t, s, "sc", "long", map[string]string{"pods": "5", "requests.cpu": "1"}, corev1.ResourceQuotaScopeNotTerminating)
	mkQuotaScoped(t, s, "sc", "short", map[string]string{"pods": "5", "requests.cpu": "1"}, corev1.ResourceQuotaScopeTerminating)
	pods := s.Client.CoreV1().Pods("sc")
	if _, err := pods.Create(ctx, podWith("worker", rl("cpu", "300m"), nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "sc", "long", map[string]string{"pods": "1", "requests.cpu": "300m"})
	expectUsed(t, s, "sc", "short", map[string]string{"pods": "0", "requests.cpu": "0"})
	if _, err := pods.Patch(ctx, "worker", types.MergePatchType, []byte(`{"spec":{"activeDeadlineSeconds":600}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "sc", "long", map[string]string{"pods": "0", "requests.cpu": "0"})
	expectUsed(t, s, "sc", "short", map[string]string{"pods": "1", "requests.cpu": "300m"})
	// A pod without requests is NotTerminating too, so the quota tracking requests.cpu
	// refuses it, as upstream.
	_, err := pods.Create(ctx, pod("be", "", ""), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "be" is forbidden: failed quota: long: must specify requests.cpu for: c`)

	// BestEffort: pods with no requests or limits at all are charged only there.
	mkNamespace(t, s, "be")
	mkQuotaScoped(t, s, "be", "besteffort", map[string]string{"pods": "1"}, corev1.ResourceQuotaScopeBestEffort)
	mkQuotaScoped(t, s, "be", "burstable", map[string]string{"pods": "5"}, corev1.ResourceQuotaScopeNotBestEffort)
	bePods := s.Client.CoreV1().Pods("be")
	if _, err := bePods.Create(ctx, pod("be1", "", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := bePods.Create(ctx, podWith("sized", rl("cpu", "100m"), nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "be", "besteffort", map[string]string{"pods": "1"})
	expectUsed(t, s, "be", "burstable", map[string]string{"pods": "1"})
	_, err = bePods.Create(ctx, pod("be2", "", ""), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "be2" is forbidden: exceeded quota: besteffort, requested: pods=1, used: pods=1, limited: pods=1`)
}
