package validation

import (
	"encoding/json"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/randfill"

	"github.com/quotad/quotad/internal/quota/quotatest"
	"github.com/quotad/quotad/internal/registry/defaults"
)

// kinds returns a fresh empty object of every kind Validate knows.
func kinds() []runtime.Object {
	return []runtime.Object{
		&corev1.Pod{}, &corev1.PodTemplate{}, &corev1.Service{}, &corev1.PersistentVolumeClaim{},
		&corev1.ReplicationController{}, &corev1.Namespace{}, &corev1.Secret{}, &corev1.ConfigMap{},
		&corev1.LimitRange{}, &corev1.ServiceAccount{}, &corev1.Event{}, &corev1.Node{},
		&appsv1.Deployment{}, &appsv1.ReplicaSet{}, &appsv1.StatefulSet{}, &appsv1.DaemonSet{},
		&batchv1.Job{}, &batchv1.CronJob{}, &schedulingv1.PriorityClass{}, &storagev1.StorageClass{},
		&corev1.PersistentVolume{}, &corev1.Endpoints{}, &corev1.ResourceQuota{},
		&rbacv1.Role{}, &rbacv1.ClusterRole{}, &rbacv1.RoleBinding{}, &rbacv1.ClusterRoleBinding{},
		&coordinationv1.Lease{}, &networkingv1.NetworkPolicy{}, &networkingv1.Ingress{}, &networkingv1.IngressClass{},
		&nodev1.RuntimeClass{}, &autoscalingv2.HorizontalPodAutoscaler{}, &autoscalingv1.HorizontalPodAutoscaler{}, &eventsv1.Event{},
	}
}

// exercise runs everything the registry runs on a decoded object, turning
// a panic into a test failure that names the input.
func exercise(t *testing.T, obj runtime.Object, what string) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%s: %T panicked: %v", what, obj, r)
		}
	}()
	run(obj)
}

// run is exercise's work, without the test.
func run(obj runtime.Object) {
	old := obj.DeepCopyObject()
	_ = Validate(obj)
	defaults.Apply(obj)
	if j, ok := obj.(*batchv1.Job); ok {
		defaults.JobSelector(j)
	}
	if s, ok := obj.(*corev1.Service); ok {
		defaults.NormalizeServiceClusterIPs(s, nil)
	}
	for _, e := range Validate(obj) {
		_ = e.Error()
	}
	for _, e := range ValidateUpdate(obj, old) {
		_ = e.Error()
	}
	for _, e := range ValidateUpdate(obj, obj.DeepCopyObject()) {
		_ = e.Error()
	}
}

func TestRandomObjectsNeverPanic(t *testing.T) {
	const seeds = 40
	for _, k := range kinds() {
		for seed := int64(0); seed < seeds; seed++ {
			obj := k.DeepCopyObject()
			f := randfill.NewWithSeed(seed).NilChance(0.3).NumElements(0, 3).MaxDepth(12).Funcs(
				func(q *resource.Quantity, c randfill.Continue) {
					*q = *resource.NewMilliQuantity(c.Int63n(1<<40)-(1<<20), resource.DecimalSI)
				},
			)
			f.Fill(obj)
			exercise(t, obj, fmt.Sprintf("seed %d", seed))
		}
	}
}

// TestRandomObjectsBeyondBound: objects whose quantities are anything a store may hold
// from before quantities were bounded (any mantissa, exponents up to ±a billion) validate
// within quotatest.StallBound (Quantity.Cmp against 1e1000000000 took hours).
func TestRandomObjectsBeyondBound(t *testing.T) {
	const seeds = 10
	for _, k := range kinds() {
		for seed := int64(0); seed < seeds; seed++ {
			obj := k.DeepCopyObject()
			f := randfill.NewWithSeed(seed).NilChance(0.3).NumElements(0, 3).MaxDepth(12).Funcs(
				func(q *resource.Quantity, c randfill.Continue) {
					*q = *resource.NewScaledQuantity(c.Int63n(1<<40)-(1<<20), resource.Scale(c.Int31n(2000000000)-1000000000))
				},
			)
			f.Fill(obj)
			what := fmt.Sprintf("%T seed %d", obj, seed)
			quotatest.Within(t, quotatest.StallBound, what, func() (err error) {
				defer func() {
					if r := recover(); r != nil {
						err = fmt.Errorf("panicked: %v", r)
					}
				}()
				run(obj)
				return nil
			})
		}
	}
}

func FuzzDecodedObjects(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"a","namespace":"n"},"spec":{"containers":[{"name":"c","image":"i","resources":{"limits":{"cpu":"1"}}}]}}`))
	f.Add([]byte(`{"spec":{"type":"LoadBalancer","clusterIP":"None","ports":[{"port":80,"targetPort":"x"}]}}`))
	f.Add([]byte(`{"spec":{"limits":[{"type":"Container","max":{"cpu":"-1"},"min":{"cpu":"0"},"maxLimitRequestRatio":{"cpu":"0"}}]}}`))
	f.Add([]byte(`{"spec":{"schedule":"TZ=","jobTemplate":{"spec":{"completionMode":"Indexed"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, k := range kinds() {
			obj := k.DeepCopyObject()
			if err := json.Unmarshal(data, obj); err != nil {
				continue
			}
			exercise(t, obj, fmt.Sprintf("input %q", data))
		}
	})
}
