package integration

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/quotad/quotad/internal/controller/workloads"
	"github.com/quotad/quotad/internal/server/servertest"
)

// eventually polls cond until it reports true, failing the test after a generous deadline.
// It never sleeps for correctness: the deadline only bounds a broken controller.
func wlEventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		ok, err := cond(ctx)
		if err == nil && ok {
			return
		}
		lastErr = err
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s (last error: %v)", what, lastErr)
		case <-tick.C:
		}
	}
}

func wlTemplate(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}},
	}
}

func wlDeployment(name string, replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: wlTemplate(name),
		},
	}
}

// quotaUsed returns status.used of a quota as plain integers.
func wlQuotaUsed(ctx context.Context, s *servertest.Server, ns, name string) (map[string]int64, error) {
	q, err := s.Client.CoreV1().ResourceQuotas(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for k, v := range q.Status.Used {
		out[string(k)] = v.Value()
	}
	return out, nil
}

func wlUsedEquals(want map[string]int64) func(map[string]int64) bool {
	return func(got map[string]int64) bool {
		for k, v := range want {
			if got[k] != v {
				return false
			}
		}
		return true
	}
}

func wlCountPods(ctx context.Context, s *servertest.Server, ns, selector string) (int, error) {
	l, err := s.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return 0, err
	}
	return len(l.Items), nil
}

func wlEvents(ctx context.Context, s *servertest.Server, ns, kind, name, reason string) ([]corev1.Event, error) {
	sel := fields.Set{"involvedObject.kind": kind, "involvedObject.name": name, "reason": reason}.AsSelector().String()
	l, err := s.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return nil, err
	}
	var out []corev1.Event
	for _, e := range l.Items {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out, nil
}

func wlDeploymentRS(ctx context.Context, s *servertest.Server, ns, deployment string) (*appsv1.ReplicaSet, error) {
	l, err := s.Client.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range l.Items {
		if ref := metav1.GetControllerOf(&l.Items[i]); ref != nil && ref.Name == deployment {
			return &l.Items[i], nil
		}
	}
	return nil, fmt.Errorf("no replica set of deployment %s yet", deployment)
}

// TestDeploymentQuotaWalkthrough is the documentation's object-count walkthrough.
func TestDeploymentQuotaWalkthrough(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "quota-object-example"
	mkNamespace(t, s, ns)
	mkQuota(t, s, ns, "test", map[string]string{
		"count/deployments.apps": "2", "count/replicasets.apps": "4", "count/pods": "3", "count/secrets": "4",
	})
	if _, err := s.Client.AppsV1().Deployments(ns).Create(ctxT(t), wlDeployment("nginx", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"count/deployments.apps": 1, "count/replicasets.apps": 1, "count/pods": 2}
	wlEventually(t, "quota used "+fmt.Sprint(want), func(ctx context.Context) (bool, error) {
		used, err := wlQuotaUsed(ctx, s, ns, "test")
		return err == nil && wlUsedEquals(want)(used), err
	})
	wlEventually(t, "deployment status", func(ctx context.Context) (bool, error) {
		d, err := s.Client.AppsV1().Deployments(ns).Get(ctx, "nginx", metav1.GetOptions{})
		return err == nil && d.Status.Replicas == 2 && d.Status.UpdatedReplicas == 2 && d.Annotations["deployment.kubernetes.io/revision"] == "1", err
	})
	rs, err := wlDeploymentRS(ctxT(t), s, ns, "nginx")
	if err != nil {
		t.Fatal(err)
	}
	hash := rs.Labels["pod-template-hash"]
	if hash == "" || rs.Name != "nginx-"+hash || rs.Spec.Selector.MatchLabels["pod-template-hash"] != hash {
		t.Errorf("replica set %s labels %v selector %v: want name nginx-<pod-template-hash>", rs.Name, rs.Labels, rs.Spec.Selector)
	}
	for k, v := range map[string]string{"deployment.kubernetes.io/revision": "1", "deployment.kubernetes.io/desired-replicas": "2", "deployment.kubernetes.io/max-replicas": "3"} {
		if rs.Annotations[k] != v {
			t.Errorf("replica set annotation %s = %q, want %q", k, rs.Annotations[k], v)
		}
	}
	var evs []corev1.Event
	wlEventually(t, "ScalingReplicaSet event", func(ctx context.Context) (bool, error) {
		var err error
		evs, err = wlEvents(ctx, s, ns, "Deployment", "nginx", "ScalingReplicaSet")
		return len(evs) > 0, err
	})
	if len(evs) != 1 || evs[0].Message != "Scaled up replica set "+rs.Name+" to 2" || evs[0].Source.Component != "deployment-controller" {
		t.Errorf("ScalingReplicaSet events = %+v", evs)
	}
}

var wlForbiddenPod = regexp.MustCompile(`^pods "web-[a-z0-9]+-[bcdfghjklmnpqrstvwxz2456789]{5}" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=3, limited: pods=3$`)

// TestDeploymentStopsAtPodQuota: a Deployment of 5 under pods: 3 stops at 3 with FailedCreate
// events and the ReplicaFailure condition, reaches 5 once the quota is raised, and scaling
// down credits the quota in the same write that deletes each pod.
func TestDeploymentStopsAtPodQuota(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "short"
	mkNamespace(t, s, ns)
	mkQuota(t, s, ns, "pods", map[string]string{"pods": "3"})
	if _, err := s.Client.AppsV1().Deployments(ns).Create(ctxT(t), wlDeployment("web", 5), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// 1. Short of replicas, and saying why: on the ReplicaSet, the Deployment, and in events.
	var rs *appsv1.ReplicaSet
	wlEventually(t, "ReplicaFailure on the replica set", func(ctx context.Context) (bool, error) {
		var err error
		rs, err = wlDeploymentRS(ctx, s, ns, "web")
		if err != nil {
			return false, err
		}
		for _, c := range rs.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure {
				return true, nil
			}
		}
		return false, nil
	})
	for _, c := range rs.Status.Conditions {
		if c.Type == appsv1.ReplicaSetReplicaFailure {
			if c.Status != corev1.ConditionTrue || c.Reason != "FailedCreate" || !wlForbiddenPod.MatchString(c.Message) {
				t.Errorf("ReplicaFailure = %+v", c)
			}
		}
	}
	wlEventually(t, "ReplicaFailure on the deployment", func(ctx context.Context) (bool, error) {
		d, err := s.Client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue && c.Reason == "FailedCreate" && wlForbiddenPod.MatchString(c.Message) {
				return d.Status.Replicas == 3, nil
			}
		}
		return false, nil
	})
	var evs []corev1.Event
	wlEventually(t, "FailedCreate event", func(ctx context.Context) (bool, error) {
		var err error
		evs, err = wlEvents(ctx, s, ns, "ReplicaSet", rs.Name, "FailedCreate")
		return len(evs) > 0, err
	})
	for _, e := range evs {
		if e.Type != corev1.EventTypeWarning || e.Source.Component != "replicaset-controller" || e.Count < 1 ||
			len(e.Message) < len("Error creating: ") || e.Message[:len("Error creating: ")] != "Error creating: " || !wlForbiddenPod.MatchString(e.Message[len("Error creating: "):]) {
			t.Errorf("FailedCreate event = %+v", e)
		}
	}
	wlEventually(t, "3 SuccessfulCreate events", func(ctx context.Context) (bool, error) {
		created, err := wlEvents(ctx, s, ns, "ReplicaSet", rs.Name, "SuccessfulCreate")
		return len(created) == 3, err
	})
	if n, err := wlCountPods(ctxT(t), s, ns, "app=web"); err != nil || n != 3 {
		t.Fatalf("pods = %d (%v), want 3", n, err)
	}
	// 2. Raise the quota: the controller recovers without a restart.
	q, err := s.Client.CoreV1().ResourceQuotas(ns).Get(ctxT(t), "pods", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Spec.Hard[corev1.ResourcePods] = resource.MustParse("10")
	if _, err := s.Client.CoreV1().ResourceQuotas(ns).Update(ctxT(t), q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	wlEventually(t, "5 replicas and no ReplicaFailure", func(ctx context.Context) (bool, error) {
		d, err := s.Client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentReplicaFailure {
				return false, nil
			}
		}
		return d.Status.Replicas == 5 && d.Status.UpdatedReplicas == 5, nil
	})
	if used, err := wlQuotaUsed(ctxT(t), s, ns, "pods"); err != nil || used["pods"] != 5 {
		t.Fatalf("quota used = %v (%v), want pods=5", used, err)
	}
	// 3. Scale down: every pod delete credits the quota in the same transaction.
	d, err := s.Client.AppsV1().Deployments(ns).Get(ctxT(t), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	two := int32(2)
	d.Spec.Replicas = &two
	if _, err := s.Client.AppsV1().Deployments(ns).Update(ctxT(t), d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	wlEventually(t, "2 pods", func(ctx context.Context) (bool, error) {
		n, err := wlCountPods(ctx, s, ns, "app=web")
		return n == 2, err
	})
	if used, err := wlQuotaUsed(ctxT(t), s, ns, "pods"); err != nil || used["pods"] != 2 {
		t.Fatalf("quota used after scale down = %v (%v), want pods=2", used, err)
	}
	// Events are recorded after the deletes they report: wait for the third.
	wlEventually(t, "3 SuccessfulDelete events", func(ctx context.Context) (bool, error) {
		deleted, err := wlEvents(ctx, s, ns, "ReplicaSet", rs.Name, "SuccessfulDelete")
		return len(deleted) == 3, err
	})
}

func wlSetPodPhase(ctx context.Context, s *servertest.Server, p *corev1.Pod, phase corev1.PodPhase) error {
	cur, err := s.Client.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	cur.Status.Phase = phase
	_, err = s.Client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
	return err
}

// TestJobUnderPodQuota: a Job of parallelism 3 under pods: 2 runs two pods, reports the
// refusal as upstream, and completes as pods succeed (terminal pods leave the pods quota).
func TestJobUnderPodQuota(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "jobs"
	mkNamespace(t, s, ns)
	mkQuota(t, s, ns, "pods", map[string]string{"pods": "2"})
	three, four := int32(3), int32(4)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "pi"},
		Spec: batchv1.JobSpec{
			Parallelism: &three, Completions: &four,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "pi", Image: "perl"}},
			}},
		},
	}
	if _, err := s.Client.BatchV1().Jobs(ns).Create(ctxT(t), job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	refused := regexp.MustCompile(`^Error creating: pods "pi-[bcdfghjklmnpqrstvwxz2456789]{5}" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2$`)
	wlEventually(t, "2 active pods and a FailedCreate event", func(ctx context.Context) (bool, error) {
		j, err := s.Client.BatchV1().Jobs(ns).Get(ctx, "pi", metav1.GetOptions{})
		if err != nil || j.Status.Active != 2 {
			return false, err
		}
		evs, err := wlEvents(ctx, s, ns, "Job", "pi", "FailedCreate")
		if err != nil || len(evs) == 0 {
			return false, err
		}
		if !refused.MatchString(evs[0].Message) || evs[0].Source.Component != "job-controller" || evs[0].Type != corev1.EventTypeWarning {
			t.Fatalf("FailedCreate event = %+v", evs[0])
		}
		return true, nil
	})
	// Succeed pods one by one until the Job completes.
	wlEventually(t, "job complete", func(ctx context.Context) (bool, error) {
		j, err := s.Client.BatchV1().Jobs(ns).Get(ctx, "pi", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		pods, err := s.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for i := range pods.Items {
			if p := &pods.Items[i]; p.Status.Phase == corev1.PodPending {
				return false, wlSetPodPhase(ctx, s, p, corev1.PodSucceeded)
			}
		}
		return false, nil
	})
	j, err := s.Client.BatchV1().Jobs(ns).Get(ctxT(t), "pi", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Status.Succeeded != 4 || j.Status.Active != 0 || j.Status.CompletionTime == nil {
		t.Errorf("job status = %+v", j.Status)
	}
	var types []string
	for _, c := range j.Status.Conditions {
		types = append(types, fmt.Sprintf("%s/%s/%s/%s", c.Type, c.Status, c.Reason, c.Message))
	}
	want := []string{"SuccessCriteriaMet/True/CompletionsReached/Reached expected number of succeeded pods", "Complete/True/CompletionsReached/Reached expected number of succeeded pods"}
	if fmt.Sprint(types) != fmt.Sprint(want) {
		t.Errorf("conditions = %v, want %v", types, want)
	}
	if used, err := wlQuotaUsed(ctxT(t), s, ns, "pods"); err != nil || used["pods"] != 0 {
		t.Errorf("pods quota used = %v (%v), want 0 (terminal pods are not charged)", used, err)
	}
	var evs []corev1.Event
	wlEventually(t, "Completed event", func(ctx context.Context) (bool, error) {
		var err error
		evs, err = wlEvents(ctx, s, ns, "Job", "pi", "Completed")
		return len(evs) > 0, err
	})
	if len(evs) != 1 || evs[0].Message != "Job completed" {
		t.Errorf("Completed events = %+v", evs)
	}
}

// TestCronJobStopsAtJobQuota: a CronJob running every minute, driven by a fake clock, stops
// creating Jobs at count/jobs.batch and resumes when a Job is deleted.
func TestCronJobStopsAtJobQuota(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "cron"
	mkNamespace(t, s, ns)
	mkQuota(t, s, ns, "jobs", map[string]string{"count/jobs.batch": "2"})
	// A second CronJob controller on a fake clock an hour ahead: the server's own controller
	// (real clock) then sees every schedule time as already done, and the two running at
	// once is itself part of what is tested.
	fc := clocktesting.NewFakeClock(time.Now().Add(time.Hour).Truncate(time.Minute).Add(time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = workloads.NewCronJob(s.Store, slog.New(slog.NewTextHandler(io.Discard, nil)), workloads.Options{Clock: fc}).Start(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "tick"},
		Spec: batchv1.CronJobSpec{
			Schedule: "* * * * *",
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
			}}}},
		},
	}
	if _, err := s.Client.BatchV1().CronJobs(ns).Create(ctxT(t), cj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	refused := regexp.MustCompile(`^Error creating job: jobs.batch "tick-[0-9]+" is forbidden: exceeded quota: jobs, requested: count/jobs.batch=1, used: count/jobs.batch=2, limited: count/jobs.batch=2$`)
	// 1. Advance the clock a minute at a time until the quota refuses a Job.
	wlEventually(t, "FailedCreate from count/jobs.batch", func(ctx context.Context) (bool, error) {
		evs, err := wlEvents(ctx, s, ns, "CronJob", "tick", "FailedCreate")
		if err != nil {
			return false, err
		}
		if len(evs) > 0 {
			if !refused.MatchString(evs[0].Message) || evs[0].Source.Component != "cronjob-controller" {
				t.Fatalf("FailedCreate event = %+v", evs[0])
			}
			return true, nil
		}
		fc.Step(time.Minute)
		return false, nil
	})
	jobs, err := s.Client.BatchV1().Jobs(ns).List(ctxT(t), metav1.ListOptions{})
	if err != nil || len(jobs.Items) != 2 {
		t.Fatalf("jobs = %d (%v), want 2", len(jobs.Items), err)
	}
	for _, j := range jobs.Items {
		if ref := metav1.GetControllerOf(&j); ref == nil || ref.Kind != "CronJob" || ref.Name != "tick" || j.Annotations["batch.kubernetes.io/cronjob-scheduled-timestamp"] == "" {
			t.Errorf("job %s: owner %v annotations %v", j.Name, ref, j.Annotations)
		}
	}
	// 2. More minutes: still two Jobs.
	for i := 0; i < 3; i++ {
		fc.Step(time.Minute)
	}
	if used, err := wlQuotaUsed(ctxT(t), s, ns, "jobs"); err != nil || used["count/jobs.batch"] != 2 {
		t.Fatalf("quota used = %v (%v)", used, err)
	}
	// 3. Deleting a Job credits the quota and the CronJob creates the current one at once.
	old := jobs.Items[0].Name
	bg := metav1.DeletePropagationBackground
	if err := s.Client.BatchV1().Jobs(ns).Delete(ctxT(t), old, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		t.Fatal(err)
	}
	wlEventually(t, "a new job after the delete", func(ctx context.Context) (bool, error) {
		l, err := s.Client.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) != 2 {
			return false, err
		}
		for _, j := range l.Items {
			if j.Name == old {
				return false, nil
			}
		}
		return true, nil
	})
	cur, err := s.Client.BatchV1().CronJobs(ns).Get(ctxT(t), "tick", metav1.GetOptions{})
	if err != nil || cur.Status.LastScheduleTime == nil || len(cur.Status.Active) == 0 {
		t.Errorf("cronjob status = %+v (%v)", cur.Status, err)
	}
}

// TestReplicationControllerRecoversWhenPodsDeleted: an RC short of quota recovers as soon as
// an unrelated pod is deleted (the quota credit wakes it, no restart, no backoff wait).
func TestReplicationControllerRecoversWhenPodsDeleted(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "rc"
	mkNamespace(t, s, ns)
	mkQuota(t, s, ns, "pods", map[string]string{"pods": "3"})
	if _, err := s.Client.CoreV1().Pods(ns).Create(ctxT(t), pod("standalone", "", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	three := int32(3)
	tmpl := wlTemplate("legacy")
	rc := &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy"},
		Spec:       corev1.ReplicationControllerSpec{Replicas: &three, Selector: map[string]string{"app": "legacy"}, Template: &tmpl},
	}
	if _, err := s.Client.CoreV1().ReplicationControllers(ns).Create(ctxT(t), rc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wlEventually(t, "RC short with ReplicaFailure", func(ctx context.Context) (bool, error) {
		cur, err := s.Client.CoreV1().ReplicationControllers(ns).Get(ctx, "legacy", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range cur.Status.Conditions {
			if c.Type == corev1.ReplicationControllerReplicaFailure && c.Reason == "FailedCreate" && c.Status == corev1.ConditionTrue {
				return cur.Status.Replicas == 2, nil
			}
		}
		return false, nil
	})
	var evs []corev1.Event
	wlEventually(t, "FailedCreate event", func(ctx context.Context) (bool, error) {
		var err error
		evs, err = wlEvents(ctx, s, ns, "ReplicationController", "legacy", "FailedCreate")
		return len(evs) > 0, err
	})
	if evs[0].Source.Component != "replication-controller" {
		t.Fatalf("FailedCreate events = %+v", evs)
	}
	if err := s.Client.CoreV1().Pods(ns).Delete(ctxT(t), "standalone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wlEventually(t, "RC at 3 replicas without ReplicaFailure", func(ctx context.Context) (bool, error) {
		cur, err := s.Client.CoreV1().ReplicationControllers(ns).Get(ctx, "legacy", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return cur.Status.Replicas == 3 && len(cur.Status.Conditions) == 0, nil
	})
}

// wlMakeReady sets every pending pod matching selector Running with a Ready condition, as a
// kubelet would; it reports how many it changed.
func wlMakeReady(ctx context.Context, s *servertest.Server, ns, selector string) (int, error) {
	pods, err := s.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase != corev1.PodPending || p.DeletionTimestamp != nil {
			continue
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		if _, err := s.Client.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// TestDeploymentRollingUpdate drives availability through pods/status: the Deployment becomes
// Available, then a template change rolls out revision 2 within maxSurge/maxUnavailable
// until the old ReplicaSet is at zero.
func TestDeploymentRollingUpdate(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "rolling"
	mkNamespace(t, s, ns)
	mkQuota(t, s, ns, "pods", map[string]string{"pods": "4"})
	if _, err := s.Client.AppsV1().Deployments(ns).Create(ctxT(t), wlDeployment("web", 3), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	complete := func(revision string) func(ctx context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			if _, err := wlMakeReady(ctx, s, ns, "app=web"); err != nil {
				return false, err
			}
			d, err := s.Client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			// The pods quota (4) never lets the rollout exceed replicas + maxSurge (3 + 1).
			if n, err := wlCountPods(ctx, s, ns, "app=web"); err != nil || n > 4 {
				return false, fmt.Errorf("%d pods (%v)", n, err)
			}
			var avail, prog string
			for _, c := range d.Status.Conditions {
				switch c.Type {
				case appsv1.DeploymentAvailable:
					avail = string(c.Status) + "/" + c.Reason
				case appsv1.DeploymentProgressing:
					prog = string(c.Status) + "/" + c.Reason
				}
			}
			return d.Annotations["deployment.kubernetes.io/revision"] == revision && d.Status.ObservedGeneration == d.Generation &&
				d.Status.Replicas == 3 && d.Status.UpdatedReplicas == 3 && d.Status.AvailableReplicas == 3 && d.Status.UnavailableReplicas == 0 &&
				avail == "True/MinimumReplicasAvailable" && prog == "True/NewReplicaSetAvailable", nil
		}
	}
	wlEventually(t, "revision 1 available", complete("1"))
	d, err := s.Client.AppsV1().Deployments(ns).Get(ctxT(t), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Spec.Template.Spec.Containers[0].Image = "nginx:1.27"
	if _, err := s.Client.AppsV1().Deployments(ns).Update(ctxT(t), d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	wlEventually(t, "revision 2 rolled out", complete("2"))
	rss, err := s.Client.AppsV1().ReplicaSets(ns).List(ctxT(t), metav1.ListOptions{})
	if err != nil || len(rss.Items) != 2 {
		t.Fatalf("replica sets = %d (%v)", len(rss.Items), err)
	}
	for _, rs := range rss.Items {
		rev := rs.Annotations["deployment.kubernetes.io/revision"]
		want := int32(0)
		if rs.Spec.Template.Spec.Containers[0].Image == "nginx:1.27" {
			want = 3
			if rev != "2" {
				t.Errorf("new replica set revision %q", rev)
			}
		}
		if *rs.Spec.Replicas != want {
			t.Errorf("replica set %s (revision %s) replicas %d, want %d", rs.Name, rev, *rs.Spec.Replicas, want)
		}
	}
}

// TestDeploymentRecreate: a Recreate rollout scales the old ReplicaSet to zero and makes no
// new pod while the old pods are still there (held terminating by a finalizer, Running);
// once they are gone the new ReplicaSet is made at full scale. Nothing but the pods'
// deletions changes then (the old ReplicaSet already reports none), so the rollout
// proceeding shows their events syncing the Deployment.
func TestDeploymentRecreate(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "recreate"
	mkNamespace(t, s, ns)
	d := wlDeployment("web", 2)
	d.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType
	if _, err := s.Client.AppsV1().Deployments(ns).Create(ctxT(t), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	available := func(revision string) func(ctx context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			if _, err := wlMakeReady(ctx, s, ns, "app=web"); err != nil {
				return false, err
			}
			d, err := s.Client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return d.Annotations["deployment.kubernetes.io/revision"] == revision && d.Status.ObservedGeneration == d.Generation &&
				d.Status.UpdatedReplicas == 2 && d.Status.AvailableReplicas == 2, nil
		}
	}
	wlEventually(t, "revision 1 available", available("1"))
	const hold = "test.quotad.io/hold"
	old, err := s.Client.CoreV1().Pods(ns).List(ctxT(t), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil || len(old.Items) != 2 {
		t.Fatalf("revision 1 pods = %d (%v)", len(old.Items), err)
	}
	for i := range old.Items {
		p := &old.Items[i]
		p.Finalizers = append(p.Finalizers, hold)
		if _, err := s.Client.CoreV1().Pods(ns).Update(ctxT(t), p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cur, err := s.Client.AppsV1().Deployments(ns).Get(ctxT(t), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.Template.Spec.Containers[0].Image = "nginx:1.27"
	if _, err := s.Client.AppsV1().Deployments(ns).Update(ctxT(t), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The Deployment has synced with its old ReplicaSet at zero (status.replicas 0): that
	// sync, and every one while the old pods are there, makes no new ReplicaSet.
	wlEventually(t, "the old replica set at zero", func(ctx context.Context) (bool, error) {
		d, err := s.Client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pods, err := s.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err
		}
		terminating := 0
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil && p.Status.Phase == corev1.PodRunning {
				terminating++
			}
		}
		return d.Status.ObservedGeneration == d.Generation && d.Status.Replicas == 0 && terminating == 2, nil
	})
	rss, err := s.Client.AppsV1().ReplicaSets(ns).List(ctxT(t), metav1.ListOptions{})
	if err != nil || len(rss.Items) != 1 || *rss.Items[0].Spec.Replicas != 0 {
		t.Fatalf("replica sets while the old pods run: %d (%v), want the old one at zero", len(rss.Items), err)
	}
	if n, err := wlCountPods(ctxT(t), s, ns, "app=web"); err != nil || n != 2 {
		t.Fatalf("%d pods while the old pods run (%v), want the 2 old ones", n, err)
	}
	for _, p := range old.Items {
		fresh, err := s.Client.CoreV1().Pods(ns).Get(ctxT(t), p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		fresh.Finalizers = nil
		if _, err := s.Client.CoreV1().Pods(ns).Update(ctxT(t), fresh, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	wlEventually(t, "revision 2 available", available("2"))
	pods, err := s.Client.CoreV1().Pods(ns).List(ctxT(t), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil || len(pods.Items) != 2 {
		t.Fatalf("revision 2 pods = %d (%v)", len(pods.Items), err)
	}
	for _, p := range pods.Items {
		if p.Spec.Containers[0].Image != "nginx:1.27" {
			t.Fatalf("pod %s runs %s after the rollout", p.Name, p.Spec.Containers[0].Image)
		}
	}
}
