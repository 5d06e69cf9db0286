package table

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func template(names ...string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: containers(names...)}}
}

func selector(kv ...string) *metav1.LabelSelector {
	s := &metav1.LabelSelector{MatchLabels: map[string]string{}}
	for i := 0; i < len(kv); i += 2 {
		s.MatchLabels[kv[i]] = kv[i+1]
	}
	return s
}

func TestAppsCells(t *testing.T) {
	tests := []struct {
		name string
		obj  runtime.Object
		want []interface{}
	}{
		{"deployment", &appsv1.Deployment{ObjectMeta: objMeta("nginx", 3*time.Minute),
			Spec:   appsv1.DeploymentSpec{Replicas: ptr(int32(2)), Selector: selector("app", "nginx"), Template: template("nginx")},
			Status: appsv1.DeploymentStatus{ReadyReplicas: 1, UpdatedReplicas: 2, AvailableReplicas: 1}},
			[]interface{}{"nginx", "1/2", int64(2), int64(1), "3m", "nginx", "nginx:1", "app=nginx"}},
		{"deployment defaults", &appsv1.Deployment{ObjectMeta: objMeta("d", time.Second),
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}}},
			[]interface{}{"d", "0/1", int64(0), int64(0), "1s", "", "", "<invalid>"}},
		{"deployment without selector", &appsv1.Deployment{ObjectMeta: objMeta("d", time.Second), Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(0))}},
			[]interface{}{"d", "0/0", int64(0), int64(0), "1s", "", "", ""}},
		{"replicaset", &appsv1.ReplicaSet{ObjectMeta: objMeta("nginx-5869d7778c", 3*time.Minute),
			Spec:   appsv1.ReplicaSetSpec{Replicas: ptr(int32(2)), Selector: selector("app", "nginx", "pod-template-hash", "5869d7778c"), Template: template("nginx", "side")},
			Status: appsv1.ReplicaSetStatus{Replicas: 2, ReadyReplicas: 0}},
			[]interface{}{"nginx-5869d7778c", int64(2), int64(2), int64(0), "3m", "nginx,side", "nginx:1,side:1", "app=nginx,pod-template-hash=5869d7778c"}},
		{"replicaset without selector", &appsv1.ReplicaSet{ObjectMeta: objMeta("rs", time.Second)},
			[]interface{}{"rs", int64(1), int64(0), int64(0), "1s", "", "", "<none>"}},
		{"statefulset", &appsv1.StatefulSet{ObjectMeta: objMeta("db", 2*time.Hour),
			Spec:   appsv1.StatefulSetSpec{Replicas: ptr(int32(3)), Template: template("pg")},
			Status: appsv1.StatefulSetStatus{ReadyReplicas: 3}},
			[]interface{}{"db", "3/3", "120m", "pg", "pg:1"}},
		{"daemonset", &appsv1.DaemonSet{ObjectMeta: objMeta("agent", 72*time.Hour),
			Spec: appsv1.DaemonSetSpec{Selector: selector("app", "agent"), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: containers("agent"), NodeSelector: map[string]string{"kubernetes.io/os": "linux"}}}},
			Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 2, UpdatedNumberScheduled: 1, NumberAvailable: 2}},
			[]interface{}{"agent", int64(3), int64(3), int64(2), int64(1), int64(2), "kubernetes.io/os=linux", "3d", "agent", "agent:1", "app=agent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkCells(t, tt.obj, tt.want) })
	}
}

func TestJobCells(t *testing.T) {
	cond := func(tp batchv1.JobConditionType, s corev1.ConditionStatus) batchv1.JobCondition {
		return batchv1.JobCondition{Type: tp, Status: s}
	}
	tests := []struct {
		name string
		job  batchv1.Job
		// STATUS COMPLETIONS DURATION
		status, completions, duration string
	}{
		{"new", batchv1.Job{Spec: batchv1.JobSpec{Completions: ptr(int32(1)), Parallelism: ptr(int32(1))}},
			"Running", "0/1", ""},
		{"running", batchv1.Job{Spec: batchv1.JobSpec{Completions: ptr(int32(5))}, Status: batchv1.JobStatus{Succeeded: 2, StartTime: agoPtr(90 * time.Second)}},
			"Running", "2/5", "90s"},
		{"complete", batchv1.Job{Spec: batchv1.JobSpec{Completions: ptr(int32(1))}, Status: batchv1.JobStatus{Succeeded: 1,
			StartTime: agoPtr(10 * time.Minute), CompletionTime: agoPtr(8 * time.Minute),
			Conditions: []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue), cond(batchv1.JobComplete, corev1.ConditionTrue)}}},
			"Complete", "1/1", "2m"},
		{"work queue with parallelism", batchv1.Job{Spec: batchv1.JobSpec{Parallelism: ptr(int32(3))}, Status: batchv1.JobStatus{Succeeded: 1}},
			"Running", "1/1 of 3", ""},
		{"work queue without parallelism", batchv1.Job{Status: batchv1.JobStatus{Succeeded: 0}},
			"Running", "0/1", ""},
		{"failed", batchv1.Job{Spec: batchv1.JobSpec{Completions: ptr(int32(1))}, Status: batchv1.JobStatus{
			Conditions: []batchv1.JobCondition{cond(batchv1.JobFailureTarget, corev1.ConditionTrue), cond(batchv1.JobFailed, corev1.ConditionTrue)}}},
			"Failed", "0/1", ""},
		{"failure target", batchv1.Job{Spec: batchv1.JobSpec{Completions: ptr(int32(1))}, Status: batchv1.JobStatus{
			Conditions: []batchv1.JobCondition{cond(batchv1.JobFailureTarget, corev1.ConditionTrue)}}},
			"FailureTarget", "0/1", ""},
		{"suspended", batchv1.Job{Spec: batchv1.JobSpec{Completions: ptr(int32(1))}, Status: batchv1.JobStatus{
			Conditions: []batchv1.JobCondition{cond(batchv1.JobSuspended, corev1.ConditionTrue)}}},
			"Suspended", "0/1", ""},
		{"resumed", batchv1.Job{Spec: batchv1.JobSpec{Completions: ptr(int32(1))}, Status: batchv1.JobStatus{
			Conditions: []batchv1.JobCondition{cond(batchv1.JobSuspended, corev1.ConditionFalse)}}},
			"Running", "0/1", ""},
		{"terminating", batchv1.Job{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: agoPtr(0)}, Spec: batchv1.JobSpec{Completions: ptr(int32(1))},
			Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{cond(batchv1.JobSuspended, corev1.ConditionTrue)}}},
			"Terminating", "0/1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.job.Name = "pi"
			tt.job.CreationTimestamp = ago(11 * time.Minute)
			tt.job.Spec.Template = template("pi")
			tt.job.Spec.Selector = selector("batch.kubernetes.io/controller-uid", "u")
			checkCells(t, &tt.job, []interface{}{"pi", tt.status, tt.completions, tt.duration, "11m", "pi", "pi:1", "batch.kubernetes.io/controller-uid=u"})
		})
	}
}

func TestCronJobCells(t *testing.T) {
	cj := &batchv1.CronJob{ObjectMeta: objMeta("hello", 5*24*time.Hour),
		Spec: batchv1.CronJobSpec{Schedule: "*/1 * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: template("hello")}}}}
	checkCells(t, cj, []interface{}{"hello", "*/1 * * * *", "<none>", "<unset>", int64(0), "<none>", "5d", "hello", "hello:1", "<none>"})

	cj.Spec.TimeZone = ptr("Etc/UTC")
	cj.Spec.Suspend = ptr(false)
	cj.Status.Active = []corev1.ObjectReference{{Name: "a"}, {Name: "b"}}
	cj.Status.LastScheduleTime = agoPtr(40 * time.Second)
	checkCells(t, cj, []interface{}{"hello", "*/1 * * * *", "Etc/UTC", "False", int64(2), "40s", "5d", "hello", "hello:1", "<none>"})

	cj.Spec.Suspend = ptr(true)
	if got := rowOf(t, cj).Cells[3]; got != "True" {
		t.Errorf("suspend cell %v, want True", got)
	}
}

func TestClusterScopedCells(t *testing.T) {
	never := corev1.PreemptNever
	retain := corev1.PersistentVolumeReclaimRetain
	wait := storagev1.VolumeBindingWaitForFirstConsumer
	tests := []struct {
		name string
		obj  runtime.Object
		want []interface{}
	}{
		{"priority class", &schedulingv1.PriorityClass{ObjectMeta: objMeta("high", time.Hour), Value: 1000000, GlobalDefault: true, PreemptionPolicy: &never},
			[]interface{}{"high", int64(1000000), true, "60m", "Never"}},
		{"priority class without policy", &schedulingv1.PriorityClass{ObjectMeta: objMeta("low", time.Hour), Value: -5},
			[]interface{}{"low", int64(-5), false, "60m", ""}},
		{"storage class defaults", &storagev1.StorageClass{ObjectMeta: objMeta("standard", time.Hour), Provisioner: "rancher.io/local-path"},
			[]interface{}{"standard", "rancher.io/local-path", "Delete", "Immediate", false, "60m"}},
		// A StorageClass alone (a GET, a watch event) is never marked " (default)" upstream;
		// only a list marks its effective default (TestTableCellsAsUpstream in internal/registry).
		{"default storage class alone", &storagev1.StorageClass{
			ObjectMeta:  metav1.ObjectMeta{Name: "fast", CreationTimestamp: ago(time.Hour), Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
			Provisioner: "csi.example.com", ReclaimPolicy: &retain, VolumeBindingMode: &wait, AllowVolumeExpansion: ptr(true)},
			[]interface{}{"fast", "csi.example.com", "Retain", "WaitForFirstConsumer", true, "60m"}},
		{"beta default storage class alone", &storagev1.StorageClass{
			ObjectMeta: metav1.ObjectMeta{Name: "old", CreationTimestamp: ago(time.Hour), Annotations: map[string]string{"storageclass.beta.kubernetes.io/is-default-class": "true"}}},
			[]interface{}{"old", "", "Delete", "Immediate", false, "60m"}},
		{"not default when false", &storagev1.StorageClass{
			ObjectMeta: metav1.ObjectMeta{Name: "no", CreationTimestamp: ago(time.Hour), Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "True"}}},
			[]interface{}{"no", "", "Delete", "Immediate", false, "60m"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkCells(t, tt.obj, tt.want) })
	}
}
