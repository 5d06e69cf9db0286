package workloads

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/controller/fake"
	"github.com/quotad/quotad/internal/registry"
)

// These tests drive each controller's sync directly over the in-memory client: one sync
// is one call, so what a sync writes is seen without waiting, except its events (the
// recorder writes them asynchronously: events waits for them).

var testNow = time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)

func newFake() (*fake.Client, *clocktesting.FakeClock, Options) {
	clk := clocktesting.NewFakeClock(testNow)
	return fake.New(clk), clk, Options{Clock: clk}
}

func syncOK(t *testing.T, sync func(context.Context, string) (time.Duration, error), key string) time.Duration {
	t.Helper()
	d, err := sync(context.Background(), key)
	if err != nil {
		t.Fatalf("sync %s: %v", key, err)
	}
	return d
}

// replicaSetSync runs c's pod index from fc's watch until the test ends, and returns c's
// sync preceded by a wait until the index holds every change fc has made (what the
// events that queue a sync guarantee in a running controller).
func replicaSetSync(t *testing.T, fc *fake.Client, c *ReplicaSet) func(context.Context, string) (time.Duration, error) {
	return subSync(t, fc, c.loop, c.pods, c.sync)
}

// jobSync is replicaSetSync for the Job controller.
func jobSync(t *testing.T, fc *fake.Client, c *Job) func(context.Context, string) (time.Duration, error) {
	return subSync(t, fc, c.loop, c.pods, c.sync)
}

// deploymentSync is replicaSetSync for the Deployment controller's ReplicaSet and pod
// indexes.
func deploymentSync(t *testing.T, fc *fake.Client, c *Deployment) func(context.Context, string) (time.Duration, error) {
	return indexedSync(t, fc, c.loop, replicaSetGVR, c.replicaSets, subSync(t, fc, c.loop, c.pods, c.sync))
}

func indexedSync(t *testing.T, fc *fake.Client, loop *controller.Loop, gvr schema.GroupVersionResource, x *controller.Index, sync func(context.Context, string) (time.Duration, error)) func(context.Context, string) (time.Duration, error) {
	return cachedSync(t, fc, x, func(ctx context.Context) { go loop.WatchIndex(ctx, fc.Catalogue().Get(gvr), x, nil) }, sync)
}

// subSync is indexedSync for a subscription to pods (of its own).
func subSync(t *testing.T, fc *fake.Client, loop *controller.Loop, p *controller.PodSub, sync func(context.Context, string) (time.Duration, error)) func(context.Context, string) (time.Duration, error) {
	return cachedSync(t, fc, p, func(ctx context.Context) { p.Start(ctx, loop, nil) }, sync)
}

// cachedSync is sync preceded by a wait until x, started by start, holds every change fc
// has made.
func cachedSync(t *testing.T, fc *fake.Client, x controller.Cache, start func(context.Context), sync func(context.Context, string) (time.Duration, error)) func(context.Context, string) (time.Duration, error) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	start(ctx)
	return func(ctx context.Context, key string) (time.Duration, error) {
		if err := x.WaitFor(ctx, fc.Revision()); err != nil {
			return 0, err
		}
		return sync(ctx, key)
	}
}

func podsOf(fc *fake.Client, ns string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, o := range fc.Objects(podGVR, ns) {
		out = append(out, o.(*corev1.Pod))
	}
	return out
}

func podNames(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

// events waits until namespace ns holds at least n events of reason (the recorder writes
// them asynchronously), or 30 seconds passed, and returns the messages of those it holds.
func events(t *testing.T, fc *fake.Client, ns, reason string, n int) []string {
	t.Helper()
	var out []string
	_ = wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		out = nil
		for _, o := range fc.Objects(corev1.SchemeGroupVersion.WithResource("events"), ns) {
			if ev := o.(*corev1.Event); ev.Reason == reason {
				out = append(out, ev.Message)
			}
		}
		return len(out) >= n, nil
	})
	return out
}

// quotaRefusal refuses creates of resource in ns as quota admission does, with upstream's text.
func quotaRefusal(resource string) func(verb string, res *registry.Resource, obj runtime.Object) error {
	return func(verb string, res *registry.Resource, obj runtime.Object) error {
		if verb != "create" || res.GVR.Resource != resource {
			return nil
		}
		name := obj.(interface{ GetName() string }).GetName()
		return apierrors.NewForbidden(schema.GroupResource{Resource: resource}, name,
			fmt.Errorf("exceeded quota: q, requested: count/%s=1, used: count/%s=1, limited: count/%s=1", resource, resource, resource))
	}
}

func template() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}
}

func replicaSet(name string, replicas int32) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: "rs-uid", Generation: 1},
		Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: template()},
	}
}

func TestReplicaSetScalesUpAndDown(t *testing.T) {
	fc, _, opts := newFake()
	fc.Add(replicaSet("web", 3))
	c := NewReplicaSet(fc, nil, opts)
	cSync := replicaSetSync(t, fc, c)
	syncOK(t, cSync, "ns/web")
	pods := podsOf(fc, "ns")
	if len(pods) != 3 {
		t.Fatalf("%d pods, want 3", len(pods))
	}
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil || ref.UID != "rs-uid" || ref.Kind != "ReplicaSet" || !strings.HasPrefix(p.Name, "web-") {
			t.Fatalf("pod %s owner %+v", p.Name, ref)
		}
	}
	if got := events(t, fc, "ns", "SuccessfulCreate", 3); len(got) != 3 {
		t.Fatalf("SuccessfulCreate events %v", got)
	}
	// A second sync at the same state creates nothing.
	fc.Actions()
	syncOK(t, cSync, "ns/web")
	for _, a := range fc.Actions() {
		if a.Resource == "pods" {
			t.Fatalf("steady state wrote %+v", a)
		}
	}
	st := fc.Object(replicaSetGVR, "ns", "web").(*appsv1.ReplicaSet).Status
	if st.Replicas != 3 || st.ObservedGeneration != 1 {
		t.Fatalf("status %+v", st)
	}
	// Scale down to one.
	res := fc.Catalogue().Get(replicaSetGVR)
	if _, err := fc.Update(context.Background(), res, "ns", "web", "", func(o runtime.Object) (runtime.Object, error) {
		one := int32(1)
		o.(*appsv1.ReplicaSet).Spec.Replicas = &one
		return o, nil
	}, registry.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	syncOK(t, cSync, "ns/web")
	if n := len(podsOf(fc, "ns")); n != 1 {
		t.Fatalf("%d pods after scaling to 1", n)
	}
	if got := events(t, fc, "ns", "SuccessfulDelete", 2); len(got) != 2 {
		t.Fatalf("SuccessfulDelete events %v", got)
	}
}

func TestReplicaSetAdoptsOrphansAndReleases(t *testing.T) {
	fc, _, opts := newFake()
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "orphan", Labels: map[string]string{"app": "web"}}}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other", Labels: map[string]string{"app": "db"}}}
	fc.Add(replicaSet("web", 1), orphan, other)
	c := NewReplicaSet(fc, nil, opts)
	cSync := replicaSetSync(t, fc, c)
	syncOK(t, cSync, "ns/web")
	pods := podsOf(fc, "ns")
	if len(pods) != 2 {
		t.Fatalf("pods %v, want the orphan adopted and nothing created", podNames(pods))
	}
	if ref := metav1.GetControllerOf(fc.Object(podGVR, "ns", "orphan").(*corev1.Pod)); ref == nil || ref.UID != "rs-uid" {
		t.Fatalf("orphan not adopted: %+v", ref)
	}
	if ref := metav1.GetControllerOf(fc.Object(podGVR, "ns", "other").(*corev1.Pod)); ref != nil {
		t.Fatalf("a pod the selector does not match was adopted: %+v", ref)
	}
}

// A create refused by quota is a FailedCreate Warning event with the 403's text and a
// ReplicaFailure condition; the sync fails (retried with backoff, and at once when a quota
// of the namespace changes); the retry tries the owner's first free slot again (pod names
// are derived from the owner's UID and slot, so two replicas of quotad pick the same name),
// and once quota admits it the pods are made and the condition goes.
func TestReplicaSetQuotaRefusal(t *testing.T) {
	fc, _, opts := newFake()
	fc.Add(replicaSet("web", 2))
	fc.SetRefuse(quotaRefusal("pods"))
	c := NewReplicaSet(fc, nil, opts)
	cSync := replicaSetSync(t, fc, c)
	var attempts []string
	for i := 0; i < 2; i++ {
		_, err := cSync(context.Background(), "ns/web")
		if err == nil || !apierrors.IsForbidden(err) {
			t.Fatalf("sync = %v, want the quota refusal", err)
		}
		for _, a := range fc.Actions() {
			if a.Verb == "create" && a.Resource == "pods" {
				if a.Err == nil {
					t.Fatalf("pod %s created past the refusal", a.Name)
				}
				attempts = append(attempts, a.Name)
			}
		}
	}
	// slowStartBatch stops at the first failed batch (of one pod); each attempt is a pod
	// named afresh from the ReplicaSet's prefix, as upstream's generateName.
	if len(attempts) != 2 || attempts[0] == attempts[1] || !strings.HasPrefix(attempts[0], "web-") || !strings.HasPrefix(attempts[1], "web-") {
		t.Fatalf("refused attempts %v, want two distinct web-… names", attempts)
	}
	failed := events(t, fc, "ns", "FailedCreate", 2)
	if len(failed) != 2 {
		t.Fatalf("FailedCreate events %q, want one per attempt", failed)
	}
	for i, name := range attempts {
		if want := `Error creating: pods "` + name + `" is forbidden: exceeded quota: q`; !slices.ContainsFunc(failed, func(m string) bool { return strings.HasPrefix(m, want) }) {
			t.Fatalf("attempt %d: no FailedCreate event %q in %q", i, want, failed)
		}
	}
	rs := fc.Object(replicaSetGVR, "ns", "web").(*appsv1.ReplicaSet)
	if len(rs.Status.Conditions) != 1 || rs.Status.Conditions[0].Type != appsv1.ReplicaSetReplicaFailure || rs.Status.Conditions[0].Reason != "FailedCreate" {
		t.Fatalf("conditions %+v", rs.Status.Conditions)
	}
	if !c.starvedIn("ns", "ns/web") {
		t.Fatal("a refused owner must be retried when the namespace's quotas change")
	}
	// Quota raised.
	fc.SetRefuse(nil)
	syncOK(t, cSync, "ns/web")
	if n := len(podsOf(fc, "ns")); n != 2 {
		t.Fatalf("%d pods after the quota was raised", n)
	}
	syncOK(t, cSync, "ns/web")
	rs = fc.Object(replicaSetGVR, "ns", "web").(*appsv1.ReplicaSet)
	if len(rs.Status.Conditions) != 0 || rs.Status.Replicas != 2 {
		t.Fatalf("status after recovery %+v", rs.Status)
	}
	if c.starvedIn("ns", "ns/web") {
		t.Fatal("a recovered owner is still held at quota")
	}
}

func hasCount(evs []runtime.Object, reason string, count int32) bool {
	for _, o := range evs {
		if ev := o.(*corev1.Event); ev.Reason == reason && ev.Count == count {
			return true
		}
	}
	return false
}

func (c *ReplicaSet) starvedIn(ns, key string) bool {
	for _, k := range c.starved.in(ns) {
		if k == key {
			return true
		}
	}
	return false
}

func TestDeploymentCreatesReplicaSetAndRollsOut(t *testing.T) {
	fc, _, opts := newFake()
	three := int32(3)
	quarter := intstr.FromString("25%")
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "d-uid", Generation: 1},
		Spec: appsv1.DeploymentSpec{Replicas: &three, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: template(), Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &quarter, MaxUnavailable: &quarter}}},
	}
	fc.Add(d)
	dc := NewDeployment(fc, nil, opts)
	dcSync := deploymentSync(t, fc, dc)
	syncOK(t, dcSync, "ns/web")
	rsList := fc.Objects(replicaSetGVR, "ns")
	if len(rsList) != 1 {
		t.Fatalf("%d ReplicaSets, want 1", len(rsList))
	}
	rs := rsList[0].(*appsv1.ReplicaSet)
	hash := rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
	if hash == "" || rs.Name != "web-"+hash || *rs.Spec.Replicas != 3 || metav1.GetControllerOf(rs).UID != "d-uid" {
		t.Fatalf("ReplicaSet %s replicas %d labels %v", rs.Name, *rs.Spec.Replicas, rs.Labels)
	}
	if got := events(t, fc, "ns", "ScalingReplicaSet", 1); len(got) != 1 || got[0] != "Scaled up replica set "+rs.Name+" to 3" {
		t.Fatalf("ScalingReplicaSet events %q", got)
	}
	// The ReplicaSet controller makes its pods; they carry the template hash.
	rc := NewReplicaSet(fc, nil, opts)
	rcSync := replicaSetSync(t, fc, rc)
	syncOK(t, rcSync, "ns/"+rs.Name)
	pods := podsOf(fc, "ns")
	if len(pods) != 3 || pods[0].Labels[appsv1.DefaultDeploymentUniqueLabelKey] != hash {
		t.Fatalf("pods %v", podNames(pods))
	}
	// A new template makes a second ReplicaSet; the old one is scaled down as the rollout
	// allows (no pod is ready, so nothing is available to take down yet beyond maxUnavailable).
	res := fc.Catalogue().Get(deploymentGVR)
	if _, err := fc.Update(context.Background(), res, "ns", "web", "", func(o runtime.Object) (runtime.Object, error) {
		o.(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Image = "nginx:2"
		return o, nil
	}, registry.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	syncOK(t, dcSync, "ns/web")
	if n := len(fc.Objects(replicaSetGVR, "ns")); n != 2 {
		t.Fatalf("%d ReplicaSets after a template change, want 2", n)
	}
}

func TestStatefulSetCreatesClaimsThenOrderedPods(t *testing.T) {
	fc, _, opts := newFake()
	two := int32(2)
	set := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", UID: "ss-uid", Generation: 1},
		Spec: appsv1.StatefulSetSpec{Replicas: &two, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: template(),
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}}}}},
	}
	fc.Add(set)
	c := NewStatefulSet(fc, nil, opts)
	sync := subSync(t, fc, c.loop, c.pods, c.sync)
	// Storage quota refuses the claim first: no pod is made.
	fc.SetRefuse(quotaRefusal("persistentvolumeclaims"))
	if _, err := sync(context.Background(), "ns/db"); err == nil {
		t.Fatal("sync succeeded past a refused claim")
	}
	if n := len(podsOf(fc, "ns")); n != 0 {
		t.Fatalf("%d pods made before their claims", n)
	}
	failed := events(t, fc, "ns", "FailedCreate", 2)
	if len(failed) != 2 || !strings.HasPrefix(failed[0]+failed[1], "create") {
		t.Fatalf("FailedCreate events %q", failed)
	}
	fc.SetRefuse(nil)
	syncOK(t, sync, "ns/db")
	// OrderedReady: db-0 only, until it is ready.
	if got := podNames(podsOf(fc, "ns")); fmt.Sprint(got) != "[db-0]" {
		t.Fatalf("pods %v, want [db-0]", got)
	}
	if fc.Object(pvcGVR, "ns", "data-db-0") == nil {
		t.Fatal("claim data-db-0 missing")
	}
	p := fc.Object(podGVR, "ns", "db-0").(*corev1.Pod)
	if len(p.Spec.Volumes) == 0 || p.Spec.Volumes[len(p.Spec.Volumes)-1].PersistentVolumeClaim.ClaimName != "data-db-0" {
		t.Fatalf("db-0 volumes %+v", p.Spec.Volumes)
	}
	setReady(t, fc, "db-0")
	syncOK(t, sync, "ns/db")
	if got := podNames(podsOf(fc, "ns")); fmt.Sprint(got) != "[db-0 db-1]" {
		t.Fatalf("pods %v, want [db-0 db-1]", got)
	}
}

func setReady(t *testing.T, fc *fake.Client, name string) {
	t.Helper()
	res := fc.Catalogue().Get(podGVR)
	if _, err := fc.Update(context.Background(), res, "ns", name, "status", func(o runtime.Object) (runtime.Object, error) {
		p := o.(*corev1.Pod)
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(testNow)}}
		return p, nil
	}, registry.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
}

func setPhase(t *testing.T, fc *fake.Client, name string, phase corev1.PodPhase) {
	t.Helper()
	res := fc.Catalogue().Get(podGVR)
	if _, err := fc.Update(context.Background(), res, "ns", name, "status", func(o runtime.Object) (runtime.Object, error) {
		o.(*corev1.Pod).Status.Phase = phase
		return o, nil
	}, registry.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestDaemonSetOnePodPerNode(t *testing.T) {
	fc, _, opts := newFake()
	node := func(name string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent", UID: "ds-uid", Generation: 1},
		Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, Template: template()},
	}
	ds.Spec.Template.Spec.NodeSelector = map[string]string{"role": "worker"}
	fc.Add(ds, node("w1", map[string]string{"role": "worker"}), node("w2", map[string]string{"role": "worker"}),
		node("cp", map[string]string{"role": "control"}),
		node("tainted", map[string]string{"role": "worker"}, corev1.Taint{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}))
	c := NewDaemonSet(fc, nil, opts)
	// The pods index keeps daemon pods and labelled orphans only (an unlabelled orphan, which
	// no selector adopts, is not kept, and crashes nothing).
	c.pods.Apply(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "bare"}}, false)
	if c.pods.Get("ns", "bare") != nil {
		t.Fatal("an unlabelled orphan was kept")
	}
	cSync := indexedSync(t, fc, c.loop, nodeGVR, c.nodeIndex, subSync(t, fc, c.loop, c.pods, c.sync))
	syncOK(t, cSync, "ns/agent")
	nodes := map[string]bool{}
	for _, p := range podsOf(fc, "ns") {
		n := boundNode(p)
		if n == "" || nodes[n] {
			t.Fatalf("pod %s bound to %q", p.Name, n)
		}
		nodes[n] = true
	}
	if fmt.Sprint(nodes) != "map[w1:true w2:true]" {
		t.Fatalf("daemon pods on %v, want w1 and w2", nodes)
	}
	// A refused create is an event and a retry; the nodes already served keep their pods.
	fc.Add(node("w3", map[string]string{"role": "worker"}))
	fc.SetRefuse(quotaRefusal("pods"))
	if _, err := cSync(context.Background(), "ns/agent"); err == nil {
		t.Fatal("sync succeeded past a refused create")
	}
	if got := events(t, fc, "ns", "FailedCreate", 1); len(got) != 1 || !strings.HasPrefix(got[0], "Error creating: pods ") {
		t.Fatalf("FailedCreate events %q", got)
	}
	fc.SetRefuse(nil)
	syncOK(t, cSync, "ns/agent")
	if n := len(podsOf(fc, "ns")); n != 3 {
		t.Fatalf("%d daemon pods, want 3", n)
	}
}

// boundNode returns the node a daemon pod's required node affinity names.
func boundNode(p *corev1.Pod) string {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range term.MatchFields {
			if f.Key == "metadata.name" && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}

func TestJobRunsToCompletion(t *testing.T) {
	fc, _, opts := newFake()
	two, three := int32(2), int32(3)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "batch", UID: "job-uid", Generation: 1},
		Spec:       batchv1.JobSpec{Parallelism: &two, Completions: &three, Template: template()},
	}
	job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	fc.Add(job)
	c := NewJob(fc, nil, opts)
	sync := jobSync(t, fc, c)
	syncOK(t, sync, "ns/batch")
	pods := podsOf(fc, "ns")
	if len(pods) != 2 {
		t.Fatalf("%d pods, want parallelism 2", len(pods))
	}
	setPhase(t, fc, pods[0].Name, corev1.PodSucceeded)
	setPhase(t, fc, pods[1].Name, corev1.PodSucceeded)
	syncOK(t, sync, "ns/batch")
	if n := len(podsOf(fc, "ns")); n != 3 {
		t.Fatalf("%d pods, want one more for the last completion", n)
	}
	for _, p := range podsOf(fc, "ns") {
		if p.Status.Phase != corev1.PodSucceeded {
			setPhase(t, fc, p.Name, corev1.PodSucceeded)
		}
	}
	syncOK(t, sync, "ns/batch")
	j := fc.Object(jobGVR, "ns", "batch").(*batchv1.Job)
	if j.Status.Succeeded != 3 || !jobFinished(j) {
		t.Fatalf("job status %+v", j.Status)
	}
	if j.Status.CompletionTime == nil {
		t.Fatal("no completion time")
	}
}

func TestJobBackoffLimit(t *testing.T) {
	fc, _, opts := newFake()
	zero := int32(0)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "batch", UID: "job-uid", Generation: 1},
		Spec:       batchv1.JobSpec{BackoffLimit: &zero, Template: template()},
	}
	job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	fc.Add(job)
	c := NewJob(fc, nil, opts)
	sync := jobSync(t, fc, c)
	syncOK(t, sync, "ns/batch")
	pods := podsOf(fc, "ns")
	if len(pods) != 1 {
		t.Fatalf("%d pods", len(pods))
	}
	setPhase(t, fc, pods[0].Name, corev1.PodFailed)
	syncOK(t, sync, "ns/batch")
	j := fc.Object(jobGVR, "ns", "batch").(*batchv1.Job)
	var reasons []string
	for _, c := range j.Status.Conditions {
		reasons = append(reasons, string(c.Type)+"/"+c.Reason)
	}
	if !strings.Contains(fmt.Sprint(reasons), "Failed/"+jobReasonBackoffLimitExceeded) {
		t.Fatalf("conditions %v, want Failed/BackoffLimitExceeded", reasons)
	}
}

func TestCronJobCreatesJobOnSchedule(t *testing.T) {
	fc, clk, opts := newFake()
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "nightly", UID: "cj-uid", Generation: 1, CreationTimestamp: metav1.NewTime(testNow)},
		Spec: batchv1.CronJobSpec{Schedule: "*/5 * * * *", JobTemplate: batchv1.JobTemplateSpec{
			Spec: batchv1.JobSpec{Template: template()}}},
	}
	fc.Add(cj)
	c := NewCronJob(fc, nil, opts)
	sync := indexedSync(t, fc, c.loop, jobGVR, c.jobs, c.sync)
	if requeue := syncOK(t, sync, "ns/nightly"); requeue <= 0 || requeue > 5*time.Minute+time.Second {
		t.Fatalf("requeue after %v, want the next scheduled time (5m)", requeue)
	}
	if n := len(fc.Objects(jobGVR, "ns")); n != 0 {
		t.Fatalf("%d jobs before the first scheduled time", n)
	}
	clk.Step(5 * time.Minute)
	syncOK(t, sync, "ns/nightly")
	jobs := fc.Objects(jobGVR, "ns")
	if len(jobs) != 1 {
		t.Fatalf("%d jobs at the scheduled time, want 1", len(jobs))
	}
	j := jobs[0].(*batchv1.Job)
	// Upstream's name: <cronjob>-<scheduled time in minutes since the epoch>.
	if want := fmt.Sprintf("nightly-%d", testNow.Add(5*time.Minute).Unix()/60); j.Name != want {
		t.Fatalf("job %s, want %s", j.Name, want)
	}
	// The same time again makes no second job.
	syncOK(t, sync, "ns/nightly")
	if n := len(fc.Objects(jobGVR, "ns")); n != 1 {
		t.Fatalf("%d jobs after a second sync", n)
	}
	// A refused job create is an event and an error.
	clk.Step(5 * time.Minute)
	fc.SetRefuse(quotaRefusal("jobs"))
	if _, err := sync(context.Background(), "ns/nightly"); err == nil {
		t.Fatal("sync succeeded past a refused job")
	}
	if got := events(t, fc, "ns", "FailedCreate", 1); len(got) != 1 || !strings.HasPrefix(got[0], "Error creating job: jobs ") {
		t.Fatalf("FailedCreate events %q", got)
	}
}
