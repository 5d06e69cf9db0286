package integration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/server/servertest"
)

// setPodPhase writes a pod's phase through /status.
func setPodPhase(ctx context.Context, s *servertest.Server, ns, name string, phase corev1.PodPhase) error {
	p, err := s.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	p.Status.Phase = phase
	_, err = s.Client.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	return err
}

// TestRegistryStatusFlipIsRecorded: a pod flipped from Succeeded back to Running through
// /status raises usage, but a /status write reports a fact (design.md §2, I2): it is
// recorded exactly, even past hard, as upstream never refuses it. Requests are then refused
// until usage falls; credits always pass.
func TestRegistryStatusFlipIsRecorded(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "flip")
	mkQuota(t, s, "flip", "q", map[string]string{"pods": "2"})
	pods := s.Client.CoreV1().Pods("flip")
	for _, name := range []string{"done", "a", "b"} {
		if _, err := pods.Create(ctx, pod(name, "", ""), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		phase := corev1.PodRunning
		if name == "done" {
			phase = corev1.PodSucceeded
		}
		if err := setPodPhase(ctx, s, "flip", name, phase); err != nil {
			t.Fatalf("%s to %s: %v", name, phase, err)
		}
	}
	expectUsed(t, s, "flip", "q", map[string]string{"pods": "2"})
	if err := setPodPhase(ctx, s, "flip", "done", corev1.PodRunning); err != nil {
		t.Fatalf("reported flip refused: %v", err)
	}
	expectUsed(t, s, "flip", "q", map[string]string{"pods": "3"})
	_, err := pods.Create(ctx, pod("c", "", ""), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "c" is forbidden: exceeded quota: q, requested: pods=1, used: pods=3, limited: pods=2`)
	for _, name := range []string{"a", "b"} {
		if err := setPodPhase(ctx, s, "flip", name, corev1.PodFailed); err != nil {
			t.Fatal(err)
		}
	}
	expectUsed(t, s, "flip", "q", map[string]string{"pods": "1"})
	if _, err := pods.Create(ctx, pod("c", "", ""), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create within hard: %v", err)
	}
	expectUsed(t, s, "flip", "q", map[string]string{"pods": "2"})
}

// TestRegistryRaisingUpdatesAreChecked: every kind of request that raises usage, by update
// or patch, is refused over hard with upstream's text and changes nothing; the facts a
// /status write reports are recorded even past hard.
func TestRegistryRaisingUpdatesAreChecked(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "raise")
	mkQuota(t, s, "raise", "q", map[string]string{
		"pods": "1", "services.nodeports": "1", "services.loadbalancers": "0", "requests.storage": "2Gi",
	})
	pods := s.Client.CoreV1().Pods("raise")
	svcs := s.Client.CoreV1().Services("raise")
	pvcs := s.Client.CoreV1().PersistentVolumeClaims("raise")

	// Fixtures: one running pod (pods=1), one failed pod, a two-port ClusterIP service, a
	// bound 1Gi claim.
	for _, name := range []string{"failed", "running"} {
		if _, err := pods.Create(ctx, pod(name, "", ""), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		phase := corev1.PodRunning
		if name == "failed" {
			phase = corev1.PodFailed
		}
		if err := setPodPhase(ctx, s, "raise", name, phase); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svcs.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{
		Ports: []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "b", Port: 81}},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	claim, err := pvcs.Create(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: rl("storage", "1Gi")},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	claim.Status.Phase = corev1.ClaimBound
	claim.Status.Capacity = rl("storage", "1Gi")
	if _, err := pvcs.UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"pods": "1", "services.nodeports": "0", "services.loadbalancers": "0", "requests.storage": "1Gi"}
	expectUsed(t, s, "raise", "q", want)

	tests := []struct {
		name  string
		write func() error
		// get returns the written object's resourceVersion, which a refusal keeps.
		get  func() (string, error)
		want string
	}{
		{
			name: "service ClusterIP to NodePort",
			write: func() error {
				_, err := svcs.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"type":"NodePort"}}`), metav1.PatchOptions{})
				return err
			},
			get:  rvOf(func() (metav1.Object, error) { return svcs.Get(ctx, "web", metav1.GetOptions{}) }),
			want: `services "web" is forbidden: exceeded quota: q, requested: services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1`,
		},
		{
			name: "service ClusterIP to LoadBalancer",
			write: func() error {
				svc, err := svcs.Get(ctx, "web", metav1.GetOptions{})
				if err != nil {
					return err
				}
				svc.Spec.Type = corev1.ServiceTypeLoadBalancer
				_, err = svcs.Update(ctx, svc, metav1.UpdateOptions{})
				return err
			},
			get:  rvOf(func() (metav1.Object, error) { return svcs.Get(ctx, "web", metav1.GetOptions{}) }),
			want: `services "web" is forbidden: exceeded quota: q, requested: services.loadbalancers=1,services.nodeports=2, used: services.loadbalancers=0,services.nodeports=0, limited: services.loadbalancers=0,services.nodeports=1`,
		},
		{
			name: "bound claim resized past requests.storage",
			write: func() error {
				_, err := pvcs.Patch(ctx, "data", types.MergePatchType, []byte(`{"spec":{"resources":{"requests":{"storage":"5Gi"}}}}`), metav1.PatchOptions{})
				return err
			},
			get:  rvOf(func() (metav1.Object, error) { return pvcs.Get(ctx, "data", metav1.GetOptions{}) }),
			want: `persistentvolumeclaims "data" is forbidden: exceeded quota: q, requested: requests.storage=4Gi, used: requests.storage=1Gi, limited: requests.storage=2Gi`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rv, err := tt.get()
			if err != nil {
				t.Fatal(err)
			}
			expectForbidden(t, tt.write(), tt.want)
			if after, err := tt.get(); err != nil || after != rv {
				t.Errorf("refused write changed the object: resourceVersion %s → %s (%v)", rv, after, err)
			}
			expectUsed(t, s, "raise", "q", want)
		})
	}

	// The same raises reported through /status are facts (design.md §2, I2): recorded
	// exactly, past hard, by update and by patch.
	if err := setPodPhase(ctx, s, "raise", "failed", corev1.PodPending); err != nil {
		t.Fatalf("pod Failed to Pending through /status: %v", err)
	}
	want["pods"] = "2"
	expectUsed(t, s, "raise", "q", want)
	if _, err := pvcs.Patch(ctx, "data", types.MergePatchType, []byte(`{"status":{"allocatedResources":{"storage":"3Gi"}}}`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("claim allocatedResources through a /status merge patch: %v", err)
	}
	want["requests.storage"] = "3Gi"
	expectUsed(t, s, "raise", "q", want)
}

// rvOf returns a function reading an object's resourceVersion.
func rvOf(get func() (metav1.Object, error)) func() (string, error) {
	return func() (string, error) {
		o, err := get()
		if err != nil {
			return "", err
		}
		return o.GetResourceVersion(), nil
	}
}
