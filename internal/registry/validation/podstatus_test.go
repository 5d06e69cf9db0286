package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodStatusContainerRestartRules: with container restart rules (on in v1.37, though
// quotad's pod validation does not accept them yet, so no pod through the API has them),
// a terminated container may leave that state when its rules, else its own restart
// policy, else the pod's, restart it for its exit code; every container may when some
// container has a RestartAllContainers rule. The texts and verdicts are kube-apiserver's
// for the same writes.
func TestPodStatusContainerRestartRules(t *testing.T) {
	onExit := func(action corev1.ContainerRestartRuleAction, op corev1.ContainerRestartRuleOnExitCodesOperator, codes ...int32) []corev1.ContainerRestartRule {
		return []corev1.ContainerRestartRule{{Action: action, ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes}}}
	}
	const forbidden = "status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state"
	for _, tc := range []struct {
		name       string
		podPolicy  corev1.RestartPolicy
		containers []corev1.Container
		exitCode   int32
		want       string
	}{
		{name: "rule matches", podPolicy: corev1.RestartPolicyNever, exitCode: 42, containers: []corev1.Container{{Name: "c",
			RestartPolicy: ptr(corev1.ContainerRestartPolicyNever), RestartPolicyRules: onExit(corev1.ContainerRestartRuleActionRestart, corev1.ContainerRestartRuleOnExitCodesOpIn, 42)}}},
		{name: "rule does not match", podPolicy: corev1.RestartPolicyNever, exitCode: 1, want: forbidden, containers: []corev1.Container{{Name: "c",
			RestartPolicy: ptr(corev1.ContainerRestartPolicyNever), RestartPolicyRules: onExit(corev1.ContainerRestartRuleActionRestart, corev1.ContainerRestartRuleOnExitCodesOpIn, 42)}}},
		{name: "container OnFailure under pod Never", podPolicy: corev1.RestartPolicyNever, exitCode: 3, containers: []corev1.Container{{Name: "c",
			RestartPolicy: ptr(corev1.ContainerRestartPolicyOnFailure)}}},
		{name: "container Never under pod Always", podPolicy: corev1.RestartPolicyAlways, exitCode: 3, want: forbidden, containers: []corev1.Container{{Name: "c",
			RestartPolicy: ptr(corev1.ContainerRestartPolicyNever)}}},
		{name: "restart all containers", podPolicy: corev1.RestartPolicyNever, exitCode: 0, containers: []corev1.Container{{Name: "c"}, {Name: "d",
			RestartPolicy: ptr(corev1.ContainerRestartPolicyNever), RestartPolicyRules: onExit(corev1.ContainerRestartRuleActionRestartAllContainers, corev1.ContainerRestartRuleOnExitCodesOpNotIn, 0)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", ResourceVersion: "1"},
				Spec: corev1.PodSpec{RestartPolicy: tc.podPolicy, Containers: tc.containers}}
			old.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: tc.exitCode}}}}
			n := old.DeepCopy()
			n.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
			got := ""
			if errs := PodStatusUpdate(n, old); len(errs) > 0 {
				got = errs.ToAggregate().Error()
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPodDeletionCost: the deletion cost annotation is upstream's int32 without a plus
// sign or a leading zero; an update (pods/status here) may keep a stored invalid one.
func TestPodDeletionCost(t *testing.T) {
	for _, tc := range []struct {
		v       string
		invalid bool
	}{{"0", false}, {"-0", false}, {"17", false}, {"-2147483648", false}, {"2147483647", false}, {"-08", false},
		{"", true}, {"+5", true}, {"08", true}, {"00", true}, {"2147483648", true}, {"1.5", true}, {" 1", true}, {"-", true}} {
		if got := invalidDeletionCost(map[string]string{corev1.PodDeletionCost: tc.v}); got != tc.invalid {
			t.Errorf("%q: invalid %v, want %v", tc.v, got, tc.invalid)
		}
	}
	old := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", ResourceVersion: "1", Annotations: map[string]string{corev1.PodDeletionCost: "+5"}}}
	n := old.DeepCopy()
	n.Labels = map[string]string{"a": "b"}
	if errs := PodStatusUpdate(n, old); len(errs) != 0 {
		t.Errorf("a stored invalid deletion cost kept: %v", errs)
	}
}
