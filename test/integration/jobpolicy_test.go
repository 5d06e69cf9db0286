package integration

import (
	"context"
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/server/servertest"
)

// jobConditions renders a Job's True conditions as "Type/Reason: message".
func jobConditions(j *batchv1.Job) []string {
	var out []string
	for _, c := range j.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			out = append(out, fmt.Sprintf("%s/%s: %s", c.Type, c.Reason, c.Message))
		}
	}
	return out
}

// jobPodOfIndex is the pending pod of an Indexed Job's index, once there is one.
func jobPodOfIndex(ctx context.Context, s *servertest.Server, ns, job, ix string) (*corev1.Pod, error) {
	pods, err := s.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + job + ",batch.kubernetes.io/job-completion-index=" + ix})
	if err != nil {
		return nil, err
	}
	for i := range pods.Items {
		if pods.Items[i].Status.Phase == corev1.PodPending {
			return &pods.Items[i], nil
		}
	}
	return nil, nil
}

func indexedJobUnderTest(name string, completions, parallelism int32) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			Parallelism: &parallelism, Completions: &completions, CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}},
			}},
		},
	}
}

// TestJobPoliciesUnderQuota drives a Job's success policy and pod failure policy through
// the server, pods reported by their "node" through pods/status: the conditions and events
// are upstream's, the pods the controller deletes when the Job's end is decided are credited,
// and the namespace's compute quota ends at zero.
func TestJobPoliciesUnderQuota(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ns := "job-policies"
	mkNamespace(t, s, ns)
	mkQuota(t, s, ns, "compute", map[string]string{"requests.cpu": "1"})

	// 1. successPolicy: index 0 succeeding is enough; index 1's running pod is deleted.
	job := indexedJobUnderTest("sp", 4, 2)
	job.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("0")}}}
	if _, err := s.Client.BatchV1().Jobs(ns).Create(ctxT(t), job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wlEventually(t, "index 0 succeeded", func(ctx context.Context) (bool, error) {
		p, err := jobPodOfIndex(ctx, s, ns, "sp", "0")
		if p == nil || err != nil {
			return false, err
		}
		return true, wlSetPodPhase(ctx, s, p, corev1.PodSucceeded)
	})
	const matched = "Matched rules at index 0"
	var j *batchv1.Job
	wlEventually(t, "Complete by the success policy", func(ctx context.Context) (bool, error) {
		var err error
		j, err = s.Client.BatchV1().Jobs(ns).Get(ctx, "sp", metav1.GetOptions{})
		return err == nil && jobFinished(j), err
	})
	if got, want := fmt.Sprint(jobConditions(j)), fmt.Sprint([]string{"SuccessCriteriaMet/SuccessPolicy: " + matched, "Complete/SuccessPolicy: " + matched}); got != want {
		t.Fatalf("conditions %s, want %s", got, want)
	}
	if j.Status.CompletedIndexes != "0" || j.Status.Succeeded != 1 || j.Status.Active != 0 || j.Status.CompletionTime == nil {
		t.Fatalf("status %+v", j.Status)
	}
	if n, err := wlCountPods(ctxT(t), s, ns, "batch.kubernetes.io/job-name=sp"); err != nil || n != 1 {
		t.Fatalf("%d pods (%v), want the succeeded one only", n, err)
	}

	// 2. podFailurePolicy: exit code 42 fails the Job at once, whatever the backoff limit.
	job = indexedJobUnderTest("pfp", 3, 3)
	job.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
		Action:      batchv1.PodFailurePolicyActionFailJob,
		OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
	}}}
	if _, err := s.Client.BatchV1().Jobs(ns).Create(ctxT(t), job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var failed string
	wlEventually(t, "index 2 failed with exit code 42", func(ctx context.Context) (bool, error) {
		p, err := jobPodOfIndex(ctx, s, ns, "pfp", "2")
		if p == nil || err != nil {
			return false, err
		}
		p.Status.Phase = corev1.PodFailed
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", Image: "busybox", ImageID: "busybox",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 42, Reason: "Error"}}}}
		_, err = s.Client.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		failed = p.Name
		return err == nil, err
	})
	wlEventually(t, "Failed by the pod failure policy", func(ctx context.Context) (bool, error) {
		var err error
		j, err = s.Client.BatchV1().Jobs(ns).Get(ctx, "pfp", metav1.GetOptions{})
		return err == nil && jobFinished(j), err
	})
	msg := "Container c for pod " + ns + "/" + failed + " failed with exit code 42 matching FailJob rule at index 0"
	if got, want := fmt.Sprint(jobConditions(j)), fmt.Sprint([]string{"FailureTarget/PodFailurePolicy: " + msg, "Failed/PodFailurePolicy: " + msg}); got != want {
		t.Fatalf("conditions %s, want %s", got, want)
	}
	if j.Status.Failed != 1 || j.Status.Active != 0 {
		t.Fatalf("status %+v", j.Status)
	}
	wlEventually(t, "the PodFailurePolicy event", func(ctx context.Context) (bool, error) {
		evs, err := wlEvents(ctx, s, ns, "Job", "pfp", "PodFailurePolicy")
		if err != nil || len(evs) == 0 {
			return false, err
		}
		if evs[0].Message != msg || evs[0].Type != corev1.EventTypeWarning || evs[0].Source.Component != "job-controller" {
			t.Fatalf("event %+v", evs[0])
		}
		return true, nil
	})
	// Every pod either ended or was deleted: nothing is charged.
	if used, err := wlQuotaUsed(ctxT(t), s, ns, "compute"); err != nil || used["requests.cpu"] != 0 {
		t.Fatalf("compute quota used = %v (%v), want 0", used, err)
	}
}

func jobFinished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
