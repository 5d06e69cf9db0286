package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestRandomizedStressKeepsInvariant interleaves creates, deletes, phase changes, service
// type changes, PVC resizes and quota edits from parallel clients, checking the quota
// invariant while they run and at the end.
func TestRandomizedStressKeepsInvariant(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	const ns = "stress"
	mkNamespace(t, s, ns)
	mkQuota(t, s, ns, "compute", map[string]string{"pods": "20", "requests.cpu": "4", "requests.memory": "4Gi", "count/pods": "40"})
	mkQuota(t, s, ns, "objects", map[string]string{"services": "10", "services.loadbalancers": "3", "services.nodeports": "6",
		"persistentvolumeclaims": "8", "requests.storage": "20Gi", "configmaps": "15"})
	notTerminating := mkQuotaScoped(t, s, ns, "long-running", map[string]string{"pods": "12", "requests.cpu": "3"}, corev1.ResourceQuotaScopeNotTerminating)
	_ = notTerminating

	seed := uint64(20261121)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for i := 0; i < 60; i++ {
				if err := randomOp(ctx, s, ns, rng, w, i); err != nil {
					errs <- fmt.Errorf("worker %d op %d: %w", w, i, err)
					return
				}
				if i%20 == 0 {
					s.CheckInvariant()
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func mkQuotaScoped(t *testing.T, s *servertest.Server, ns, name string, hard map[string]string, scope corev1.ResourceQuotaScope) *corev1.ResourceQuota {
	t.Helper()
	rl := corev1.ResourceList{}
	for k, v := range hard {
		rl[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	q, err := s.Client.CoreV1().ResourceQuotas(ns).Create(ctxT(t), &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ResourceQuotaSpec{Hard: rl, Scopes: []corev1.ResourceQuotaScope{scope}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// randomOp performs one random write; refusals (403) and races with other workers (404,
// 409) are expected outcomes, anything else is an error.
func randomOp(ctx context.Context, s *servertest.Server, ns string, rng *rand.Rand, w, i int) error {
	c := s.Client.CoreV1()
	name := fmt.Sprintf("o-%d", rng.IntN(8))
	var err error
	switch rng.IntN(9) {
	case 0, 1:
		p := podWith(fmt.Sprintf("p-%d-%d", w, i), rl("cpu", fmt.Sprintf("%dm", 50+rng.IntN(400)), "memory", fmt.Sprintf("%dMi", 10+rng.IntN(500))), nil)
		if rng.IntN(3) == 0 {
			d := int64(600)
			p.Spec.ActiveDeadlineSeconds = &d
		}
		_, err = c.Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	case 2:
		pods, lerr := c.Pods(ns).List(ctx, metav1.ListOptions{})
		if lerr != nil || len(pods.Items) == 0 {
			return lerr
		}
		p := pods.Items[rng.IntN(len(pods.Items))]
		if rng.IntN(2) == 0 {
			err = c.Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{})
		} else {
			p.Status.Phase = []corev1.PodPhase{corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed}[rng.IntN(3)]
			_, err = c.Pods(ns).UpdateStatus(ctx, &p, metav1.UpdateOptions{})
		}
	case 3:
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s" + name}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
		_, err = c.Services(ns).Create(ctx, svc, metav1.CreateOptions{})
	case 4:
		typ := []string{"ClusterIP", "NodePort", "LoadBalancer"}[rng.IntN(3)]
		_, err = c.Services(ns).Patch(ctx, "s"+name, types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"type":%q}}`, typ)), metav1.PatchOptions{})
	case 5:
		if rng.IntN(2) == 0 {
			err = c.Services(ns).Delete(ctx, "s"+name, metav1.DeleteOptions{})
		} else {
			err = c.ConfigMaps(ns).Delete(ctx, "c"+name, metav1.DeleteOptions{})
		}
	case 6:
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "v" + name}, Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: rl("storage", fmt.Sprintf("%dGi", 1+rng.IntN(3)))},
		}}
		if _, err = c.PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err == nil {
			got, gerr := c.PersistentVolumeClaims(ns).Get(ctx, pvc.Name, metav1.GetOptions{})
			if gerr == nil {
				got.Status.Phase = corev1.ClaimBound
				_, err = c.PersistentVolumeClaims(ns).UpdateStatus(ctx, got, metav1.UpdateOptions{})
			}
		}
	case 7:
		size := fmt.Sprintf("%dGi", 2+rng.IntN(4))
		_, err = c.PersistentVolumeClaims(ns).Patch(ctx, "v"+name, types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"resources":{"requests":{"storage":%q}}}}`, size)), metav1.PatchOptions{})
		if apierrors.IsInvalid(err) {
			err = nil // shrinking is refused by validation, as upstream
		}
	case 8:
		if rng.IntN(2) == 0 {
			_, err = c.ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c" + name}}, metav1.CreateOptions{})
		} else {
			hard := fmt.Sprintf("%d", 10+rng.IntN(15))
			_, err = c.ResourceQuotas(ns).Patch(ctx, "compute", types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"hard":{"pods":%q}}}`, hard)), metav1.PatchOptions{})
		}
	}
	if err == nil || apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
