package workloads

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/controller/fake"
	"github.com/quotad/quotad/internal/registry"
)

func TestIntervals(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		want string
	}{{nil, ""}, {[]int{0}, "0"}, {[]int{2, 0, 1, 1}, "0-2"}, {[]int{7, 1, 3, 4, 5}, "1,3-5,7"}} {
		if got := intervals(nil).with(tc.in...).String(); got != tc.want {
			t.Errorf("with(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// Parsing as upstream: indexes past completions cut, bad parts skipped, adjacent parts
	// joined.
	for _, tc := range []struct {
		in          string
		completions int
		want        string
		total       int
	}{
		{"", 5, "", 0},
		{"0,1,2", 5, "0-2", 3},
		{"1,3-5,7", 6, "1,3-5", 4},
		{"x,2,3-y,4", 10, "2,4", 2},
		{"0-99999", 100000, "0-99999", 100000},
		{"6,1", 5, "", 0},
	} {
		got := parseIntervals(tc.in, tc.completions)
		if got.String() != tc.want || got.total() != tc.total {
			t.Errorf("parseIntervals(%q, %d) = %q (%d), want %q (%d)", tc.in, tc.completions, got, got.total(), tc.want, tc.total)
		}
	}
	s := parseIntervals("1,3-5", 10).with(2, 9)
	if s.String() != "1-5,9" || !s.has(4) || s.has(0) || s.has(6) || !s.has(9) {
		t.Fatalf("%q: has wrong", s)
	}
	if n := parseIntervals("0-3,8-9", 10).overlap(parseIntervals("2-8", 10)); n != 3 {
		t.Fatalf("overlap %d, want 3", n)
	}
}

func TestMatchSuccessPolicy(t *testing.T) {
	rules := func(r ...batchv1.SuccessPolicyRule) *batchv1.SuccessPolicy { return &batchv1.SuccessPolicy{Rules: r} }
	for _, tc := range []struct {
		name      string
		policy    *batchv1.SuccessPolicy
		succeeded string
		want      string
	}{
		{"no policy", nil, "0-4", ""},
		{"nothing succeeded", rules(batchv1.SuccessPolicyRule{SucceededCount: ptr.To[int32](1)}), "", ""},
		{"count reached", rules(batchv1.SuccessPolicyRule{SucceededCount: ptr.To[int32](2)}), "0,3", "Matched rules at index 0"},
		{"count short", rules(batchv1.SuccessPolicyRule{SucceededCount: ptr.To[int32](3)}), "0,3", ""},
		{"indexes all", rules(batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To("1-2")}), "0-2", "Matched rules at index 0"},
		{"indexes missing one", rules(batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To("1-3")}), "0-2", ""},
		{"indexes with count", rules(batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To("1-3"), SucceededCount: ptr.To[int32](2)}), "0-2", "Matched rules at index 0"},
		{"second rule", rules(batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To("4")}, batchv1.SuccessPolicyRule{SucceededCount: ptr.To[int32](1)}), "0", "Matched rules at index 1"},
		{"indexes past completions skipped", rules(batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To("7-9")}, batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To("0")}), "0", "Matched rules at index 1"},
	} {
		msg, ok := matchSuccessPolicy(tc.policy, 5, parseIntervals(tc.succeeded, 5))
		if msg != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: got %q, %v; want %q", tc.name, msg, ok, tc.want)
		}
	}
}

// TestMatchPodFailurePolicy pins upstream's messages and the first-rule-wins order.
func TestMatchPodFailurePolicy(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}, Status: corev1.PodStatus{
		Phase:                 corev1.PodFailed,
		Conditions:            []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "init", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3}}}},
		ContainerStatuses: []corev1.ContainerStatus{
			{Name: "ok", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}},
			{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 42}}},
		},
	}}
	exit := func(action batchv1.PodFailurePolicyAction, container *string, op batchv1.PodFailurePolicyOnExitCodesOperator, v ...int32) batchv1.PodFailurePolicyRule {
		return batchv1.PodFailurePolicyRule{Action: action, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{ContainerName: container, Operator: op, Values: v}}
	}
	disruption := func(action batchv1.PodFailurePolicyAction) batchv1.PodFailurePolicyRule {
		return batchv1.PodFailurePolicyRule{Action: action, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}}
	}
	for _, tc := range []struct {
		name   string
		rules  []batchv1.PodFailurePolicyRule
		action batchv1.PodFailurePolicyAction
		msg    string
	}{
		{"exit code in", []batchv1.PodFailurePolicyRule{exit(batchv1.PodFailurePolicyActionFailJob, nil, batchv1.PodFailurePolicyOnExitCodesOpIn, 42)},
			batchv1.PodFailurePolicyActionFailJob, "Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 0"},
		{"exit code not in, init container", []batchv1.PodFailurePolicyRule{exit(batchv1.PodFailurePolicyActionCount, ptr.To("init"), batchv1.PodFailurePolicyOnExitCodesOpNotIn, 1, 2)},
			batchv1.PodFailurePolicyActionCount, "Container init for pod ns/p failed with exit code 3 matching Count rule at index 0"},
		{"other container", []batchv1.PodFailurePolicyRule{exit(batchv1.PodFailurePolicyActionFailJob, ptr.To("ok"), batchv1.PodFailurePolicyOnExitCodesOpNotIn, 1)}, "", ""},
		{"condition after a rule not matching", []batchv1.PodFailurePolicyRule{exit(batchv1.PodFailurePolicyActionFailJob, nil, batchv1.PodFailurePolicyOnExitCodesOpIn, 7), disruption(batchv1.PodFailurePolicyActionFailJob)},
			batchv1.PodFailurePolicyActionFailJob, "Pod ns/p has condition DisruptionTarget matching FailJob rule at index 1"},
		{"first rule wins", []batchv1.PodFailurePolicyRule{disruption(batchv1.PodFailurePolicyActionIgnore), exit(batchv1.PodFailurePolicyActionFailJob, nil, batchv1.PodFailurePolicyOnExitCodesOpIn, 42)},
			batchv1.PodFailurePolicyActionIgnore, "Pod ns/p has condition DisruptionTarget matching Ignore rule at index 0"},
	} {
		a := matchPodFailurePolicy(&batchv1.PodFailurePolicy{Rules: tc.rules}, pod)
		if a.action != tc.action || a.msg != tc.msg {
			t.Errorf("%s: got %q %q, want %q %q", tc.name, a.action, a.msg, tc.action, tc.msg)
		}
		if a.counts() != (tc.action != batchv1.PodFailurePolicyActionIgnore) {
			t.Errorf("%s: counts() = %v", tc.name, a.counts())
		}
	}
	if a := matchPodFailurePolicy(nil, pod); a.action != "" || !a.counts() {
		t.Fatalf("no policy: %+v", a)
	}
}

// podStatus changes a pod's status as its node would.
func podStatus(t *testing.T, fc *fake.Client, name string, f func(*corev1.PodStatus)) {
	t.Helper()
	if _, err := fc.Update(context.Background(), fc.Catalogue().Get(podGVR), "ns", name, "status", func(o runtime.Object) (runtime.Object, error) {
		f(&o.(*corev1.Pod).Status)
		return o, nil
	}, registry.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// exitedWith fails a pod's container with an exit code.
func exitedWith(code int32) func(*corev1.PodStatus) {
	return func(st *corev1.PodStatus) {
		st.Phase = corev1.PodFailed
		st.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}}
	}
}

func indexedJob(completions, parallelism int32) *batchv1.Job {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "batch", UID: "job-uid", Generation: 1},
		Spec: batchv1.JobSpec{Parallelism: &parallelism, Completions: &completions, Template: template(),
			CompletionMode: ptr.To(batchv1.IndexedCompletion), BackoffLimit: ptr.To[int32](6)},
	}
	job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	return job
}

// podOfIndex is the pod of index ix that is neither succeeded nor failed.
func podOfIndex(t *testing.T, fc *fake.Client, ix string) *corev1.Pod {
	t.Helper()
	for _, p := range podsOf(fc, "ns") {
		if p.Annotations[batchv1.JobCompletionIndexAnnotation] == ix && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			return p
		}
	}
	t.Fatalf("no running pod of index %s among %v", ix, podNames(podsOf(fc, "ns")))
	return nil
}

// conditions lists a Job's conditions as "Type/Reason: message".
func conditions(fc *fake.Client) []string {
	j := fc.Object(jobGVR, "ns", "batch").(*batchv1.Job)
	var out []string
	for _, c := range j.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			out = append(out, string(c.Type)+"/"+c.Reason+": "+c.Message)
		}
	}
	return out
}

func wantConditions(t *testing.T, fc *fake.Client, want ...string) {
	t.Helper()
	if got := conditions(fc); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("conditions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestJobSuccessPolicy: once the policy's rule holds, the Job gets SuccessCriteriaMet with
// reason SuccessPolicy, its other pods are deleted, and Complete (same reason and message)
// waits until none of them is terminating.
func TestJobSuccessPolicy(t *testing.T) {
	fc, _, opts := newFake()
	job := indexedJob(5, 2)
	job.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("0")}}}
	job.Spec.Template.Finalizers = []string{"test/hold"} // deleted pods stay terminating
	fc.Add(job)
	c := NewJob(fc, nil, opts)
	sync := jobSync(t, fc, c)
	syncOK(t, sync, "ns/batch")
	podStatus(t, fc, podOfIndex(t, fc, "0").Name, func(st *corev1.PodStatus) { st.Phase = corev1.PodSucceeded })
	other := podOfIndex(t, fc, "1")
	syncOK(t, sync, "ns/batch")
	wantConditions(t, fc, "SuccessCriteriaMet/SuccessPolicy: Matched rules at index 0")
	if p := fc.Object(podGVR, "ns", other.Name).(*corev1.Pod); p.DeletionTimestamp == nil {
		t.Fatal("the other index's pod was not deleted")
	}
	j := fc.Object(jobGVR, "ns", "batch").(*batchv1.Job)
	if j.Status.Active != 0 || *j.Status.Terminating != 1 || j.Status.CompletedIndexes != "0" || j.Status.CompletionTime != nil {
		t.Fatalf("status %+v", j.Status)
	}
	// The node confirms the deletion: the pod goes, and the Job completes.
	if _, err := fc.Update(context.Background(), fc.Catalogue().Get(podGVR), "ns", other.Name, "", func(o runtime.Object) (runtime.Object, error) {
		o.(*corev1.Pod).Finalizers = nil
		return o, nil
	}, registry.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	syncOK(t, sync, "ns/batch")
	wantConditions(t, fc, "SuccessCriteriaMet/SuccessPolicy: Matched rules at index 0", "Complete/SuccessPolicy: Matched rules at index 0")
	if n := len(podsOf(fc, "ns")); n != 1 {
		t.Fatalf("%d pods, want the succeeded one only", n)
	}
	if j := fc.Object(jobGVR, "ns", "batch").(*batchv1.Job); j.Status.CompletionTime == nil || *j.Status.Terminating != 0 {
		t.Fatalf("status %+v", j.Status)
	}
}

// TestJobPodFailurePolicy: FailJob fails the Job with upstream's message; Ignore neither
// counts against the backoff limit nor stops the pod being replaced.
func TestJobPodFailurePolicy(t *testing.T) {
	fc, _, opts := newFake()
	job := indexedJob(2, 2)
	job.Spec.BackoffLimit = ptr.To[int32](0)
	job.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}}},
		{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}}},
	}}
	fc.Add(job)
	c := NewJob(fc, nil, opts)
	sync := jobSync(t, fc, c)
	syncOK(t, sync, "ns/batch")
	evicted := podOfIndex(t, fc, "0")
	podStatus(t, fc, evicted.Name, func(st *corev1.PodStatus) {
		st.Phase = corev1.PodFailed
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue})
	})
	syncOK(t, sync, "ns/batch")
	wantConditions(t, fc)
	if j := fc.Object(jobGVR, "ns", "batch").(*batchv1.Job); j.Status.Failed != 0 || j.Status.Active != 2 {
		t.Fatalf("an ignored failure: status %+v", j.Status)
	}
	failing := podOfIndex(t, fc, "1")
	podStatus(t, fc, failing.Name, exitedWith(42))
	syncOK(t, sync, "ns/batch")
	msg := "Container c for pod ns/" + failing.Name + " failed with exit code 42 matching FailJob rule at index 1"
	// The other index's pod was deleted in that sync: Failed waits for the next.
	wantConditions(t, fc, "FailureTarget/PodFailurePolicy: "+msg)
	syncOK(t, sync, "ns/batch")
	wantConditions(t, fc, "FailureTarget/PodFailurePolicy: "+msg, "Failed/PodFailurePolicy: "+msg)
	if j := fc.Object(jobGVR, "ns", "batch").(*batchv1.Job); j.Status.Failed != 1 || j.Status.Active != 0 {
		t.Fatalf("status %+v", j.Status)
	}
}

// TestJobBackoffLimitPerIndex: an index is retried with its failure count in the new pod's
// annotation until the count reaches backoffLimitPerIndex; then it is failed, not retried,
// and the Job fails with FailedIndexes once every other index is done, or at once with
// MaxFailedIndexesExceeded past maxFailedIndexes.
func TestJobBackoffLimitPerIndex(t *testing.T) {
	for _, maxFailed := range []*int32{nil, ptr.To[int32](0)} {
		fc, _, opts := newFake()
		job := indexedJob(3, 3)
		job.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
		job.Spec.MaxFailedIndexes = maxFailed
		fc.Add(job)
		c := NewJob(fc, nil, opts)
		sync := jobSync(t, fc, c)
		syncOK(t, sync, "ns/batch")
		first := podOfIndex(t, fc, "1")
		if got := first.Annotations[batchv1.JobIndexFailureCountAnnotation]; got != "0" {
			t.Fatalf("first pod's failure count %q, want 0", got)
		}
		podStatus(t, fc, first.Name, exitedWith(1))
		syncOK(t, sync, "ns/batch")
		second := podOfIndex(t, fc, "1")
		if got := second.Annotations[batchv1.JobIndexFailureCountAnnotation]; got != "1" {
			t.Fatalf("replacement's failure count %q, want 1", got)
		}
		wantConditions(t, fc)
		podStatus(t, fc, second.Name, exitedWith(1))
		syncOK(t, sync, "ns/batch")
		j := fc.Object(jobGVR, "ns", "batch").(*batchv1.Job)
		if j.Status.FailedIndexes == nil || *j.Status.FailedIndexes != "1" || j.Status.Failed != 2 {
			t.Fatalf("status %+v", j.Status)
		}
		if maxFailed != nil {
			wantConditions(t, fc, "FailureTarget/MaxFailedIndexesExceeded: "+jobMsgMaxFailedIndexesExceeded)
			syncOK(t, sync, "ns/batch") // after the other indexes' pods were deleted
			j = fc.Object(jobGVR, "ns", "batch").(*batchv1.Job)
			wantConditions(t, fc, "FailureTarget/MaxFailedIndexesExceeded: "+jobMsgMaxFailedIndexesExceeded, "Failed/MaxFailedIndexesExceeded: "+jobMsgMaxFailedIndexesExceeded)
			if j.Status.Active != 0 {
				t.Fatalf("active %d after the Job failed", j.Status.Active)
			}
			continue
		}
		wantConditions(t, fc)
		for _, ix := range []string{"0", "2"} {
			podStatus(t, fc, podOfIndex(t, fc, ix).Name, func(st *corev1.PodStatus) { st.Phase = corev1.PodSucceeded })
		}
		syncOK(t, sync, "ns/batch")
		wantConditions(t, fc, "FailureTarget/FailedIndexes: "+jobMsgFailedIndexes, "Failed/FailedIndexes: "+jobMsgFailedIndexes)
		j = fc.Object(jobGVR, "ns", "batch").(*batchv1.Job)
		if j.Status.CompletedIndexes != "0,2" || *j.Status.FailedIndexes != "1" || j.Status.Succeeded != 2 {
			t.Fatalf("status %+v", j.Status)
		}
		if n := len(podsOf(fc, "ns")); n != 4 {
			t.Fatalf("%d pods, want 4: the failed index is not retried", n)
		}
	}
}

// TestJobPodReplacementPolicy: under podReplacementPolicy Failed a terminating pod is
// replaced only once it is gone; under TerminatingOrFailed at once.
func TestJobPodReplacementPolicy(t *testing.T) {
	for _, policy := range []batchv1.PodReplacementPolicy{batchv1.Failed, batchv1.TerminatingOrFailed} {
		fc, _, opts := newFake()
		job := indexedJob(2, 2)
		job.Spec.PodReplacementPolicy = ptr.To(policy)
		job.Spec.Template.Finalizers = []string{"test/hold"}
		fc.Add(job)
		c := NewJob(fc, nil, opts)
		sync := jobSync(t, fc, c)
		syncOK(t, sync, "ns/batch")
		p := podOfIndex(t, fc, "1")
		if _, err := fc.Delete(context.Background(), fc.Catalogue().Get(podGVR), "ns", p.Name, metav1.DeleteOptions{}, registry.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		syncOK(t, sync, "ns/batch")
		want := 3 // a replacement beside the terminating pod
		if policy == batchv1.Failed {
			want = 2
		}
		if n := len(podsOf(fc, "ns")); n != want {
			t.Fatalf("%s: %d pods while one terminates, want %d", policy, n, want)
		}
		if j := fc.Object(jobGVR, "ns", "batch").(*batchv1.Job); *j.Status.Terminating != 1 {
			t.Fatalf("%s: status %+v", policy, j.Status)
		}
	}
}
