package workloads

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/controller/fake"
	"github.com/quotad/quotad/internal/registry"
)

// podListing is the fake client counting the reads of pods from storage (lists).
type podListing struct {
	*fake.Client
	lists atomic.Int64
}

func (c *podListing) count(res *registry.Resource) {
	if res != nil && res.GVR == podGVR {
		c.lists.Add(1)
	}
}

func (c *podListing) ListObjects(ctx context.Context, res *registry.Resource, ns string) ([]runtime.Object, int64, error) {
	c.count(res)
	return c.Client.ListObjects(ctx, res, ns)
}

func (c *podListing) ListEach(ctx context.Context, res *registry.Resource, ns string, opts registry.ListOptions, pageSize int64, page func(rv string, items []runtime.Object) error) error {
	c.count(res)
	return c.Client.ListEach(ctx, res, ns, opts, pageSize, page)
}

// TestDeploymentRecreateWaitsForOldPods: a Recreate Deployment whose old ReplicaSet is
// scaled to 0 but whose old pods are still running (terminating) makes no new ReplicaSet;
// the first old pod to go (deleted, or Succeeded) syncs nothing, the last one syncs the
// Deployment through its event (the controller's own watches and queue, no resync), and
// the new ReplicaSet is made at full scale. The pods are read from the index, never
// listed from storage.
func TestDeploymentRecreateWaitsForOldPods(t *testing.T) {
	for _, tc := range []struct {
		name string
		gone func(t *testing.T, fc *fake.Client, pod string)
	}{
		{"deleted", func(t *testing.T, fc *fake.Client, pod string) {
			// Its termination ends: the last finalizer goes, and the pod with it.
			res := fc.Catalogue().Get(podGVR)
			if _, err := fc.Update(context.Background(), res, "ns", pod, "", func(o runtime.Object) (runtime.Object, error) {
				o.(*corev1.Pod).Finalizers = nil
				return o, nil
			}, registry.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			if fc.Object(podGVR, "ns", pod) != nil {
				t.Fatalf("pod %s not deleted", pod)
			}
		}},
		{"succeeded", func(t *testing.T, fc *fake.Client, pod string) {
			setPhase(t, fc, pod, corev1.PodSucceeded)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc, _, opts := newFake()
			two, zero := int32(2), int32(0)
			d := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "d-uid", Generation: 1},
				Spec: appsv1.DeploymentSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
					Template: template(), Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}},
			}
			d.Spec.Template.Spec.Containers[0].Image = "nginx:2"
			// The old ReplicaSet, scaled to 0: its pods are terminating (not counted in its
			// status) but still Running.
			oldTemplate := template()
			oldTemplate.Labels = map[string]string{"app": "web", podTemplateLabel: "old"}
			old := &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-old", UID: "rs-old", Labels: oldTemplate.Labels,
					Annotations:     map[string]string{RevisionAnnotation: "1"},
					OwnerReferences: []metav1.OwnerReference{*controllerRef(d, deploymentKind)}},
				Spec: appsv1.ReplicaSetSpec{Replicas: &zero, Selector: &metav1.LabelSelector{MatchLabels: oldTemplate.Labels}, Template: oldTemplate},
			}
			fc.Add(d, old)
			deleting := metav1.NewTime(testNow)
			for _, name := range []string{"web-old-a", "web-old-b"} {
				p := podFromTemplate(&oldTemplate, name, controllerRef(old, replicaSetKind))
				p.Namespace, p.DeletionTimestamp, p.Finalizers = "ns", &deleting, []string{"test.quotad.io/terminating"}
				p.Status.Phase = corev1.PodRunning
				fc.Add(p)
			}
			store := &podListing{Client: fc}
			dc := NewDeployment(store, nil, opts)
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			q := controller.NewQueue("deployment-test")
			t.Cleanup(q.ShutDown)
			dc.watch(ctx, q)
			// drain syncs the queued keys until, with every index holding every change made so
			// far (so every handler of those changes has run), the queue is empty; it returns
			// the keys synced.
			drain := func() []string {
				t.Helper()
				var synced []string
				for {
					for _, x := range []controller.Cache{dc.deployments, dc.replicaSets, dc.pods} {
						if err := x.WaitFor(ctx, fc.Revision()); err != nil {
							t.Fatal(err)
						}
					}
					if q.Len() == 0 {
						return synced
					}
					key, _ := q.Get()
					syncOK(t, dc.sync, key)
					q.Forget(key)
					q.Done(key)
					synced = append(synced, key)
				}
			}
			replicaSets := func() []string {
				var out []string
				for _, o := range fc.Objects(replicaSetGVR, "ns") {
					rs := o.(*appsv1.ReplicaSet)
					out = append(out, fmt.Sprintf("%s=%d", rs.Name, *rs.Spec.Replicas))
				}
				return out
			}

			if synced := drain(); len(synced) == 0 {
				t.Fatal("the Deployment was never synced")
			}
			if got := fc.Object(deploymentGVR, "ns", "web").(*appsv1.Deployment).Status.ObservedGeneration; got != 1 {
				t.Fatalf("observedGeneration %d, want 1", got)
			}
			if got := fmt.Sprint(replicaSets()); got != "[web-old=0]" {
				t.Fatalf("ReplicaSets %s while old pods run, want only [web-old=0]", got)
			}
			if got := podNames(podsOf(fc, "ns")); fmt.Sprint(got) != "[web-old-a web-old-b]" {
				t.Fatalf("pods %v while old pods run", got)
			}

			// One old pod goes; the other still runs: nothing to sync.
			tc.gone(t, fc, "web-old-a")
			if synced := drain(); len(synced) != 0 {
				t.Fatalf("synced %v while an old pod still runs", synced)
			}

			// The last old pod goes: its event queues the Deployment, whose sync makes the
			// new ReplicaSet at full scale.
			tc.gone(t, fc, "web-old-b")
			synced := drain()
			if len(synced) == 0 || synced[0] != "ns/web" {
				t.Fatalf("synced %v after the last old pod went, want ns/web", synced)
			}
			hash := computeHash(&d.Spec.Template, nil)
			if got, want := fmt.Sprint(replicaSets()), fmt.Sprintf("[web-%s=2 web-old=0]", hash); got != want {
				t.Fatalf("ReplicaSets %s, want %s", got, want)
			}
			if got := events(t, fc, "ns", "ScalingReplicaSet", 1); len(got) != 1 || got[0] != "Scaled up replica set web-"+hash+" to 2" {
				t.Fatalf("ScalingReplicaSet events %q", got)
			}
			if n := store.lists.Load(); n != 0 {
				t.Fatalf("pods listed from storage %d times, want none (read from the index)", n)
			}
		})
	}
}
