package table

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func containers(names ...string) []corev1.Container {
	var out []corev1.Container
	for _, n := range names {
		out = append(out, corev1.Container{Name: n, Image: n + ":1"})
	}
	return out
}

func running(name string, ready bool) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Ready: ready, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
}

func terminated(name, reason string, exit, signal int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: exit, Signal: signal}}}
}

func waiting(name, reason string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}
}

func TestPodCells(t *testing.T) {
	succeeded := []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "The pod has completed successfully."}}
	failed := []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: "Failed", Message: "The pod failed."}}
	always := corev1.ContainerRestartPolicyAlways

	tests := []struct {
		name string
		pod  corev1.Pod
		// ready, status, restarts; age is always 10s and wide cells are
		// checked separately below.
		ready, status, restarts string
		conditions              []metav1.TableRowCondition
	}{
		{
			name:  "pending without statuses",
			pod:   corev1.Pod{Spec: corev1.PodSpec{Containers: containers("a")}, Status: corev1.PodStatus{Phase: corev1.PodPending}},
			ready: "0/1", status: "Pending", restarts: "0",
		},
		{
			name:  "no phase at all",
			pod:   corev1.Pod{Spec: corev1.PodSpec{Containers: containers("a")}},
			ready: "0/1", status: "", restarts: "0",
		},
		{
			name: "running and ready",
			pod: corev1.Pod{Spec: corev1.PodSpec{Containers: containers("a", "b")}, Status: corev1.PodStatus{Phase: corev1.PodRunning,
				ContainerStatuses: []corev1.ContainerStatus{running("a", true), running("b", false)}}},
			ready: "1/2", status: "Running", restarts: "0",
		},
		{
			name: "succeeded with completed containers",
			pod: corev1.Pod{Spec: corev1.PodSpec{Containers: containers("a")}, Status: corev1.PodStatus{Phase: corev1.PodSucceeded,
				ContainerStatuses: []corev1.ContainerStatus{terminated("a", "Completed", 0, 0)}}},
			ready: "0/1", status: "Completed", restarts: "0", conditions: succeeded,
		},
		{
			name:  "succeeded without container statuses",
			pod:   corev1.Pod{Spec: corev1.PodSpec{Containers: containers("a")}, Status: corev1.PodStatus{Phase: corev1.PodSucceeded}},
			ready: "0/1", status: "Succeeded", restarts: "0", conditions: succeeded,
		},
		{
			name: "failed with an error",
			pod: corev1.Pod{Spec: corev1.PodSpec{Containers: containers("a")}, Status: corev1.PodStatus{Phase: corev1.PodFailed,
				ContainerStatuses: []corev1.ContainerStatus{terminated("a", "Error", 1, 0)}}},
			ready: "0/1", status: "Error", restarts: "0", conditions: failed,
		},
		{
			name:  "evicted",
			pod:   corev1.Pod{Spec: corev1.PodSpec{Containers: containers("a")}, Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"}},
			ready: "0/1", status: "Evicted", restarts: "0", conditions: failed,
		},
		{
			name: "terminated without reason: exit code",
			pod: corev1.Pod{Spec: corev1.PodSpec{Containers: containers("a")}, Status: corev1.PodStatus{Phase: corev1.PodRunning,
				ContainerStatuses: []corev1.ContainerStatus{terminated("a", "", 2, 0)}}},
			ready: "0/1", status: "ExitCode:2", restarts: "0",
		},
		{
			name: "terminated without reason: signal",
			pod: corev1.Pod{Spec: corev1.PodSpec{Containers: containers("a")}, Status: corev1.PodStatus{Phase: corev1.PodRunning,
				ContainerStatuses: []corev1.ContainerStatus{terminated("a", "", 137, 9)}}},
			ready: "0/1", status: "Signal:9", restarts: "0",
		},
		{
			name: "first container decides",
			pod: corev1.Pod{Spec: corev1.PodSpec{Containers: containers("a", "b")}, Status: corev1.PodStatus{Phase: corev1.PodPending,
				ContainerStatuses: []corev1.ContainerStatus{waiting("a", "ImagePullBackOff"), waiting("b", "ContainerCreating")}}},
			ready: "0/2", status: "ImagePullBackOff", restarts: "0",
		},
		{
			name: "crash loop with restarts",
			pod: corev1.Pod{Spec: corev1.PodSpec{Containers: containers("a")}, Status: corev1.PodStatus{Phase: corev1.PodRunning,
				ContainerStatuses: []corev1.ContainerStatus{{
					Name: "a", RestartCount: 3,
					State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: ago(5 * time.Minute)}},
				}}}},
			ready: "0/1", status: "CrashLoopBackOff", restarts: "3 (5m ago)",
		},
		{
			name: "restarts without a last termination time",
			pod: corev1.Pod{Spec: corev1.PodSpec{Containers: containers("a")}, Status: corev1.PodStatus{Phase: corev1.PodRunning,
				ContainerStatuses: []corev1.ContainerStatus{{Name: "a", RestartCount: 2, Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}},
			ready: "1/1", status: "Running", restarts: "2",
		},
		{
			name: "completed but a container still runs, pod ready",
			pod: corev1.Pod{Spec: corev1.PodSpec{Containers: containers("a", "b")}, Status: corev1.PodStatus{Phase: corev1.PodRunning,
				Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
				ContainerStatuses: []corev1.ContainerStatus{terminated("a", "Completed", 0, 0), running("b", true)}}},
			ready: "1/2", status: "Running", restarts: "0",
		},
		{
			name: "completed but a container still runs, pod not ready",
			pod: corev1.Pod{Spec: corev1.PodSpec{Containers: containers("a", "b")}, Status: corev1.PodStatus{Phase: corev1.PodRunning,
				ContainerStatuses: []corev1.ContainerStatus{terminated("a", "Completed", 0, 0), running("b", true)}}},
			ready: "1/2", status: "NotReady", restarts: "0",
		},
		{
			name: "init container waiting without reason",
			pod: corev1.Pod{Spec: corev1.PodSpec{InitContainers: containers("i1", "i2"), Containers: containers("a")}, Status: corev1.PodStatus{Phase: corev1.PodPending,
				InitContainerStatuses: []corev1.ContainerStatus{terminated("i1", "Completed", 0, 0), waiting("i2", "")},
				ContainerStatuses:     []corev1.ContainerStatus{waiting("a", "PodInitializing")}}},
			ready: "0/1", status: "Init:1/2", restarts: "0",
		},
		{
			name: "init container pulling",
			pod: corev1.Pod{Spec: corev1.PodSpec{InitContainers: containers("i1"), Containers: containers("a")}, Status: corev1.PodStatus{Phase: corev1.PodPending,
				InitContainerStatuses: []corev1.ContainerStatus{waiting("i1", "ErrImagePull")}}},
			ready: "0/1", status: "Init:ErrImagePull", restarts: "0",
		},
		{
			name: "init container PodInitializing counts as not started",
			pod: corev1.Pod{Spec: corev1.PodSpec{InitContainers: containers("i1"), Containers: containers("a")}, Status: corev1.PodStatus{Phase: corev1.PodPending,
				InitContainerStatuses: []corev1.ContainerStatus{waiting("i1", "PodInitializing")}}},
			ready: "0/1", status: "Init:0/1", restarts: "0",
		},
		{
			name: "init container failed with exit code",
			pod: corev1.Pod{Spec: corev1.PodSpec{InitContainers: containers("i1"), Containers: containers("a")}, Status: corev1.PodStatus{Phase: corev1.PodPending,
				InitContainerStatuses: []corev1.ContainerStatus{{Name: "i1", RestartCount: 4, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}}}},
			ready: "0/1", status: "Init:ExitCode:1", restarts: "4",
		},
		{
			name: "init container killed by a signal",
			pod: corev1.Pod{Spec: corev1.PodSpec{InitContainers: containers("i1"), Containers: containers("a")}, Status: corev1.PodStatus{Phase: corev1.PodPending,
				InitContainerStatuses: []corev1.ContainerStatus{terminated("i1", "", 137, 9)}}},
			ready: "0/1", status: "Init:Signal:9", restarts: "0",
		},
		{
			name: "init container failed with a reason",
			pod: corev1.Pod{Spec: corev1.PodSpec{InitContainers: containers("i1"), Containers: containers("a")}, Status: corev1.PodStatus{Phase: corev1.PodPending,
				InitContainerStatuses: []corev1.ContainerStatus{terminated("i1", "OOMKilled", 137, 0)}}},
			ready: "0/1", status: "Init:OOMKilled", restarts: "0",
		},
		{
			name: "restartable init container (sidecar) counts as a container",
			pod: corev1.Pod{
				Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "side", RestartPolicy: &always}}, Containers: containers("a")},
				Status: corev1.PodStatus{Phase: corev1.PodRunning,
					Conditions:            []corev1.PodCondition{{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}},
					InitContainerStatuses: []corev1.ContainerStatus{{Name: "side", Ready: true, Started: ptr(true), RestartCount: 1, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}},
					ContainerStatuses:     []corev1.ContainerStatus{{Name: "a", Ready: true, RestartCount: 2, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}},
				}},
			ready: "2/2", status: "Running", restarts: "3",
		},
		{
			name: "scheduling gated",
			pod: corev1.Pod{Spec: corev1.PodSpec{Containers: containers("a")}, Status: corev1.PodStatus{Phase: corev1.PodPending,
				Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "SchedulingGated"}}}},
			ready: "0/1", status: "SchedulingGated", restarts: "0",
		},
		{
			name: "terminating",
			pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: agoPtr(0)}, Spec: corev1.PodSpec{Containers: containers("a")},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{running("a", true)}}},
			ready: "1/1", status: "Terminating", restarts: "0",
		},
		{
			name: "terminating pending pod",
			pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: agoPtr(0)}, Spec: corev1.PodSpec{Containers: containers("a")},
				Status: corev1.PodStatus{Phase: corev1.PodPending}},
			ready: "0/1", status: "Terminating", restarts: "0",
		},
		{
			name: "deleted after success keeps its status",
			pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: agoPtr(0)}, Spec: corev1.PodSpec{Containers: containers("a")},
				Status: corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{terminated("a", "Completed", 0, 0)}}},
			ready: "0/1", status: "Completed", restarts: "0", conditions: succeeded,
		},
		{
			name: "deleted on a lost node",
			pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: agoPtr(0)}, Spec: corev1.PodSpec{Containers: containers("a")},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, Reason: "NodeLost"}},
			ready: "0/1", status: "Unknown", restarts: "0",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.pod.Name = "p"
			tt.pod.CreationTimestamp = ago(10 * time.Second)
			row := rowOf(t, &tt.pod)
			if got, want := row.Cells[:5], []interface{}{"p", tt.ready, tt.status, tt.restarts, "10s"}; !reflect.DeepEqual(got, want) {
				t.Errorf("cells\n got %#v\nwant %#v", got, want)
			}
			if !reflect.DeepEqual(row.Conditions, tt.conditions) {
				t.Errorf("conditions\n got %#v\nwant %#v", row.Conditions, tt.conditions)
			}
		})
	}
}

func TestPodWideCells(t *testing.T) {
	tests := []struct {
		name string
		pod  corev1.Pod
		want []interface{} // IP, NODE, NOMINATED NODE, READINESS GATES
	}{
		{"unscheduled", corev1.Pod{}, []interface{}{"<none>", "<none>", "<none>", "<none>"}},
		{"scheduled", corev1.Pod{
			Spec:   corev1.PodSpec{NodeName: "n1"},
			Status: corev1.PodStatus{PodIP: "10.0.0.9", PodIPs: []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}}, NominatedNodeName: "n2"},
		}, []interface{}{"10.0.0.1", "n1", "n2", "<none>"}},
		{"podIP only (v1 conversion fills podIPs)", corev1.Pod{Status: corev1.PodStatus{PodIP: "10.0.0.9"}}, []interface{}{"10.0.0.9", "<none>", "<none>", "<none>"}},
		{"readiness gates", corev1.Pod{
			Spec: corev1.PodSpec{ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "a"}, {ConditionType: "b"}, {ConditionType: "c"}}},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
				{Type: "a", Status: corev1.ConditionTrue}, {Type: "b", Status: corev1.ConditionFalse}, {Type: "b", Status: corev1.ConditionTrue},
			}},
		}, []interface{}{"<none>", "<none>", "<none>", "1/3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := rowOf(t, &tt.pod)
			if got := row.Cells[5:]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("wide cells\n got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}
