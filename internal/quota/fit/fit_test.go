package fit_test

import (
	"encoding/json"
	"flag"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/quota/evaluator"
	"github.com/quotad/quotad/internal/quota/fit"
	"github.com/quotad/quotad/internal/quota/quotatest"
)

func ptr[T any](v T) *T { return &v }

// list builds a resource list from alternating names and values.
func list(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

// rq is a settled quota: status.hard = spec.hard, used as given (missing names 0).
func rq(t *testing.T, name string, hard, used []string, annotations ...string) fit.Quota {
	t.Helper()
	h := list(hard...)
	u := list(used...)
	for n := range h {
		if _, ok := u[n]; !ok {
			u[n] = resource.MustParse("0")
		}
	}
	q := corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name)},
		Spec:       corev1.ResourceQuotaSpec{Hard: h},
		Status:     corev1.ResourceQuotaStatus{Hard: h, Used: u},
	}
	for i := 0; i+1 < len(annotations); i += 2 {
		if q.Annotations == nil {
			q.Annotations = map[string]string{}
		}
		q.Annotations[annotations[i]] = annotations[i+1]
	}
	return fit.Quota{Quota: q}
}

func pod(name string, requests, limits []string) *corev1.Pod {
	rl := func(pairs []string) corev1.ResourceList {
		if len(pairs) == 0 {
			return nil
		}
		return list(pairs...)
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx",
			Resources: corev1.ResourceRequirements{Requests: rl(requests), Limits: rl(limits)}}}},
	}
}

func deployment(name string, replicas int32, p *corev1.Pod) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: ""},
		Spec: appsv1.DeploymentSpec{Replicas: ptr(replicas),
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}}, Spec: p.Spec}},
	}
}

var (
	podsGR        = schema.GroupResource{Resource: "pods"}
	deploymentsGR = schema.GroupResource{Group: "apps", Resource: "deployments"}
)

// workloadInput builds the Input admission and the review build for a workload write.
func workloadInput(quotas []fit.Quota, gr schema.GroupResource, obj, old runtime.Object, override *int32) fit.Input {
	in := fit.Input{Quotas: quotas, Registry: evaluator.NewRegistry(), Resource: gr, Object: obj, OldObject: old}
	if p, ok := obj.(*corev1.Pod); ok {
		in.Pod = p
	} else if t, _, ok := fit.PodsOf(obj); ok {
		in.Pod = fit.TemplatePod(t, "ns", "x-")
		in.Claims = fit.TemplateClaims(obj, "ns")
	}
	in.Replicas = fit.Added(obj, old, override)
	return in
}

// TestReview pins whole answers (the status as JSON) in testdata/review.golden.
var _ = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestReview(t *testing.T) {
	small := pod("p", []string{"cpu", "500m", "memory", "128Mi"}, []string{"cpu", "1", "memory", "256Mi"})
	stored := func(d *appsv1.Deployment) *appsv1.Deployment { d.ResourceVersion = "7"; return d }
	crq := &clusterquota.ClusterResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "platform", UID: "c1",
		Annotations: map[string]string{quota.EnforcementAnnotation: "Warn"}},
		Spec:   clusterquota.ClusterResourceQuotaSpec{Quota: corev1.ResourceQuotaSpec{Hard: list("count/pods", "4")}},
		Status: clusterquota.ClusterResourceQuotaStatus{Total: corev1.ResourceQuotaStatus{Hard: list("count/pods", "4"), Used: list("count/pods", "3")}}}
	view := clusterquota.View(crq, "ns")
	view.Annotations = crq.Annotations
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "ns"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: list("storage", "5Gi")}}}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "batch", Namespace: "ns"},
		Spec: batchv1.JobSpec{Parallelism: ptr[int32](4), Completions: ptr[int32](3), Template: corev1.PodTemplateSpec{Spec: small.Spec}}}

	cases := []struct {
		name string
		in   fit.Input
	}{
		{"deployment of 10, room for 3", workloadInput([]fit.Quota{
			rq(t, "compute", []string{"requests.cpu", "3", "limits.cpu", "20"}, []string{"requests.cpu", "1500m", "limits.cpu", "2"}),
		}, deploymentsGR, deployment("web", 10, small), nil, nil)},
		{"deployment of 10, two resources bind at once", workloadInput([]fit.Quota{
			rq(t, "compute", []string{"requests.cpu", "2", "requests.memory", "512Mi"}, nil),
		}, deploymentsGR, deployment("web", 10, small), nil, nil)},
		{"deployment fits, count quota charged by the object", workloadInput([]fit.Quota{
			rq(t, "counts", []string{"count/deployments.apps", "2", "pods", "10"}, []string{"count/deployments.apps", "1"}),
		}, deploymentsGR, deployment("web", 3, small), nil, nil)},
		{"deployment refused by its count quota", workloadInput([]fit.Quota{
			rq(t, "counts", []string{"count/deployments.apps", "1", "pods", "10"}, []string{"count/deployments.apps", "1"}),
		}, deploymentsGR, deployment("web", 3, small), nil, nil)},
		{"deployment scaled from 2 to 6, room for 3 more", workloadInput([]fit.Quota{
			rq(t, "compute", []string{"requests.cpu", "2500m"}, []string{"requests.cpu", "1"}),
		}, deploymentsGR, stored(deployment("web", 6, small)), stored(deployment("web", 2, small)), nil)},
		{"deployment scaled down adds nothing", workloadInput([]fit.Quota{
			rq(t, "compute", []string{"requests.cpu", "1"}, []string{"requests.cpu", "1"}),
		}, deploymentsGR, stored(deployment("web", 1, small)), stored(deployment("web", 2, small)), nil)},
		{"replicas override", workloadInput([]fit.Quota{
			rq(t, "pods", []string{"pods", "5"}, []string{"pods", "1"}),
		}, deploymentsGR, deployment("web", 1, small), nil, ptr[int32](8))},
		{"pod fits", workloadInput([]fit.Quota{
			rq(t, "compute", []string{"requests.cpu", "1", "pods", "2"}, nil),
		}, podsGR, small, nil, nil)},
		{"pod refused", workloadInput([]fit.Quota{
			rq(t, "compute", []string{"requests.cpu", "1"}, []string{"requests.cpu", "800m"}),
		}, podsGR, small, nil, nil)},
		{"pod copies", workloadInput([]fit.Quota{
			rq(t, "compute", []string{"requests.cpu", "2"}, nil),
		}, podsGR, small, nil, ptr[int32](5))},
		{"pod over a Warn quota is allowed and does not fit", workloadInput([]fit.Quota{
			rq(t, "soft", []string{"pods", "1"}, []string{"pods", "1"}, quota.EnforcementAnnotation, "Warn", quota.WarnAtAnnotation, "80%"),
			rq(t, "hard", []string{"pods", "10"}, []string{"pods", "1"}),
		}, podsGR, small, nil, nil)},
		{"deployment over an Audit quota: no warning", workloadInput([]fit.Quota{
			rq(t, "audited", []string{"pods", "2"}, nil, quota.EnforcementAnnotation, "Audit"),
		}, deploymentsGR, deployment("web", 5, small), nil, nil)},
		{"quota refusing every pod (must specify)", workloadInput([]fit.Quota{
			rq(t, "limits", []string{"limits.memory", "1Gi"}, nil),
		}, deploymentsGR, deployment("web", 2, pod("p", []string{"cpu", "100m"}, nil)), nil, nil)},
		{"scoped quota the pods do not match is not listed", workloadInput([]fit.Quota{
			func() fit.Quota {
				q := rq(t, "besteffort", []string{"pods", "1"}, []string{"pods", "1"})
				q.Quota.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeBestEffort}
				return q
			}(),
		}, deploymentsGR, deployment("web", 2, small), nil, nil)},
		{"cluster quota in Warn mode", workloadInput([]fit.Quota{{Quota: view, Cluster: true}}, deploymentsGR, deployment("web", 3, small), nil, nil)},
		{"job: parallelism capped by completions", workloadInput([]fit.Quota{
			rq(t, "pods", []string{"count/pods", "2"}, nil),
		}, schema.GroupResource{Group: "batch", Resource: "jobs"}, job, nil, nil)},
		{"pvc", workloadInput([]fit.Quota{
			rq(t, "storage", []string{"requests.storage", "8Gi", "persistentvolumeclaims", "3"}, []string{"requests.storage", "4Gi", "persistentvolumeclaims", "1"}),
		}, schema.GroupResource{Resource: "persistentvolumeclaims"}, pvc, nil, nil)},
		{"statefulset: each replica's claim counts", workloadInput([]fit.Quota{
			rq(t, "storage", []string{"requests.storage", "12Gi", "persistentvolumeclaims", "10", "pods", "10"}, []string{"requests.storage", "1Gi"}),
		}, schema.GroupResource{Group: "apps", Resource: "statefulsets"}, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"},
			Spec: appsv1.StatefulSetSpec{Replicas: ptr[int32](3), Template: corev1.PodTemplateSpec{Spec: small.Spec},
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
					Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: list("storage", "5Gi")}}}}}}, nil, nil)},
		{"no quota", workloadInput(nil, deploymentsGR, deployment("web", 3, small), nil, nil)},
	}
	g := quotatest.NewGolden(t, "review.golden")
	for _, c := range cases {
		r := fit.Review(c.in)
		b, err := json.MarshalIndent(r.Status, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		out := string(b)
		if len(r.ReplicaWarnings) > 0 {
			out += "\nreplica warnings:\n  " + strings.Join(r.ReplicaWarnings, "\n  ")
		}
		g.Add(c.name, out)
	}
	g.Check()
}

// TestReviewDecisionIsCheckRequest: the object's decision is admission's (CheckRequest
// over the enforcing quotas), and the quotas given are not changed.
func TestReviewDecisionIsCheckRequest(t *testing.T) {
	reg := evaluator.NewRegistry()
	quotas := []fit.Quota{rq(t, "a", []string{"pods", "3", "requests.cpu", "1"}, []string{"pods", "2", "requests.cpu", "600m"})}
	for _, cpu := range []string{"100m", "400m", "401m", "2"} {
		p := pod("p", []string{"cpu", cpu}, nil)
		_, want := quota.CheckRequest([]corev1.ResourceQuota{quotas[0].Quota}, quota.Request{Operation: quota.Create, Resource: podsGR, Object: p}, reg, nil)
		r := fit.Review(fit.Input{Quotas: quotas, Registry: reg, Resource: podsGR, Object: p, Pod: p, Replicas: 1})
		if r.Status.Allowed != (want == nil) {
			t.Errorf("cpu %s: allowed %v, CheckRequest said %v", cpu, r.Status.Allowed, want)
		}
		if want != nil && r.Status.Reason != want.Error() {
			t.Errorf("cpu %s: reason %q, want %q", cpu, r.Status.Reason, want.Error())
		}
		if r.Status.Fits != r.Status.Allowed {
			t.Errorf("cpu %s: fits %v, allowed %v", cpu, r.Status.Fits, r.Status.Allowed)
		}
	}
	if got := quotatest.Show(quotas[0].Quota.Status.Used); got != "pods=2 requests.cpu=600m" {
		t.Errorf("input quota changed: used %s", got)
	}
}

// TestWarningText pins the exact warning admission gives a workload write.
func TestWarningText(t *testing.T) {
	small := pod("p", []string{"cpu", "500m"}, nil)
	r := fit.Review(workloadInput([]fit.Quota{rq(t, "compute", []string{"requests.cpu", "3"}, []string{"requests.cpu", "1500m"})},
		deploymentsGR, deployment("web", 10, small), nil, nil))
	want := "only 3 of 10 replicas fit quota compute: requests.cpu: 500m per replica, used 1500m, limited 3"
	if len(r.ReplicaWarnings) != 1 || r.ReplicaWarnings[0] != want {
		t.Errorf("warnings %q, want [%q]", r.ReplicaWarnings, want)
	}
}

func TestAdded(t *testing.T) {
	small := pod("p", nil, nil)
	d := func(n int32) *appsv1.Deployment { return deployment("d", n, small) }
	for _, c := range []struct {
		name     string
		obj, old runtime.Object
		override *int32
		want     int32
	}{
		{"create", d(4), nil, nil, 4},
		{"create default 1", &appsv1.ReplicaSet{}, nil, nil, 1},
		{"scale up", d(7), d(4), nil, 3},
		{"scale down", d(2), d(4), nil, 0},
		{"override on update", d(4), d(4), ptr[int32](9), 5},
		{"pod", small, nil, nil, 1},
		{"pod copies", small, nil, ptr[int32](3), 3},
		{"existing pod", small, small, nil, 0},
		{"suspended job", &batchv1.Job{Spec: batchv1.JobSpec{Suspend: ptr(true)}}, nil, nil, 0},
		{"job completions cap", &batchv1.Job{Spec: batchv1.JobSpec{Parallelism: ptr[int32](5), Completions: ptr[int32](2)}}, nil, nil, 2},
		{"statefulset", &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: ptr[int32](3)}}, nil, nil, 3},
		{"rc without template", &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Replicas: ptr[int32](3)}}, nil, nil, 0},
		{"configmap", &corev1.ConfigMap{}, nil, nil, 0},
	} {
		if got := fit.Added(c.obj, c.old, c.override); got != c.want {
			t.Errorf("%s: Added = %d, want %d", c.name, got, c.want)
		}
	}
}
