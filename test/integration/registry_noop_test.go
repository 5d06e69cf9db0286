package integration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestRegistryNoOpWritesWriteNothing: an update or patch that changes nothing (of the
// object or of its /status) returns the stored resourceVersion and emits no watch event, as
// upstream, for every kind, ResourceQuotas included (whose status the server recomputes).
func TestRegistryNoOpWritesWriteNothing(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "noop")
	mkQuota(t, s, "noop", "q", map[string]string{"pods": "5", "configmaps": "5"})
	if _, err := s.Client.CoreV1().Pods("noop").Create(ctx, pod("p", "100m", "64Mi"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client.CoreV1().ConfigMaps("noop").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	quotas := s.Client.CoreV1().ResourceQuotas("noop")
	pods := s.Client.CoreV1().Pods("noop")
	cms := s.Client.CoreV1().ConfigMaps("noop")

	type target struct {
		get   func(context.Context) (metav1.Object, error)
		watch func(context.Context, metav1.ListOptions) (watch.Interface, error)
		// label makes a real change, to follow the no-op in the watch.
		label func(context.Context, string) error
	}
	labelPatch := func(patch func(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) error) func(context.Context, string) error {
		return func(ctx context.Context, v string) error {
			return patch(ctx, "", types.MergePatchType, []byte(`{"metadata":{"labels":{"step":"`+v+`"}}}`), metav1.PatchOptions{})
		}
	}
	quotaT := target{
		get:   func(ctx context.Context) (metav1.Object, error) { return quotas.Get(ctx, "q", metav1.GetOptions{}) },
		watch: quotas.Watch,
		label: labelPatch(func(ctx context.Context, _ string, pt types.PatchType, b []byte, o metav1.PatchOptions, sub ...string) error {
			_, err := quotas.Patch(ctx, "q", pt, b, o, sub...)
			return err
		}),
	}
	podT := target{
		get:   func(ctx context.Context) (metav1.Object, error) { return pods.Get(ctx, "p", metav1.GetOptions{}) },
		watch: pods.Watch,
		label: labelPatch(func(ctx context.Context, _ string, pt types.PatchType, b []byte, o metav1.PatchOptions, sub ...string) error {
			_, err := pods.Patch(ctx, "p", pt, b, o, sub...)
			return err
		}),
	}
	cmT := target{
		get:   func(ctx context.Context) (metav1.Object, error) { return cms.Get(ctx, "cm", metav1.GetOptions{}) },
		watch: cms.Watch,
		label: labelPatch(func(ctx context.Context, _ string, pt types.PatchType, b []byte, o metav1.PatchOptions, sub ...string) error {
			_, err := cms.Patch(ctx, "cm", pt, b, o, sub...)
			return err
		}),
	}
	nss := s.Client.CoreV1().Namespaces()
	nsT := target{
		get: func(ctx context.Context) (metav1.Object, error) { return nss.Get(ctx, "noop", metav1.GetOptions{}) },
		watch: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = "metadata.name=noop"
			return nss.Watch(ctx, o)
		},
		label: labelPatch(func(ctx context.Context, _ string, pt types.PatchType, b []byte, o metav1.PatchOptions, sub ...string) error {
			_, err := nss.Patch(ctx, "noop", pt, b, o, sub...)
			return err
		}),
	}

	tests := []struct {
		name   string
		target target
		// noop writes the object back unchanged and returns the resourceVersion answered.
		noop func(context.Context) (string, error)
	}{
		{"quota merge patch of spec.hard to its value", quotaT, func(ctx context.Context) (string, error) {
			q, err := quotas.Patch(ctx, "q", types.MergePatchType, []byte(`{"spec":{"hard":{"pods":"5"}}}`), metav1.PatchOptions{})
			return rvOrEmpty(q, err)
		}},
		{"quota update of what was read", quotaT, func(ctx context.Context) (string, error) {
			q, err := quotas.Get(ctx, "q", metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			q, err = quotas.Update(ctx, q, metav1.UpdateOptions{})
			return rvOrEmpty(q, err)
		}},
		{"quota update without resourceVersion", quotaT, func(ctx context.Context) (string, error) {
			q, err := quotas.Get(ctx, "q", metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			q.ResourceVersion = ""
			q, err = quotas.Update(ctx, q, metav1.UpdateOptions{})
			return rvOrEmpty(q, err)
		}},
		{"quota /status update of what was read", quotaT, func(ctx context.Context) (string, error) {
			q, err := quotas.Get(ctx, "q", metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			q, err = quotas.UpdateStatus(ctx, q, metav1.UpdateOptions{})
			return rvOrEmpty(q, err)
		}},
		{"quota /status update with a made-up used (the server's to compute)", quotaT, func(ctx context.Context) (string, error) {
			q, err := quotas.Get(ctx, "q", metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			q.Status.Used = rl("pods", "99", "configmaps", "0")
			q, err = quotas.UpdateStatus(ctx, q, metav1.UpdateOptions{})
			if err == nil && (q.Status.Used.Pods().String() != "1" || len(q.Status.Used) != 2) {
				t.Errorf("answered status.used %v, want the stored pods=1 configmaps=2", q.Status.Used)
			}
			return rvOrEmpty(q, err)
		}},
		{"quota /status empty merge patch", quotaT, func(ctx context.Context) (string, error) {
			q, err := quotas.Patch(ctx, "q", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{}, "status")
			return rvOrEmpty(q, err)
		}},
		{"pod update of what was read", podT, func(ctx context.Context) (string, error) {
			p, err := pods.Get(ctx, "p", metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			p, err = pods.Update(ctx, p, metav1.UpdateOptions{})
			return rvOrEmpty(p, err)
		}},
		{"pod /status update of what was read", podT, func(ctx context.Context) (string, error) {
			p, err := pods.Get(ctx, "p", metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			p, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
			return rvOrEmpty(p, err)
		}},
		{"pod /status merge patch of the phase to its value", podT, func(ctx context.Context) (string, error) {
			p, err := pods.Patch(ctx, "p", types.MergePatchType, []byte(`{"status":{"phase":"Pending"}}`), metav1.PatchOptions{}, "status")
			return rvOrEmpty(p, err)
		}},
		{"namespace /finalize with its finalizers", nsT, func(ctx context.Context) (string, error) {
			n, err := nss.Get(ctx, "noop", metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			n, err = nss.Finalize(ctx, n, metav1.UpdateOptions{})
			return rvOrEmpty(n, err)
		}},
		{"configmap strategic merge patch of data to its value", cmT, func(ctx context.Context) (string, error) {
			c, err := cms.Patch(ctx, "cm", types.StrategicMergePatchType, []byte(`{"data":{"k":"v"}}`), metav1.PatchOptions{})
			return rvOrEmpty(c, err)
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := tt.target.get(ctx)
			if err != nil {
				t.Fatal(err)
			}
			w, err := tt.target.watch(ctx, metav1.ListOptions{ResourceVersion: before.GetResourceVersion()})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			rv, err := tt.noop(ctx)
			if err != nil {
				t.Fatalf("no-op write: %v", err)
			}
			if rv != before.GetResourceVersion() {
				t.Errorf("no-op write answered resourceVersion %s, stored was %s", rv, before.GetResourceVersion())
			}
			after, err := tt.target.get(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if after.GetResourceVersion() != before.GetResourceVersion() {
				t.Errorf("no-op write moved the resourceVersion %s → %s", before.GetResourceVersion(), after.GetResourceVersion())
			}
			// The next event is the real change that follows, not the no-op.
			step := string(rune('a' + i))
			if err := tt.target.label(ctx, step); err != nil {
				t.Fatal(err)
			}
			ev := nextEvent(t, w)
			m, ok := ev.Object.(metav1.Object)
			if ev.Type != watch.Modified || !ok || m.GetLabels()["step"] != step {
				t.Errorf("first event after the no-op: %s %v, want the label change to %q", ev.Type, ev.Object, step)
			}
		})
	}
	expectUsed(t, s, "noop", "q", map[string]string{"pods": "1", "configmaps": "2"})
}

// rvOrEmpty returns an answered object's resourceVersion.
func rvOrEmpty(o metav1.Object, err error) (string, error) {
	if err != nil {
		return "", err
	}
	return o.GetResourceVersion(), nil
}
