package defaults

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func ptr[T any](v T) *T { return &v }

func q(s string) resource.Quantity { return resource.MustParse(s) }

// defaultedPodSpec is what upstream makes of a one-container pod template
// spec whose container sets only name and image.
func defaultedPodSpec(image string, policy corev1.PullPolicy) corev1.PodSpec {
	return corev1.PodSpec{
		Containers: []corev1.Container{{
			Name:                     "app",
			Image:                    image,
			ImagePullPolicy:          policy,
			TerminationMessagePath:   "/dev/termination-log",
			TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		}},
		RestartPolicy:                 corev1.RestartPolicyAlways,
		DNSPolicy:                     corev1.DNSClusterFirst,
		SecurityContext:               &corev1.PodSecurityContext{},
		TerminationGracePeriodSeconds: ptr(int64(30)),
		SchedulerName:                 "default-scheduler",
	}
}

func minimalSpec(image string) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}
}

func TestPodFullObject(t *testing.T) {
	in := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{
				Name: "init", Image: "busybox:1.36",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": q("100m")}},
			}},
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "nginx",
				Ports: []corev1.ContainerPort{{ContainerPort: 80}},
				Env: []corev1.EnvVar{{Name: "NODE", ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
				Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{"cpu": q("500m"), "memory": q("128Mi")},
					Requests: corev1.ResourceList{"cpu": q("250m")},
				},
				LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}},
			}},
			Volumes: []corev1.Volume{
				{Name: "scratch"},
				{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}}},
			},
		},
	}
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{
				Name: "init", Image: "busybox:1.36",
				Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{"cpu": q("100m")},
					Requests: corev1.ResourceList{"cpu": q("100m")},
				},
				ImagePullPolicy:          corev1.PullIfNotPresent,
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			}},
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "nginx",
				Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
				Env: []corev1.EnvVar{{Name: "NODE", ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "spec.nodeName"}}}},
				Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{"cpu": q("500m"), "memory": q("128Mi")},
					Requests: corev1.ResourceList{"cpu": q("250m"), "memory": q("128Mi")},
				},
				LivenessProbe: &corev1.Probe{
					ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80), Scheme: corev1.URISchemeHTTP}},
					TimeoutSeconds:   1,
					PeriodSeconds:    10,
					SuccessThreshold: 1,
					FailureThreshold: 3,
				},
				ImagePullPolicy:          corev1.PullAlways,
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			}},
			Volumes: []corev1.Volume{
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, DefaultMode: ptr(int32(0644))}}},
			},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			DNSPolicy:                     corev1.DNSClusterFirst,
			SecurityContext:               &corev1.PodSecurityContext{},
			TerminationGracePeriodSeconds: ptr(int64(30)),
			SchedulerName:                 "default-scheduler",
			EnableServiceLinks:            ptr(true),
		},
	}
	Apply(in)
	if !equality.Semantic.DeepEqual(in, want) {
		t.Fatalf("defaulted pod differs (-want +got):\n%s", cmp.Diff(want, in))
	}
}

// TestPodLevelResources: 1.37's pod-level defaulting (PodLevelResourcesFixDefaulting),
// run at create, not by Pod's defaults.
func TestPodLevelResources(t *testing.T) {
	ctr := func(name string, req, lim corev1.ResourceList) corev1.Container {
		return corev1.Container{Name: name, Image: "x:1", Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}
	}
	rl := func(kv ...string) corev1.ResourceList {
		out := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			out[corev1.ResourceName(kv[i])] = q(kv[i+1])
		}
		return out
	}
	tests := []struct {
		name               string
		pod                *corev1.ResourceRequirements
		containers         []corev1.Container
		wantReqs, wantLims corev1.ResourceList
	}{
		{name: "requests from the containers and the pod-level limits",
			pod:        &corev1.ResourceRequirements{Limits: rl("cpu", "2", "memory", "1Gi")},
			containers: []corev1.Container{ctr("a", rl("cpu", "300m"), nil), ctr("b", rl("cpu", "200m"), nil)},
			wantReqs:   rl("cpu", "500m", "memory", "1Gi"), wantLims: rl("cpu", "2", "memory", "1Gi")},
		{name: "limits from the containers' when every container has one",
			pod:        &corev1.ResourceRequirements{Requests: rl("cpu", "1")},
			containers: []corev1.Container{ctr("a", rl("cpu", "300m"), rl("cpu", "1")), ctr("b", rl("cpu", "200m"), rl("cpu", "500m"))},
			wantReqs:   rl("cpu", "1"), wantLims: rl("cpu", "1500m")},
		{name: "the limit at least the pod-level request",
			pod:        &corev1.ResourceRequirements{Requests: rl("cpu", "4")},
			containers: []corev1.Container{ctr("a", rl("cpu", "1"), rl("cpu", "2"))},
			wantReqs:   rl("cpu", "4"), wantLims: rl("cpu", "4")},
		{name: "no limit when a container has none",
			pod:        &corev1.ResourceRequirements{Requests: rl("memory", "1Gi")},
			containers: []corev1.Container{ctr("a", rl("memory", "100Mi"), rl("memory", "200Mi")), ctr("b", rl("memory", "100Mi"), nil)},
			wantReqs:   rl("memory", "1Gi")},
		{name: "ephemeral-storage and extended resources stay the containers'",
			pod:        &corev1.ResourceRequirements{Requests: rl("cpu", "1")},
			containers: []corev1.Container{ctr("a", rl("cpu", "500m", "ephemeral-storage", "1Gi", "example.com/gpu", "1"), rl("example.com/gpu", "1"))},
			wantReqs:   rl("cpu", "1")},
		{name: "hugepages limits from the containers'",
			pod:        &corev1.ResourceRequirements{Limits: rl("memory", "1Gi")},
			containers: []corev1.Container{ctr("a", rl("hugepages-2Mi", "4Mi"), rl("hugepages-2Mi", "4Mi"))},
			wantReqs:   rl("memory", "1Gi", "hugepages-2Mi", "4Mi"), wantLims: rl("memory", "1Gi", "hugepages-2Mi", "4Mi")},
		{name: "nothing without pod-level resources",
			containers: []corev1.Container{ctr("a", rl("cpu", "1"), rl("cpu", "1"))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &corev1.Pod{Spec: corev1.PodSpec{Resources: tc.pod.DeepCopy(), Containers: tc.containers}}
			Pod(p)
			if !equality.Semantic.DeepEqual(p.Spec.Resources, tc.pod) {
				t.Fatalf("Pod's defaults changed pod-level resources: %v", p.Spec.Resources)
			}
			PodLevelResources(p)
			if tc.pod == nil {
				if p.Spec.Resources != nil {
					t.Fatalf("pod-level resources %v set", p.Spec.Resources)
				}
				return
			}
			if !equality.Semantic.DeepEqual(p.Spec.Resources.Requests, tc.wantReqs) && !(len(tc.wantReqs) == 0 && len(p.Spec.Resources.Requests) == 0) {
				t.Errorf("requests = %v, want %v", p.Spec.Resources.Requests, tc.wantReqs)
			}
			if !equality.Semantic.DeepEqual(p.Spec.Resources.Limits, tc.wantLims) && !(len(tc.wantLims) == 0 && len(p.Spec.Resources.Limits) == 0) {
				t.Errorf("limits = %v, want %v", p.Spec.Resources.Limits, tc.wantLims)
			}
		})
	}
}

func TestRequestsFromLimitsNotInTemplates(t *testing.T) {
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "a", Image: "x:1", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": q("1")}}}},
	}}}}
	Apply(d)
	if r := d.Spec.Template.Spec.Containers[0].Resources.Requests; r != nil {
		t.Fatalf("template requests = %v, want none (upstream defaults requests only on Pods)", r)
	}
	if d.Spec.Template.Spec.EnableServiceLinks != nil {
		t.Fatalf("template enableServiceLinks defaulted; upstream does it on Pods only")
	}
}

func TestServiceFullObject(t *testing.T) {
	in := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "named", Port: 443, TargetPort: intstr.FromString("https")}},
		},
	}
	want := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{
				{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)},
				{Name: "named", Port: 443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("https")},
			},
			Type:                  corev1.ServiceTypeClusterIP,
			SessionAffinity:       corev1.ServiceAffinityNone,
			InternalTrafficPolicy: ptr(corev1.ServiceInternalTrafficPolicyCluster),
			IPFamilyPolicy:        ptr(corev1.IPFamilyPolicySingleStack),
			IPFamilies:            []corev1.IPFamily{corev1.IPv4Protocol},
		},
	}
	Apply(in)
	if !equality.Semantic.DeepEqual(in, want) {
		t.Fatalf("defaulted service differs (-want +got):\n%s", cmp.Diff(want, in))
	}
}

func TestServiceVariants(t *testing.T) {
	tests := []struct {
		name  string
		in    corev1.ServiceSpec
		check func(t *testing.T, s corev1.ServiceSpec)
	}{
		{"load balancer", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}}, func(t *testing.T, s corev1.ServiceSpec) {
			if s.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster || s.AllocateLoadBalancerNodePorts == nil || !*s.AllocateLoadBalancerNodePorts {
				t.Errorf("got externalTrafficPolicy %q allocateLoadBalancerNodePorts %v", s.ExternalTrafficPolicy, s.AllocateLoadBalancerNodePorts)
			}
		}},
		{"external name", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}, func(t *testing.T, s corev1.ServiceSpec) {
			if s.IPFamilyPolicy != nil || s.IPFamilies != nil || s.InternalTrafficPolicy != nil {
				t.Errorf("external name got ip fields %v %v %v", s.IPFamilyPolicy, s.IPFamilies, s.InternalTrafficPolicy)
			}
		}},
		{"headless without selector", corev1.ServiceSpec{ClusterIP: "None"}, func(t *testing.T, s corev1.ServiceSpec) {
			if *s.IPFamilyPolicy != corev1.IPFamilyPolicyRequireDualStack {
				t.Errorf("ipFamilyPolicy = %v", *s.IPFamilyPolicy)
			}
		}},
		{"client ip affinity", corev1.ServiceSpec{SessionAffinity: corev1.ServiceAffinityClientIP}, func(t *testing.T, s corev1.ServiceSpec) {
			if *s.SessionAffinityConfig.ClientIP.TimeoutSeconds != 10800 {
				t.Errorf("timeout = %d", *s.SessionAffinityConfig.ClientIP.TimeoutSeconds)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &corev1.Service{Spec: tc.in}
			Service(s)
			tc.check(t, s.Spec)
		})
	}
}

func TestDeploymentFullObject(t *testing.T) {
	in := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: minimalSpec("nginx:1.25")},
		},
	}
	pct := intstr.FromString("25%")
	want := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: defaultedPodSpec("nginx:1.25", corev1.PullIfNotPresent)},
			Strategy: appsv1.DeploymentStrategy{
				Type:          appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &pct, MaxSurge: &pct},
			},
			RevisionHistoryLimit:    ptr(int32(10)),
			ProgressDeadlineSeconds: ptr(int32(600)),
		},
	}
	Apply(in)
	if !equality.Semantic.DeepEqual(in, want) {
		t.Fatalf("defaulted deployment differs (-want +got):\n%s", cmp.Diff(want, in))
	}
}

func TestJobFullObject(t *testing.T) {
	in := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "ns", UID: "uid-1"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: func() corev1.PodSpec {
			s := minimalSpec("perl:5.34.0")
			s.RestartPolicy = corev1.RestartPolicyNever
			return s
		}()}},
	}
	Apply(in)
	JobSelector(in)
	spec := defaultedPodSpec("perl:5.34.0", corev1.PullIfNotPresent)
	spec.RestartPolicy = corev1.RestartPolicyNever
	labels := map[string]string{
		"batch.kubernetes.io/controller-uid": "uid-1", "batch.kubernetes.io/job-name": "pi",
		"controller-uid": "uid-1", "job-name": "pi",
	}
	want := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "ns", UID: "uid-1", Labels: labels},
		Spec: batchv1.JobSpec{
			Parallelism:          ptr(int32(1)),
			Completions:          ptr(int32(1)),
			BackoffLimit:         ptr(int32(6)),
			CompletionMode:       ptr(batchv1.NonIndexedCompletion),
			Suspend:              ptr(false),
			PodReplacementPolicy: ptr(batchv1.TerminatingOrFailed),
			ManualSelector:       ptr(false),
			Selector:             &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": "uid-1"}},
			Template:             corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
	if !equality.Semantic.DeepEqual(in, want) {
		t.Fatalf("defaulted job differs (-want +got):\n%s", cmp.Diff(want, in))
	}
}

func TestSmallKinds(t *testing.T) {
	tests := []struct {
		name string
		in   runtime.Object
		want runtime.Object
	}{
		{"secret type", &corev1.Secret{}, &corev1.Secret{Type: corev1.SecretTypeOpaque}},
		{"pvc volume mode", &corev1.PersistentVolumeClaim{}, &corev1.PersistentVolumeClaim{
			Spec: corev1.PersistentVolumeClaimSpec{VolumeMode: ptr(corev1.PersistentVolumeFilesystem)}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}},
		{"namespace", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, &corev1.Namespace{
			ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"kubernetes.io/metadata.name": "team-a"}},
			Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}},
		{"role binding", &rbacv1.RoleBinding{RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "r"}, Subjects: []rbacv1.Subject{
			{Kind: "User", Name: "u"}, {Kind: "Group", Name: "g"}, {Kind: "ServiceAccount", Name: "sa"}, {Kind: "User", Name: "v", APIGroup: "x"}}},
			&rbacv1.RoleBinding{RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "r"}, Subjects: []rbacv1.Subject{
				{Kind: "User", Name: "u", APIGroup: rbacv1.GroupName}, {Kind: "Group", Name: "g", APIGroup: rbacv1.GroupName},
				{Kind: "ServiceAccount", Name: "sa"}, {Kind: "User", Name: "v", APIGroup: "x"}}}},
		{"cluster role binding", &rbacv1.ClusterRoleBinding{Subjects: []rbacv1.Subject{{Kind: "Group", Name: "g"}}},
			&rbacv1.ClusterRoleBinding{RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName}, Subjects: []rbacv1.Subject{{Kind: "Group", Name: "g", APIGroup: rbacv1.GroupName}}}},
		{"priority class", &schedulingv1.PriorityClass{Value: 5}, &schedulingv1.PriorityClass{Value: 5, PreemptionPolicy: ptr(corev1.PreemptLowerPriority)}},
		{"storage class", &storagev1.StorageClass{Provisioner: "p"}, &storagev1.StorageClass{Provisioner: "p",
			ReclaimPolicy: ptr(corev1.PersistentVolumeReclaimDelete), VolumeBindingMode: ptr(storagev1.VolumeBindingImmediate)}},
		{"cronjob", &batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: "* * * * *"}}, &batchv1.CronJob{Spec: batchv1.CronJobSpec{
			Schedule: "* * * * *", ConcurrencyPolicy: batchv1.AllowConcurrent, Suspend: ptr(false),
			SuccessfulJobsHistoryLimit: ptr(int32(3)), FailedJobsHistoryLimit: ptr(int32(1)),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst, SecurityContext: &corev1.PodSecurityContext{},
				TerminationGracePeriodSeconds: ptr(int64(30)), SchedulerName: "default-scheduler"}}}}}}},
		{"replication controller", &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}}, Spec: minimalSpec("x@sha256:" + sha)}}},
			&corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}}, Spec: corev1.ReplicationControllerSpec{
				Replicas: ptr(int32(1)), Selector: map[string]string{"a": "b"},
				Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}}, Spec: defaultedPodSpec("x@sha256:"+sha, corev1.PullIfNotPresent)}}}},
		{"limit range", &corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{"cpu": q("2")}, Min: corev1.ResourceList{"memory": q("1Mi")}}}}},
			&corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
				Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{"cpu": q("2")}, Min: corev1.ResourceList{"memory": q("1Mi")},
				Default:        corev1.ResourceList{"cpu": q("2")},
				DefaultRequest: corev1.ResourceList{"cpu": q("2"), "memory": q("1Mi")}}}}}},
		{"statefulset", &appsv1.StatefulSet{}, &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{
			Replicas: ptr(int32(1)), RevisionHistoryLimit: ptr(int32(10)), PodManagementPolicy: appsv1.OrderedReadyPodManagement,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr(int32(0))}},
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst, SecurityContext: &corev1.PodSecurityContext{},
				TerminationGracePeriodSeconds: ptr(int64(30)), SchedulerName: "default-scheduler"}}}}},
		{"quantities round up to milli", &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"cpu": q("1.0001")}}},
			&corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"cpu": q("1.001")}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			Apply(tc.in)
			if !equality.Semantic.DeepEqual(tc.in, tc.want) {
				t.Fatalf("(-want +got):\n%s", cmp.Diff(tc.want, tc.in))
			}
		})
	}
}

const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestImagePullPolicy(t *testing.T) {
	tests := []struct {
		image string
		want  corev1.PullPolicy
	}{
		{"nginx", corev1.PullAlways},
		{"nginx:latest", corev1.PullAlways},
		{"nginx:1.25", corev1.PullIfNotPresent},
		{"registry.example.com:5000/team/app", corev1.PullAlways},
		{"registry.example.com:5000/team/app:v1", corev1.PullIfNotPresent},
		{"localhost/app:latest", corev1.PullAlways},
		{"app@sha256:" + sha, corev1.PullIfNotPresent},
		{"app:latest@sha256:" + sha, corev1.PullAlways},
		{"app@sha256:abc", corev1.PullIfNotPresent},
		{"Nginx", corev1.PullIfNotPresent},
		{"", corev1.PullIfNotPresent},
		{sha, corev1.PullIfNotPresent},
		{"Registry.Example.com/team/app:latest", corev1.PullAlways},
		{"team/App:latest", corev1.PullIfNotPresent},
		{"team//app:latest", corev1.PullIfNotPresent},
		{"localhost:5000/app", corev1.PullAlways},
	}
	for _, tc := range tests {
		if got := pullPolicyFor(tc.image); got != tc.want {
			t.Errorf("pullPolicyFor(%q) = %s, want %s", tc.image, got, tc.want)
		}
	}
}

func TestIdempotent(t *testing.T) {
	objs := []runtime.Object{
		&corev1.Pod{Spec: minimalSpec("a")},
		&corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 1}}}},
		&appsv1.DaemonSet{}, &appsv1.ReplicaSet{}, &batchv1.Job{}, &corev1.Node{Status: corev1.NodeStatus{Capacity: corev1.ResourceList{"cpu": q("4")}}},
	}
	for _, o := range objs {
		Apply(o)
		once := o.DeepCopyObject()
		Apply(o)
		if !equality.Semantic.DeepEqual(once, o) {
			t.Errorf("%T: second Apply changed the object:\n%s", o, cmp.Diff(once, o))
		}
	}
}

func TestPrepareNamespaceForCreate(t *testing.T) {
	ns := &corev1.Namespace{Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"example.com/x"}}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	PrepareNamespaceForCreate(ns)
	if ns.Status.Phase != corev1.NamespaceActive || len(ns.Spec.Finalizers) != 2 || ns.Spec.Finalizers[1] != corev1.FinalizerKubernetes {
		t.Fatalf("got %+v", ns)
	}
}

func TestNormalizeServiceClusterIPs(t *testing.T) {
	s := &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "None"}}
	NormalizeServiceClusterIPs(s, nil)
	if len(s.Spec.ClusterIPs) != 1 || s.Spec.ClusterIPs[0] != "None" {
		t.Fatalf("create: clusterIPs = %v", s.Spec.ClusterIPs)
	}
	old := &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1", ClusterIPs: []string{"10.0.0.1"}}}
	upd := &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1"}}
	NormalizeServiceClusterIPs(upd, old)
	if len(upd.Spec.ClusterIPs) != 1 || upd.Spec.ClusterIPs[0] != "10.0.0.1" {
		t.Fatalf("update: clusterIPs = %v", upd.Spec.ClusterIPs)
	}
}
