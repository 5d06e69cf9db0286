package main

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// ago is the fixed now less d.
func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

func agop(d time.Duration) *metav1.Time { t := ago(d); return &t }

func microAgo(d time.Duration) metav1.MicroTime { return metav1.NewMicroTime(now.Add(-d)) }

// om is the metadata of a namespaced object created age before now.
func om(name, ns string, age time.Duration) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: ns, UID: "00000000-0000-4000-8000-000000000000", CreationTimestamp: ago(age)}
}

func withLabels(m metav1.ObjectMeta, labels map[string]string) metav1.ObjectMeta {
	m.Labels = labels
	return m
}

func withAnnotations(m metav1.ObjectMeta, a map[string]string) metav1.ObjectMeta {
	m.Annotations = a
	return m
}

func deleting(m metav1.ObjectMeta, in time.Duration) metav1.ObjectMeta {
	t := metav1.NewTime(now.Add(in))
	m.DeletionTimestamp = &t
	m.DeletionGracePeriodSeconds = ptr.To[int64](30)
	return m
}

func q(s string) resource.Quantity { return resource.MustParse(s) }

func qp(s string) *resource.Quantity { v := resource.MustParse(s); return &v }

const (
	sec  = time.Second
	min  = time.Minute
	hour = time.Hour
	day  = 24 * time.Hour
)

func containers(names ...string) []corev1.Container {
	var out []corev1.Container
	for _, n := range names {
		out = append(out, corev1.Container{Name: n, Image: "registry.k8s.io/" + n + ":1.0"})
	}
	return out
}

func podTemplate(labels map[string]string, names ...string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: containers(names...)}}
}

func running(name string, ready bool, restarts int32, lastExit time.Duration) corev1.ContainerStatus {
	s := corev1.ContainerStatus{Name: name, Ready: ready, RestartCount: restarts, Started: ptr.To(true),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ago(lastExit)}}}
	if restarts > 0 {
		s.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", FinishedAt: ago(lastExit)}
	}
	return s
}

func waiting(name, reason string, restarts int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, RestartCount: restarts, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}
}

func terminated(name, reason string, code, signal int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: code, Signal: signal, FinishedAt: ago(time.Minute)}}}
}

func cond(t corev1.PodConditionType, s corev1.ConditionStatus, reason string) corev1.PodCondition {
	return corev1.PodCondition{Type: t, Status: s, Reason: reason}
}

// kinds are the sample objects of every kind quotad serves (its own kinds and the
// aggregated servers' aside), each set taking its printer's branches.
func kinds() [][]Sample {
	return [][]Sample{
		pods(), services(), nodes(), events(), jobs(), cronJobs(), hpas(),
		persistentVolumeClaims(), persistentVolumes(), endpoints(), endpointSlices(),
		{
			{"healthy", &corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: "etcd-0"}, Conditions: []corev1.ComponentCondition{{Type: corev1.ComponentHealthy, Status: corev1.ConditionTrue, Message: "ok"}}}},
			{"unhealthy", &corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: "scheduler"}, Conditions: []corev1.ComponentCondition{{Type: corev1.ComponentHealthy, Status: corev1.ConditionFalse, Error: "Get \"https://127.0.0.1:10259/healthz\": dial tcp 127.0.0.1:10259: connect: connection refused"}}}},
			{"unknown", &corev1.ComponentStatus{ObjectMeta: metav1.ObjectMeta{Name: "controller-manager"}}},
		},
		{
			{"data and binaryData", &corev1.ConfigMap{ObjectMeta: om("settings", "team-a", 90*sec), Data: map[string]string{"a": "1", "b": "2"}, BinaryData: map[string][]byte{"c": {0}}}},
			{"empty", &corev1.ConfigMap{ObjectMeta: om("kube-root-ca.crt", "team-a", 400*day)}},
		},
		{
			{"limits", &corev1.LimitRange{ObjectMeta: om("cpu-defaults", "team-a", 3*hour), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Default: corev1.ResourceList{"cpu": q("500m")}}}}}},
			{"empty", &corev1.LimitRange{ObjectMeta: om("none", "team-a", 10*sec)}},
		},
		{
			{"active", &corev1.Namespace{ObjectMeta: om("team-a", "", 2*day), Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}},
			{"terminating", &corev1.Namespace{ObjectMeta: deleting(om("old", "", 5*min), 0), Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}},
		},
		{
			{"containers and labels", &corev1.PodTemplate{ObjectMeta: om("web", "team-a", 11*min), Template: podTemplate(map[string]string{"app": "web", "tier": "front"}, "nginx", "sidecar")}},
			{"bare", &corev1.PodTemplate{ObjectMeta: om("bare", "team-a", 3*sec), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: containers("app")}}}},
		},
		{
			{"with template", &corev1.ReplicationController{ObjectMeta: om("web", "team-a", 4*hour+30*min),
				Spec:   corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](3), Selector: map[string]string{"app": "web"}, Template: ptr.To(podTemplate(map[string]string{"app": "web"}, "nginx", "log"))},
				Status: corev1.ReplicationControllerStatus{Replicas: 3, ReadyReplicas: 2}}},
			{"scaled to zero", &corev1.ReplicationController{ObjectMeta: om("idle", "team-a", 20*day),
				Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](0), Selector: map[string]string{"app": "idle"}, Template: ptr.To(podTemplate(map[string]string{"app": "idle"}, "app"))}}},
		},
		{
			{"requests and limits", &corev1.ResourceQuota{ObjectMeta: om("compute", "team-a", 64*sec),
				Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"requests.cpu": q("1"), "limits.cpu": q("2"), "requests.memory": q("1Gi"), "limits.memory": q("2Gi"), "pods": q("10"), "count/deployments.apps": q("5"), "requests.nvidia.com/gpu": q("4"), "cpu": q("3")}},
				Status: corev1.ResourceQuotaStatus{
					Hard: corev1.ResourceList{"requests.cpu": q("1"), "limits.cpu": q("2"), "requests.memory": q("1Gi"), "limits.memory": q("2Gi"), "pods": q("10"), "count/deployments.apps": q("5"), "requests.nvidia.com/gpu": q("4"), "cpu": q("3")},
					Used: corev1.ResourceList{"requests.cpu": q("500m"), "limits.cpu": q("1"), "requests.memory": q("512Mi"), "pods": q("3"), "cpu": q("0")}}}},
			{"no status", &corev1.ResourceQuota{ObjectMeta: om("fresh", "team-a", 0), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"pods": q("1")}}}},
			{"limits only", &corev1.ResourceQuota{ObjectMeta: om("limits", "team-a", 9*day),
				Status: corev1.ResourceQuotaStatus{Hard: corev1.ResourceList{"limits.memory": q("1Gi"), "limits.ephemeral-storage": q("10Gi")}, Used: corev1.ResourceList{"limits.memory": q("100Mi")}}}},
		},
		{
			{"opaque", &corev1.Secret{ObjectMeta: om("db", "team-a", 5*min), Data: map[string][]byte{"user": []byte("u"), "password": []byte("p")}}},
			{"token", &corev1.Secret{ObjectMeta: withAnnotations(om("deployer-token", "team-a", 3*day), map[string]string{"kubernetes.io/service-account.name": "deployer"}), Type: corev1.SecretTypeServiceAccountToken}},
			{"tls", &corev1.Secret{ObjectMeta: om("cert", "team-a", 7*hour+5*min), Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": nil, "tls.key": nil}}},
		},
		{
			{"with secrets", &corev1.ServiceAccount{ObjectMeta: om("deployer", "team-a", 3*day), Secrets: []corev1.ObjectReference{{Name: "deployer-token"}}, ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}}}},
			{"default", &corev1.ServiceAccount{ObjectMeta: om("default", "team-a", 2*365*day)}},
		},
		controllerRevisions(), daemonSets(), deployments(), replicaSets(), statefulSets(),
		csrs(),
		podCertificateRequests(),
		{
			{"held", &coordinationv1.Lease{ObjectMeta: om("kube-controller-manager", "kube-system", 50*hour), Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("node-1_0a1b"), LeaseDurationSeconds: ptr.To[int32](15)}}},
			{"free", &coordinationv1.Lease{ObjectMeta: om("free", "kube-system", 30*sec)}},
		},
		flowSchemas(), priorityLevels(),
		ingressClasses(), ingresses(),
		{
			{"service", &networkingv1.IPAddress{ObjectMeta: om("10.96.0.10", "", 5*day), Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "kube-system", Name: "kube-dns"}}}},
			{"cluster-scoped parent", &networkingv1.IPAddress{ObjectMeta: om("2001:db8::1", "", 2*min), Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Group: "gateway.networking.k8s.io", Resource: "gateways", Name: "gw"}}}},
		},
		{
			{"all pods", &networkingv1.NetworkPolicy{ObjectMeta: om("deny-all", "team-a", 6*min)}},
			{"selector", &networkingv1.NetworkPolicy{ObjectMeta: om("web", "team-a", 3*hour), Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"},
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"front", "back"}}}}}}},
		},
		{
			{"dual stack", &networkingv1.ServiceCIDR{ObjectMeta: om("kubernetes", "", 10*day), Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/16", "fd00:10:96::/108"}}}},
			{"single", &networkingv1.ServiceCIDR{ObjectMeta: om("extra", "", 12*sec), Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.100.0.0/24"}}}},
		},
		{
			{"runc", &nodev1.RuntimeClass{ObjectMeta: om("runc", "", 8*day), Handler: "runc"}},
			{"gvisor", &nodev1.RuntimeClass{ObjectMeta: om("gvisor", "", 100*sec), Handler: "runsc", Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{"memory": q("32Mi")}}}},
		},
		{
			{"min available", &policyv1.PodDisruptionBudget{ObjectMeta: om("web", "team-a", 2*hour), Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(2))}, Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1}}},
			{"max unavailable percent", &policyv1.PodDisruptionBudget{ObjectMeta: om("db", "team-a", 70*sec), Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromString("25%"))}}},
		},
		{
			{"subjects", &rbacv1.ClusterRoleBinding{ObjectMeta: om("admins", "", 400*day), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
				Subjects: []rbacv1.Subject{{Kind: "Group", APIGroup: rbacv1.GroupName, Name: "system:masters"}, {Kind: "User", APIGroup: rbacv1.GroupName, Name: "alice"}, {Kind: "ServiceAccount", Namespace: "kube-system", Name: "admin"}}}},
			{"no subjects", &rbacv1.ClusterRoleBinding{ObjectMeta: om("empty", "", 4*min), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}}},
		},
		{
			{"subjects", &rbacv1.RoleBinding{ObjectMeta: om("alice-admin", "team-a", 2*hour), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
				Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "alice"}, {Kind: "User", APIGroup: rbacv1.GroupName, Name: "bob"}, {Kind: "Group", APIGroup: rbacv1.GroupName, Name: "team-a"},
					{Kind: "ServiceAccount", Namespace: "team-a", Name: "deployer"}, {Kind: "ServiceAccount", Name: "ci"}}}},
			{"role", &rbacv1.RoleBinding{ObjectMeta: om("readers", "team-a", 90*sec), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-reader"}}},
		},
		{
			{"view", &rbacv1.ClusterRole{ObjectMeta: om("view", "", 3*hour), Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}}},
			{"aggregated", &rbacv1.ClusterRole{ObjectMeta: om("edit", "", 49*hour), AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"a": "b"}}}}}},
		},
		{
			{"reader", &rbacv1.Role{ObjectMeta: om("pod-reader", "team-a", 5*min)}},
			{"old", &rbacv1.Role{ObjectMeta: om("quota-reader", "team-a", 49*hour)}},
		},
		{
			{"gpu", &resourcev1.DeviceClass{ObjectMeta: om("gpu.example.com", "", 7*min), Spec: resourcev1.DeviceClassSpec{ExtendedResourceName: ptr.To("example.com/gpu")}}},
			{"plain", &resourcev1.DeviceClass{ObjectMeta: om("nic", "", 30*day)}},
		},
		{
			{"time added", &resourcev1.DeviceTaintRule{ObjectMeta: om("maintenance", "", 2*hour), Spec: resourcev1.DeviceTaintRuleSpec{DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: ptr.To("gpu.example.com")},
				Taint: resourcev1.DeviceTaint{Key: "example.com/maintenance", Value: "planned", Effect: resourcev1.DeviceTaintEffectNoExecute, TimeAdded: agop(90 * min)}}}},
			{"no value", &resourcev1.DeviceTaintRule{ObjectMeta: om("unhealthy", "", 20*sec), Spec: resourcev1.DeviceTaintRuleSpec{Taint: resourcev1.DeviceTaint{Key: "example.com/unhealthy", Effect: resourcev1.DeviceTaintEffectNoSchedule,
				TimeAdded: agop(15 * sec)}}}}, // defaulting would set it to the wall clock

		},
		resourceClaims(),
		{
			{"template", &resourcev1.ResourceClaimTemplate{ObjectMeta: om("gpu-template", "team-a", 8*min)}},
		},
		{
			{"node local", &resourcev1.ResourceSlice{ObjectMeta: om("node-1-gpu.example.com-x7k2p", "", 6*hour), Spec: resourcev1.ResourceSliceSpec{Driver: "gpu.example.com", NodeName: ptr.To("node-1"),
				Pool: resourcev1.ResourcePool{Name: "node-1", Generation: 1, ResourceSliceCount: 1}}}},
			{"all nodes", &resourcev1.ResourceSlice{ObjectMeta: om("network-pool-abcde", "", 45*sec), Spec: resourcev1.ResourceSliceSpec{Driver: "nic.example.com", AllNodes: ptr.To(true),
				Pool: resourcev1.ResourcePool{Name: "fabric", Generation: 3, ResourceSliceCount: 2}}}},
		},
		{
			{"preempting", &schedulingv1.PriorityClass{ObjectMeta: om("high", "", 15*day), Value: 1000000, Description: "high"}},
			{"global default, never", &schedulingv1.PriorityClass{ObjectMeta: om("batch", "", 10*min), Value: -10, GlobalDefault: true, PreemptionPolicy: ptr.To(corev1.PreemptNever)}},
			{"system", &schedulingv1.PriorityClass{ObjectMeta: om("system-node-critical", "", 2*day), Value: 2000001000}},
		},
		csiDrivers(),
		{
			{"drivers", &storagev1.CSINode{ObjectMeta: om("node-1", "", 3*day), Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "ebs.csi.aws.com", NodeID: "i-1"}, {Name: "efs.csi.aws.com", NodeID: "i-1"}}}}},
			{"none", &storagev1.CSINode{ObjectMeta: om("node-2", "", 5*sec)}},
		},
		{
			{"capacity", &storagev1.CSIStorageCapacity{ObjectMeta: om("csisc-abcde", "kube-system", 5*min), StorageClassName: "fast", Capacity: qp("100Gi")}},
			{"unset", &storagev1.CSIStorageCapacity{ObjectMeta: om("csisc-fghij", "kube-system", 6*day), StorageClassName: "slow"}},
		},
		storageClasses(),
		{
			{"attached", &storagev1.VolumeAttachment{ObjectMeta: om("csi-0123abcd", "", 20*min), Spec: storagev1.VolumeAttachmentSpec{Attacher: "ebs.csi.aws.com", NodeName: "node-1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv-1")}},
				Status: storagev1.VolumeAttachmentStatus{Attached: true}}},
			{"inline", &storagev1.VolumeAttachment{ObjectMeta: om("csi-4567efab", "", 50*sec), Spec: storagev1.VolumeAttachmentSpec{Attacher: "ebs.csi.aws.com", NodeName: "node-2",
				Source: storagev1.VolumeAttachmentSource{InlineVolumeSpec: &corev1.PersistentVolumeSpec{}}}}},
		},
		{
			{"gold", &storagev1.VolumeAttributesClass{ObjectMeta: om("gold", "", 4*day), DriverName: "ebs.csi.aws.com", Parameters: map[string]string{"iops": "3000"}}},
		},
		{
			{"running", &storagemigrationv1.StorageVersionMigration{ObjectMeta: om("secrets", "", 10*min), Spec: storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Resource: "secrets"}},
				Status: storagemigrationv1.StorageVersionMigrationStatus{Conditions: []metav1.Condition{{Type: "Running", Status: metav1.ConditionTrue}}}}},
			{"succeeded", &storagemigrationv1.StorageVersionMigration{ObjectMeta: om("deployments", "", 2*day), Spec: storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: "apps", Resource: "deployments"}},
				Status: storagemigrationv1.StorageVersionMigrationStatus{Conditions: []metav1.Condition{{Type: "Running", Status: metav1.ConditionFalse}, {Type: "Succeeded", Status: metav1.ConditionTrue}}}}},
			{"no status", &storagemigrationv1.StorageVersionMigration{ObjectMeta: om("new", "", sec), Spec: storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: "example.com", Resource: "widgets"}}}},
		},
		admission()[0], admission()[1], admission()[2], admission()[3], admission()[4], admission()[5],
	}
}

func pods() []Sample {
	pod := func(name string, age time.Duration, spec corev1.PodSpec, status corev1.PodStatus) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: om(name, "team-a", age), Spec: spec, Status: status}
	}
	two := corev1.PodSpec{NodeName: "node-1", Containers: containers("app", "proxy")}
	gates := two
	gates.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/lb"}, {ConditionType: "example.com/dns"}}
	sidecar := corev1.PodSpec{NodeName: "node-2", InitContainers: []corev1.Container{
		{Name: "init", Image: "busybox"}, {Name: "log", Image: "fluent", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}}, Containers: containers("app")}
	initTwo := corev1.PodSpec{NodeName: "node-1", InitContainers: []corev1.Container{{Name: "migrate", Image: "m"}, {Name: "seed", Image: "s"}}, Containers: containers("app")}
	ip := []corev1.PodIP{{IP: "10.244.1.7"}, {IP: "fd00::7"}}
	out := []Sample{
		{"running with restarts and readiness gates", pod("web-1", 3*hour, gates, corev1.PodStatus{Phase: corev1.PodRunning, PodIPs: ip, PodIP: "10.244.1.7",
			Conditions:        []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionTrue, ""), cond("example.com/lb", corev1.ConditionTrue, ""), cond("example.com/dns", corev1.ConditionFalse, "")},
			ContainerStatuses: []corev1.ContainerStatus{running("app", true, 3, 95*sec), running("proxy", true, 1, 20*min)}})},
		{"pending nominated", pod("big", 40*sec, corev1.PodSpec{Containers: containers("app")}, corev1.PodStatus{Phase: corev1.PodPending, NominatedNodeName: "node-3",
			Conditions: []corev1.PodCondition{cond(corev1.PodScheduled, corev1.ConditionFalse, "Unschedulable")}})},
		{"scheduling gated", pod("gated", 2*min, corev1.PodSpec{Containers: containers("app"), SchedulingGates: []corev1.PodSchedulingGate{{Name: "example.com/quota"}}},
			corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{cond(corev1.PodScheduled, corev1.ConditionFalse, "SchedulingGated")}})},
		{"succeeded", pod("job-abc", 2*day, corev1.PodSpec{NodeName: "node-1", Containers: containers("work"), RestartPolicy: corev1.RestartPolicyNever},
			corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{terminated("work", "Completed", 0, 0)}})},
		{"failed error", pod("job-def", 5*hour, corev1.PodSpec{NodeName: "node-1", Containers: containers("work"), RestartPolicy: corev1.RestartPolicyNever},
			corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{terminated("work", "Error", 2, 0)}})},
		{"failed signal", pod("killed", 5*min, corev1.PodSpec{NodeName: "node-1", Containers: containers("work")},
			corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{terminated("work", "", 137, 9)}})},
		{"failed exit code", pod("exited", 5*min, corev1.PodSpec{NodeName: "node-1", Containers: containers("work")},
			corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{terminated("work", "", 3, 0)}})},
		{"evicted", pod("evicted", 9*day, corev1.PodSpec{NodeName: "node-2", Containers: containers("app")},
			corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory."})},
		{"crash loop", pod("crashy", 30*min, two, corev1.PodStatus{Phase: corev1.PodRunning, PodIPs: []corev1.PodIP{{IP: "10.244.1.8"}},
			ContainerStatuses: []corev1.ContainerStatus{running("app", true, 0, 30*min), waiting("proxy", "CrashLoopBackOff", 12)}})},
		{"init waiting", pod("init-wait", 20*sec, initTwo, corev1.PodStatus{Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{terminated("migrate", "Completed", 0, 0), waiting("seed", "PodInitializing", 0)},
			ContainerStatuses:     []corev1.ContainerStatus{waiting("app", "PodInitializing", 0)}})},
		{"init crash loop", pod("init-crash", 20*min, initTwo, corev1.PodStatus{Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{waiting("migrate", "CrashLoopBackOff", 4)}})},
		{"init error", pod("init-err", 20*min, initTwo, corev1.PodStatus{Phase: corev1.PodFailed,
			InitContainerStatuses: []corev1.ContainerStatus{terminated("migrate", "Error", 1, 0)}})},
		{"init exit code", pod("init-code", 20*min, initTwo, corev1.PodStatus{Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{terminated("migrate", "", 4, 0)}})},
		{"init signal", pod("init-signal", 20*min, initTwo, corev1.PodStatus{Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{terminated("migrate", "", 143, 15)}})},
		{"sidecar running", pod("with-sidecar", 2*hour, sidecar, corev1.PodStatus{Phase: corev1.PodRunning, PodIPs: []corev1.PodIP{{IP: "10.244.2.3"}},
			Conditions:            []corev1.PodCondition{cond(corev1.PodInitialized, corev1.ConditionTrue, ""), cond(corev1.PodReady, corev1.ConditionTrue, "")},
			InitContainerStatuses: []corev1.ContainerStatus{terminated("init", "Completed", 0, 0), running("log", true, 2, 7*min)},
			ContainerStatuses:     []corev1.ContainerStatus{running("app", true, 1, 50*min)}})},
		{"sidecar starting", pod("sidecar-start", 10*sec, sidecar, corev1.PodStatus{Phase: corev1.PodPending,
			InitContainerStatuses: []corev1.ContainerStatus{terminated("init", "Completed", 0, 0), {Name: "log", Started: ptr.To(false), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}})},
		{"completed container, other running and ready", pod("partly-done", 1*hour, two, corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions:        []corev1.PodCondition{cond(corev1.PodReady, corev1.ConditionTrue, "")},
			ContainerStatuses: []corev1.ContainerStatus{running("app", true, 0, hour), terminated("proxy", "Completed", 0, 0)}})},
		{"completed container, other running not ready", pod("partly-done-2", 1*hour, two, corev1.PodStatus{Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{running("app", true, 0, hour), terminated("proxy", "Completed", 0, 0)}})},
		{"completed and failed container", pod("partly-failed", 1*hour, two, corev1.PodStatus{Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{terminated("app", "Error", 1, 0), terminated("proxy", "Completed", 0, 0)}})},
		{"terminating", pod("going", 6*day, two, corev1.PodStatus{Phase: corev1.PodRunning, PodIPs: []corev1.PodIP{{IP: "10.244.1.9"}},
			ContainerStatuses: []corev1.ContainerStatus{running("app", true, 0, hour), running("proxy", false, 0, hour)}})},
		{"node lost", pod("lost", 6*day, two, corev1.PodStatus{Phase: corev1.PodRunning, Reason: "NodeLost"})},
		{"terminating succeeded", pod("done-deleting", 6*day, two, corev1.PodStatus{Phase: corev1.PodSucceeded})},
		{"no status", pod("new", 0, corev1.PodSpec{Containers: containers("app")}, corev1.PodStatus{})},
	}
	for _, s := range out {
		switch p := s.Object.(*corev1.Pod); p.Name {
		case "going", "lost", "done-deleting":
			p.ObjectMeta = deleting(p.ObjectMeta, 20*sec)
		}
	}
	return out
}

func services() []Sample {
	svc := func(name string, age time.Duration, spec corev1.ServiceSpec, status corev1.ServiceStatus) Sample {
		return Sample{name, &corev1.Service{ObjectMeta: om(name, "team-a", age), Spec: spec, Status: status}}
	}
	tcp := func(port int32, nodePort int32) corev1.ServicePort {
		return corev1.ServicePort{Port: port, NodePort: nodePort, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(port)}
	}
	return []Sample{
		svc("web", 3*day, corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.12.4", ClusterIPs: []string{"10.96.12.4"}, Selector: map[string]string{"app": "web", "tier": "front"},
			Ports: []corev1.ServicePort{tcp(80, 0), {Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}}}, corev1.ServiceStatus{}),
		svc("dual", 2*min, corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.20", ClusterIPs: []string{"10.96.0.20", "fd00::20"}, ExternalIPs: []string{"192.0.2.1", "192.0.2.2"},
			Ports: []corev1.ServicePort{tcp(8080, 0)}}, corev1.ServiceStatus{}),
		svc("headless", 5*hour, corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "None", ClusterIPs: []string{"None"}}, corev1.ServiceStatus{}),
		svc("nodeport", 12*min, corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIP: "10.96.40.1", ClusterIPs: []string{"10.96.40.1"}, ExternalIPs: []string{"198.51.100.7"},
			Ports: []corev1.ServicePort{tcp(80, 30080), tcp(443, 30443)}}, corev1.ServiceStatus{}),
		svc("nodeport-plain", 12*min, corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIP: "10.96.40.2", ClusterIPs: []string{"10.96.40.2"},
			Ports: []corev1.ServicePort{tcp(80, 30081)}}, corev1.ServiceStatus{}),
		svc("lb-pending", 15*sec, corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.96.50.1", ClusterIPs: []string{"10.96.50.1"},
			Ports: []corev1.ServicePort{tcp(443, 31443)}}, corev1.ServiceStatus{}),
		svc("lb", 4*day, corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.96.50.2", ClusterIPs: []string{"10.96.50.2"},
			Ports: []corev1.ServicePort{tcp(80, 31080)}}, corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{
			{IP: "203.0.113.20"}, {Hostname: "a1b2c3d4e5f6-1234567890.eu-west-1.elb.amazonaws.com"}, {IP: "203.0.113.10"}}}}),
		svc("lb-external-ips", 4*day, corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.96.50.3", ClusterIPs: []string{"10.96.50.3"}, ExternalIPs: []string{"192.0.2.9"},
			Ports: []corev1.ServicePort{tcp(80, 31081)}}, corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "203.0.113.30"}}}}),
		svc("lb-external-ips-pending", 4*day, corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.96.50.4", ClusterIPs: []string{"10.96.50.4"}, ExternalIPs: []string{"192.0.2.10"},
			Ports: []corev1.ServicePort{tcp(80, 31082)}}, corev1.ServiceStatus{}),
		svc("external", 33*day, corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"}, corev1.ServiceStatus{}),
	}
}

func nodes() []Sample {
	ready := func(s corev1.ConditionStatus) []corev1.NodeCondition {
		return []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}, {Type: corev1.NodeReady, Status: s}}
	}
	info := corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", OSImage: "Debian GNU/Linux 13 (trixie)", KernelVersion: "6.12.0-1-amd64", ContainerRuntimeVersion: "containerd://2.1.0", Architecture: "amd64"}
	return []Sample{
		{"control plane", &corev1.Node{ObjectMeta: withLabels(om("cp-1", "", 40*day), map[string]string{"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/etcd": "", "kubernetes.io/role": "master"}),
			Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{Conditions: ready(corev1.ConditionTrue), NodeInfo: info,
				Addresses: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "cp-1"}, {Type: corev1.NodeInternalIP, Address: "172.18.0.2"}, {Type: corev1.NodeExternalIP, Address: "203.0.113.2"}}}}},
		{"worker not ready cordoned", &corev1.Node{ObjectMeta: withLabels(om("node-1", "", 3*hour+20*min), map[string]string{"node-role.kubernetes.io/": "", "kubernetes.io/role": ""}),
			Spec: corev1.NodeSpec{Unschedulable: true, Taints: []corev1.Taint{{Key: "node.kubernetes.io/unschedulable", Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{Conditions: ready(corev1.ConditionFalse), NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.36.0", KernelVersion: "6.1.0"},
				Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "172.18.0.3"}, {Type: corev1.NodeInternalIP, Address: "fd00::3"}}}}},
		{"unknown", &corev1.Node{ObjectMeta: om("node-2", "", 9*min), Status: corev1.NodeStatus{Conditions: ready(corev1.ConditionUnknown)}}},
		{"no conditions, cordoned", &corev1.Node{ObjectMeta: withLabels(om("node-3", "", 50*sec), map[string]string{"kubernetes.io/role": "worker"}), Spec: corev1.NodeSpec{Unschedulable: true}}},
	}
}

func events() []Sample {
	ev := func(name string, e corev1.Event) Sample {
		e.ObjectMeta = om(name, "team-a", 10*min)
		return Sample{name, &e}
	}
	return []Sample{
		ev("classic", corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "team-a", Name: "web-1", FieldPath: "spec.containers{app}"},
			Reason: "BackOff", Message: "Back-off restarting failed container app in pod web-1_team-a(1234)\n", Type: corev1.EventTypeWarning, Count: 12,
			FirstTimestamp: ago(10 * min), LastTimestamp: ago(35 * sec), Source: corev1.EventSource{Component: "kubelet", Host: "node-1"}}),
		ev("no last timestamp", corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: "ReplicaSet", Name: "web-5869d7778c"}, Reason: "SuccessfulCreate", Message: "Created pod: web-5869d7778c-b8zvr",
			Type: corev1.EventTypeNormal, FirstTimestamp: ago(3 * min), Source: corev1.EventSource{Component: "replicaset-controller"}}),
		ev("event time series", corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: "node-1"}, Reason: "NodeNotReady", Message: "  Node node-1 status is now: NodeNotReady  ",
			Type: corev1.EventTypeNormal, EventTime: microAgo(2 * hour), Series: &corev1.EventSeries{Count: 7, LastObservedTime: microAgo(4 * min)},
			ReportingController: "node-controller", ReportingInstance: "cp-1", Action: "Update"}),
		ev("event time singleton", corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: "Namespace"}, Reason: "Scheduled", Message: "Successfully assigned",
			Type: corev1.EventTypeNormal, EventTime: microAgo(65 * sec), ReportingController: "default-scheduler", Action: "Binding", Source: corev1.EventSource{Host: "sched-host"}}),
		ev("no times", corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: "Service", Name: "web"}, Reason: "Sync", Count: 2}),
	}
}

func jobs() []Sample {
	job := func(name string, age time.Duration, spec batchv1.JobSpec, status batchv1.JobStatus) Sample {
		spec.Template = podTemplate(map[string]string{"batch.kubernetes.io/job-name": name}, "work", "helper")
		spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
		spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": "00000000-0000-4000-8000-000000000000"}}
		return Sample{name, &batchv1.Job{ObjectMeta: om(name, "team-a", age), Spec: spec, Status: status}}
	}
	c := func(t batchv1.JobConditionType, s corev1.ConditionStatus) batchv1.JobCondition {
		return batchv1.JobCondition{Type: t, Status: s}
	}
	j := []Sample{
		job("complete", 2*hour, batchv1.JobSpec{Completions: ptr.To[int32](3), Parallelism: ptr.To[int32](2)},
			batchv1.JobStatus{Succeeded: 3, StartTime: agop(2 * hour), CompletionTime: agop(2*hour - 95*sec), Conditions: []batchv1.JobCondition{c(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue), c(batchv1.JobComplete, corev1.ConditionTrue)}}),
		job("failed", 3*day, batchv1.JobSpec{Completions: ptr.To[int32](1)},
			batchv1.JobStatus{Failed: 7, StartTime: agop(3 * day), Conditions: []batchv1.JobCondition{c(batchv1.JobFailureTarget, corev1.ConditionTrue), c(batchv1.JobFailed, corev1.ConditionTrue)}}),
		job("suspended", 40*min, batchv1.JobSpec{Suspend: ptr.To(true), Completions: ptr.To[int32](5)},
			batchv1.JobStatus{Conditions: []batchv1.JobCondition{c(batchv1.JobSuspended, corev1.ConditionTrue)}}),
		job("running", 7*min+5*sec, batchv1.JobSpec{Parallelism: ptr.To[int32](4), Completions: nil},
			batchv1.JobStatus{Active: 4, Succeeded: 0, StartTime: agop(7 * min)}),
		job("running-single", 90*sec, batchv1.JobSpec{Parallelism: ptr.To[int32](1)},
			batchv1.JobStatus{Active: 1, StartTime: agop(80 * sec), Conditions: []batchv1.JobCondition{c(batchv1.JobSuspended, corev1.ConditionFalse)}}),
		job("failure-target", 9*min, batchv1.JobSpec{},
			batchv1.JobStatus{StartTime: agop(9 * min), Conditions: []batchv1.JobCondition{c(batchv1.JobFailureTarget, corev1.ConditionTrue)}}),
		job("success-criteria-met", 9*min, batchv1.JobSpec{Completions: ptr.To[int32](2)},
			batchv1.JobStatus{Succeeded: 2, StartTime: agop(9 * min), Conditions: []batchv1.JobCondition{c(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue)}}),
		job("terminating", 9*min, batchv1.JobSpec{},
			batchv1.JobStatus{StartTime: agop(9 * min), Conditions: []batchv1.JobCondition{c(batchv1.JobSuspended, corev1.ConditionTrue)}}),
	}
	j[len(j)-1].Object.(*batchv1.Job).ObjectMeta = deleting(om("terminating", "team-a", 9*min), 30*sec)
	return j
}

func cronJobs() []Sample {
	cj := func(name string, age time.Duration, spec batchv1.CronJobSpec, status batchv1.CronJobStatus) Sample {
		spec.JobTemplate.Spec.Template = podTemplate(nil, "backup")
		spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		return Sample{name, &batchv1.CronJob{ObjectMeta: om(name, "team-a", age), Spec: spec, Status: status}}
	}
	return []Sample{
		cj("nightly", 20*day, batchv1.CronJobSpec{Schedule: "0 2 * * *", TimeZone: ptr.To("Europe/Paris")},
			batchv1.CronJobStatus{Active: []corev1.ObjectReference{{Name: "nightly-1"}, {Name: "nightly-2"}}, LastScheduleTime: agop(10 * hour)}),
		cj("suspended", 2*hour, batchv1.CronJobSpec{Schedule: "*/5 * * * *", Suspend: ptr.To(true),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}}}, batchv1.CronJobStatus{}),
		cj("hourly", 75*sec, batchv1.CronJobSpec{Schedule: "@hourly"}, batchv1.CronJobStatus{LastScheduleTime: agop(61 * sec)}),
	}
}

func hpas() []Sample {
	util := func(v int32) autoscalingv2.MetricTarget {
		return autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(v)}
	}
	avg := func(v string) autoscalingv2.MetricTarget {
		return autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: qp(v)}
	}
	val := func(v string) autoscalingv2.MetricTarget {
		return autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: qp(v)}
	}
	metric := autoscalingv2.MetricIdentifier{Name: "requests"}
	obj := autoscalingv2.CrossVersionObjectReference{Kind: "Ingress", Name: "main", APIVersion: "networking.k8s.io/v1"}
	hpa := func(name string, age time.Duration, min *int32, metrics []autoscalingv2.MetricSpec, current []autoscalingv2.MetricStatus) Sample {
		return Sample{name, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: om(name, "team-a", age),
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
				MinReplicas: min, MaxReplicas: 10, Metrics: metrics},
			Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 3, DesiredReplicas: 3, CurrentMetrics: current}}}
	}
	return []Sample{
		hpa("cpu", 5*hour, ptr.To[int32](2), []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: "cpu", Target: util(80)}}},
			[]autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: "cpu", Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](43), AverageValue: qp("215m")}}}}),
		hpa("cpu-unknown", 10*sec, nil, []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: "cpu", Target: util(50)}}}, nil),
		hpa("no-metrics", 3*day, ptr.To[int32](1), []autoscalingv2.MetricSpec{}, nil),
		hpa("many", 30*min, ptr.To[int32](3), []autoscalingv2.MetricSpec{
			{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: "memory", Target: avg("1Gi")}},
			{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Metric: metric, Target: avg("100")}},
			{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{DescribedObject: obj, Metric: metric, Target: val("2k")}},
			{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Metric: metric, Target: avg("30")}},
		}, []autoscalingv2.MetricStatus{
			{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: "memory", Current: autoscalingv2.MetricValueStatus{AverageValue: qp("700Mi")}}},
			{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricStatus{Metric: metric, Current: autoscalingv2.MetricValueStatus{AverageValue: qp("120")}}},
		}),
		hpa("object-and-external", 30*min, ptr.To[int32](1), []autoscalingv2.MetricSpec{
			{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{DescribedObject: obj, Metric: metric, Target: avg("500m")}},
			{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Metric: metric, Target: val("7")}},
		}, []autoscalingv2.MetricStatus{
			{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricStatus{DescribedObject: obj, Metric: metric, Current: autoscalingv2.MetricValueStatus{AverageValue: qp("250m")}}},
			{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricStatus{Metric: metric, Current: autoscalingv2.MetricValueStatus{Value: qp("3")}}},
		}),
		hpa("object-value-external-avg", 30*min, ptr.To[int32](1), []autoscalingv2.MetricSpec{
			{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{DescribedObject: obj, Metric: metric, Target: val("10")}},
			{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Metric: metric, Target: avg("4")}},
		}, []autoscalingv2.MetricStatus{
			{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricStatus{DescribedObject: obj, Metric: metric, Current: autoscalingv2.MetricValueStatus{Value: qp("12")}}},
			{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricStatus{Metric: metric, Current: autoscalingv2.MetricValueStatus{AverageValue: qp("5")}}},
		}),
		hpa("containers", 30*min, ptr.To[int32](1), []autoscalingv2.MetricSpec{
			{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{Name: "cpu", Container: "app", Target: util(60)}},
			{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{Name: "memory", Container: "app", Target: avg("200Mi")}},
		}, []autoscalingv2.MetricStatus{
			{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricStatus{Name: "cpu", Container: "app", Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](75)}}},
		}),
	}
}

func persistentVolumeClaims() []Sample {
	pvc := func(name string, age time.Duration, spec corev1.PersistentVolumeClaimSpec, status corev1.PersistentVolumeClaimStatus) *corev1.PersistentVolumeClaim {
		spec.Resources.Requests = corev1.ResourceList{"storage": q("10Gi")}
		if len(spec.AccessModes) == 0 {
			spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
		}
		return &corev1.PersistentVolumeClaim{ObjectMeta: om(name, "team-a", age), Spec: spec, Status: status}
	}
	bound := corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteOncePod},
		Capacity: corev1.ResourceList{"storage": q("20Gi")}}
	beta := pvc("beta-class", 3*day, corev1.PersistentVolumeClaimSpec{VolumeName: "pv-legacy"}, bound)
	beta.Annotations = map[string]string{"volume.beta.kubernetes.io/storage-class": "legacy"}
	term := pvc("terminating", 3*day, corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("fast"), VolumeName: "pv-2"}, bound)
	term.ObjectMeta = deleting(term.ObjectMeta, 0)
	term.Finalizers = []string{"kubernetes.io/pvc-protection"}
	return []Sample{
		{"pending", pvc("pending", 30*sec, corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("fast")}, corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending})},
		{"bound", pvc("data", 2*hour, corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("fast"), VolumeName: "pv-1", VolumeMode: ptr.To(corev1.PersistentVolumeBlock),
			VolumeAttributesClassName: ptr.To("gold"), AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}}, bound)},
		{"beta class annotation", beta},
		{"terminating", term},
		{"lost", pvc("lost", 8*day, corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(""), VolumeName: "gone"}, corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimLost})},
	}
}

func persistentVolumes() []Sample {
	pv := func(name string, age time.Duration, spec corev1.PersistentVolumeSpec, status corev1.PersistentVolumeStatus) *corev1.PersistentVolume {
		spec.Capacity = corev1.ResourceList{"storage": q("20Gi")}
		spec.PersistentVolumeSource = corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data/" + name}}
		return &corev1.PersistentVolume{ObjectMeta: om(name, "", age), Spec: spec, Status: status}
	}
	rwo := []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	released := pv("pv-released", 12*day, corev1.PersistentVolumeSpec{AccessModes: rwo, PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		ClaimRef: &corev1.ObjectReference{Namespace: "team-b", Name: "old"}}, corev1.PersistentVolumeStatus{Phase: corev1.VolumeReleased, Reason: "Released", Message: "claim gone"})
	released.Annotations = map[string]string{"volume.beta.kubernetes.io/storage-class": "legacy"}
	term := pv("pv-terminating", 5*min, corev1.PersistentVolumeSpec{AccessModes: rwo, StorageClassName: "fast"}, corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable})
	term.ObjectMeta = deleting(term.ObjectMeta, 0)
	term.Finalizers = []string{"kubernetes.io/pv-protection"}
	return []Sample{
		{"available", pv("pv-free", 40*min, corev1.PersistentVolumeSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany, corev1.ReadOnlyMany}, StorageClassName: "fast"}, corev1.PersistentVolumeStatus{Phase: corev1.VolumeAvailable})},
		{"bound", pv("pv-1", 2*hour, corev1.PersistentVolumeSpec{AccessModes: rwo, StorageClassName: "fast", ClaimRef: &corev1.ObjectReference{Namespace: "team-a", Name: "data"},
			VolumeMode: ptr.To(corev1.PersistentVolumeBlock), VolumeAttributesClassName: ptr.To("gold")}, corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound})},
		{"released", released},
		{"terminating", term},
	}
}

func endpoints() []Sample {
	addrs := func(ips ...string) []corev1.EndpointAddress {
		var out []corev1.EndpointAddress
		for _, ip := range ips {
			out = append(out, corev1.EndpointAddress{IP: ip})
		}
		return out
	}
	return []Sample{
		{"none", &corev1.Endpoints{ObjectMeta: om("empty", "team-a", 4*min)}},
		{"ports", &corev1.Endpoints{ObjectMeta: om("web", "team-a", 3*day), Subsets: []corev1.EndpointSubset{
			{Addresses: addrs("10.244.1.7", "10.244.1.8"), Ports: []corev1.EndpointPort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}, {Name: "https", Port: 443, Protocol: corev1.ProtocolTCP}}},
			{Addresses: addrs("fd00::9"), Ports: []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}}}}}},
		{"headless", &corev1.Endpoints{ObjectMeta: om("headless", "team-a", 20*sec), Subsets: []corev1.EndpointSubset{{Addresses: addrs("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4")}}}},
		{"three", &corev1.Endpoints{ObjectMeta: om("three", "team-a", 20*sec), Subsets: []corev1.EndpointSubset{{Addresses: addrs("10.0.0.1", "10.0.0.2", "10.0.0.3"), Ports: []corev1.EndpointPort{{Port: 53, Protocol: corev1.ProtocolUDP}}}}}},
	}
}

func endpointSlices() []Sample {
	ep := func(ips ...string) discoveryv1.Endpoint { return discoveryv1.Endpoint{Addresses: ips} }
	return []Sample{
		{"ports and more", &discoveryv1.EndpointSlice{ObjectMeta: om("web-abcde", "team-a", 3*day), AddressType: discoveryv1.AddressTypeIPv4,
			Ports:     []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](80)}, {Name: ptr.To("named")}, {}, {Port: ptr.To[int32](9090)}},
			Endpoints: []discoveryv1.Endpoint{ep("10.244.1.7"), ep("10.244.1.8", "10.244.1.9"), ep("10.244.1.10")}}},
		{"empty", &discoveryv1.EndpointSlice{ObjectMeta: om("empty-xyz", "team-a", 8*sec), AddressType: discoveryv1.AddressTypeIPv6}},
		{"fqdn", &discoveryv1.EndpointSlice{ObjectMeta: om("ext", "team-a", 8*min), AddressType: discoveryv1.AddressTypeFQDN,
			Ports: []discoveryv1.EndpointPort{{Port: ptr.To[int32](443)}}, Endpoints: []discoveryv1.Endpoint{ep("db.example.com")}}},
	}
}

func controllerRevisions() []Sample {
	owned := func(name string, age time.Duration, refs []metav1.OwnerReference, rev int64) Sample {
		m := om(name, "team-a", age)
		m.OwnerReferences = refs
		return Sample{name, &appsv1.ControllerRevision{ObjectMeta: m, Revision: rev}}
	}
	return []Sample{
		owned("ds-1", 2*day, []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: "1", Controller: ptr.To(true)}}, 3),
		owned("sts-1", 7*min, []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "2", Controller: ptr.To(true)}}, 1),
		owned("core-owner", 7*min, []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "3", Controller: ptr.To(true)}}, 2),
		owned("not-controller", 7*min, []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "2"}}, 4),
		owned("orphan", 45*day, nil, 9),
	}
}

func daemonSets() []Sample {
	ds := func(name string, age time.Duration, nodeSelector map[string]string, status appsv1.DaemonSetStatus, names ...string) Sample {
		t := podTemplate(map[string]string{"app": name}, names...)
		t.Spec.NodeSelector = nodeSelector
		return Sample{name, &appsv1.DaemonSet{ObjectMeta: om(name, "kube-system", age), Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}, Template: t}, Status: status}}
	}
	return []Sample{
		ds("agent", 10*day, map[string]string{"kubernetes.io/os": "linux"}, appsv1.DaemonSetStatus{DesiredNumberScheduled: 5, CurrentNumberScheduled: 5, NumberReady: 4, UpdatedNumberScheduled: 3, NumberAvailable: 4}, "agent", "exporter"),
		ds("new", 5*sec, nil, appsv1.DaemonSetStatus{}, "app"),
	}
}

func deployments() []Sample {
	d := func(name string, age time.Duration, replicas int32, sel *metav1.LabelSelector, status appsv1.DeploymentStatus, names ...string) Sample {
		return Sample{name, &appsv1.Deployment{ObjectMeta: om(name, "team-a", age),
			Spec:   appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: sel, Template: podTemplate(map[string]string{"app": name}, names...)},
			Status: status}}
	}
	return []Sample{
		d("web", 6*hour, 3, &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}, MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "track", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"canary"}}, {Key: "tier", Operator: metav1.LabelSelectorOpExists}}},
			appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 1}, "nginx", "sidecar"),
		d("fresh", 3*sec, 1, &metav1.LabelSelector{MatchLabels: map[string]string{"app": "fresh"}}, appsv1.DeploymentStatus{}, "app"),
		d("invalid-selector", 3*sec, 0, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}, appsv1.DeploymentStatus{}, "app"),
	}
}

func replicaSets() []Sample {
	rs := func(name string, age time.Duration, replicas int32, status appsv1.ReplicaSetStatus, names ...string) Sample {
		return Sample{name, &appsv1.ReplicaSet{ObjectMeta: om(name, "team-a", age),
			Spec:   appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "pod-template-hash": "5869d7778c"}}, Template: podTemplate(map[string]string{"app": "web"}, names...)},
			Status: status}}
	}
	return []Sample{
		rs("web-5869d7778c", 6*hour, 3, appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 2}, "nginx", "sidecar"),
		rs("web-old", 40*day, 0, appsv1.ReplicaSetStatus{}, "nginx"),
	}
}

func statefulSets() []Sample {
	ss := func(name string, age time.Duration, replicas int32, ready int32, names ...string) Sample {
		return Sample{name, &appsv1.StatefulSet{ObjectMeta: om(name, "team-a", age),
			Spec:   appsv1.StatefulSetSpec{Replicas: ptr.To(replicas), ServiceName: name, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}, Template: podTemplate(map[string]string{"app": name}, names...)},
			Status: appsv1.StatefulSetStatus{Replicas: replicas, ReadyReplicas: ready}}}
	}
	return []Sample{ss("db", 12*day, 3, 2, "postgres", "exporter"), ss("cache", 2*min, 1, 0, "redis")}
}

func csrs() []Sample {
	csr := func(name string, age time.Duration, spec certificatesv1.CertificateSigningRequestSpec, status certificatesv1.CertificateSigningRequestStatus) Sample {
		spec.Request = []byte("-----BEGIN CERTIFICATE REQUEST-----\n-----END CERTIFICATE REQUEST-----\n")
		spec.Usages = []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}
		return Sample{name, &certificatesv1.CertificateSigningRequest{ObjectMeta: om(name, "", age), Spec: spec, Status: status}}
	}
	c := func(t certificatesv1.RequestConditionType) certificatesv1.CertificateSigningRequestCondition {
		return certificatesv1.CertificateSigningRequestCondition{Type: t, Status: corev1.ConditionTrue}
	}
	return []Sample{
		csr("pending", 30*sec, certificatesv1.CertificateSigningRequestSpec{SignerName: "kubernetes.io/kube-apiserver-client", Username: "alice", ExpirationSeconds: ptr.To[int32](3600)}, certificatesv1.CertificateSigningRequestStatus{}),
		csr("issued", 3*hour, certificatesv1.CertificateSigningRequestSpec{SignerName: "kubernetes.io/kube-apiserver-client-kubelet", Username: "system:node:node-1", ExpirationSeconds: ptr.To[int32](86400 * 365)},
			certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{c(certificatesv1.CertificateApproved)}, Certificate: []byte("x")}),
		csr("denied", 5*day, certificatesv1.CertificateSigningRequestSpec{SignerName: "example.com/signer", Username: "bob"},
			certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{c(certificatesv1.CertificateDenied), c(certificatesv1.CertificateApproved)}}),
		csr("failed", 5*min, certificatesv1.CertificateSigningRequestSpec{SignerName: "example.com/signer", Username: "carol", ExpirationSeconds: ptr.To[int32](600)},
			certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{c(certificatesv1.CertificateApproved), c(certificatesv1.CertificateFailed)}}),
	}
}

func podCertificateRequests() []Sample {
	pcr := func(name string, age time.Duration, annotations map[string]string, conds ...string) Sample {
		o := &certificatesv1.PodCertificateRequest{ObjectMeta: om(name, "team-a", age),
			Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/signer", PodName: "web-0", PodUID: "11111111-2222-3333-4444-555555555555",
				ServiceAccountName: "web", ServiceAccountUID: "66666666-7777-8888-9999-000000000000", NodeName: "node-1", NodeUID: "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
				MaxExpirationSeconds: ptr.To[int32](86400), UnverifiedUserAnnotations: annotations}}
		for _, c := range conds {
			o.Status.Conditions = append(o.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue, Reason: "R", Message: "m"})
		}
		return Sample{name, o}
	}
	return []Sample{
		pcr("pending", 30*sec, nil),
		pcr("issued", 3*hour, map[string]string{"example.com/a": "1", "example.com/b": "2"}, certificatesv1.PodCertificateRequestConditionTypeIssued),
		pcr("denied", 5*day, nil, certificatesv1.PodCertificateRequestConditionTypeDenied),
		pcr("failed", 5*min, map[string]string{"x": "y"}, certificatesv1.PodCertificateRequestConditionTypeFailed),
	}
}

func flowSchemas() []Sample {
	fs := func(name string, age time.Duration, precedence int32, pl string, dist *flowcontrolv1.FlowDistinguisherMethod, conds []flowcontrolv1.FlowSchemaCondition) Sample {
		return Sample{name, &flowcontrolv1.FlowSchema{ObjectMeta: om(name, "", age), Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: precedence,
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: pl}, DistinguisherMethod: dist}, Status: flowcontrolv1.FlowSchemaStatus{Conditions: conds}}}
	}
	byUser := &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType}
	byNS := &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByNamespaceType}
	dangling := func(s flowcontrolv1.ConditionStatus) []flowcontrolv1.FlowSchemaCondition {
		return []flowcontrolv1.FlowSchemaCondition{{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: s}}
	}
	return []Sample{
		fs("workload-low", 10*day, 9000, "workload-low", byUser, dangling(flowcontrolv1.ConditionFalse)),
		fs("exempt", 10*day, 1, "exempt", nil, dangling(flowcontrolv1.ConditionFalse)),
		fs("global-default", 10*day, 9900, "global-default", byNS, nil),
		fs("b-dangling", 2*min, 1000, "missing", nil, dangling(flowcontrolv1.ConditionTrue)),
		fs("a-same-precedence", 2*min, 1000, "workload-high", byUser, nil),
	}
}

func priorityLevels() []Sample {
	pl := func(name string, age time.Duration, spec flowcontrolv1.PriorityLevelConfigurationSpec) Sample {
		return Sample{name, &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: om(name, "", age), Spec: spec}}
	}
	return []Sample{
		pl("exempt", 10*day, flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementExempt, Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{}}),
		pl("workload-low", 10*day, flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: ptr.To[int32](100), LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
				Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 128, HandSize: 6, QueueLengthLimit: 50}}}}),
		pl("reject", 3*min, flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: ptr.To[int32](5), LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}}),
		pl("defaults", 3*min, flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: &flowcontrolv1.QueuingConfiguration{}}}}),
	}
}

func ingressClasses() []Sample {
	return []Sample{
		{"default with parameters", &networkingv1.IngressClass{ObjectMeta: withAnnotations(om("nginx", "", 20*day), map[string]string{"ingressclass.kubernetes.io/is-default-class": "true"}),
			Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx", Parameters: &networkingv1.IngressClassParametersReference{APIGroup: ptr.To("k8s.example.com"), Kind: "IngressParameters", Name: "external-lb", Scope: ptr.To("Cluster")}}}},
		{"core parameters", &networkingv1.IngressClass{ObjectMeta: om("haproxy", "", 3*min),
			Spec: networkingv1.IngressClassSpec{Controller: "haproxy.org/ingress", Parameters: &networkingv1.IngressClassParametersReference{Kind: "ConfigMap", Name: "haproxy-params", Scope: ptr.To("Namespace"), Namespace: ptr.To("ingress")}}}},
		{"plain", &networkingv1.IngressClass{ObjectMeta: withAnnotations(om("traefik", "", 3*min), map[string]string{"ingressclass.kubernetes.io/is-default-class": "false"}), Spec: networkingv1.IngressClassSpec{Controller: "traefik.io/ingress-controller"}}},
	}
}

func ingresses() []Sample {
	rule := func(host string) networkingv1.IngressRule { return networkingv1.IngressRule{Host: host} }
	ing := func(name string, age time.Duration, spec networkingv1.IngressSpec, lb []networkingv1.IngressLoadBalancerIngress) Sample {
		return Sample{name, &networkingv1.Ingress{ObjectMeta: om(name, "team-a", age), Spec: spec, Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: lb}}}}
	}
	backend := &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}
	return []Sample{
		ing("tls", 2*day, networkingv1.IngressSpec{IngressClassName: ptr.To("nginx"), TLS: []networkingv1.IngressTLS{{Hosts: []string{"a.example.com"}, SecretName: "cert"}},
			Rules: []networkingv1.IngressRule{rule("a.example.com"), rule(""), rule("b.example.com"), rule("c.example.com"), rule("d.example.com")}},
			[]networkingv1.IngressLoadBalancerIngress{{IP: "203.0.113.5"}, {Hostname: "lb-1234567890abcdef.elb.example.com"}, {IP: "203.0.113.4"}}),
		ing("default-backend", 5*min, networkingv1.IngressSpec{DefaultBackend: backend}, nil),
		ing("wildcard-rules", 5*min, networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{rule(""), rule("")}}, []networkingv1.IngressLoadBalancerIngress{{Hostname: "lb.example.com"}}),
	}
}

func resourceClaims() []Sample {
	claim := func(name string, m metav1.ObjectMeta, status resourcev1.ResourceClaimStatus) Sample {
		return Sample{name, &resourcev1.ResourceClaim{ObjectMeta: m, Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu",
			Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.example.com"}}}}}, Status: status}}
	}
	alloc := &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{{Request: "gpu", Driver: "gpu.example.com", Pool: "node-1", Device: "gpu-0"}}}}
	reserved := []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "web-1", UID: "4"}}
	return []Sample{
		claim("pending", om("pending", "team-a", 30*sec), resourcev1.ResourceClaimStatus{}),
		claim("allocated", om("allocated", "team-a", 10*min), resourcev1.ResourceClaimStatus{Allocation: alloc}),
		claim("reserved", om("reserved", "team-a", 3*hour), resourcev1.ResourceClaimStatus{Allocation: alloc, ReservedFor: reserved}),
		claim("deleted pending", deleting(om("deleted-pending", "team-a", 3*hour), 0), resourcev1.ResourceClaimStatus{}),
		claim("deleted reserved", deleting(om("deleted-reserved", "team-a", 3*hour), 0), resourcev1.ResourceClaimStatus{Allocation: alloc, ReservedFor: reserved}),
	}
}

func csiDrivers() []Sample {
	return []Sample{
		{"defaults", &storagev1.CSIDriver{ObjectMeta: om("hostpath.csi.k8s.io", "", 2*day)}},
		{"everything", &storagev1.CSIDriver{ObjectMeta: om("secrets-store.csi.k8s.io", "", 5*min), Spec: storagev1.CSIDriverSpec{AttachRequired: ptr.To(false), PodInfoOnMount: ptr.To(true),
			StorageCapacity: ptr.To(true), RequiresRepublish: ptr.To(true), TokenRequests: []storagev1.TokenRequest{{Audience: "vault"}, {Audience: "api", ExpirationSeconds: ptr.To[int64](3600)}},
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent, storagev1.VolumeLifecycleEphemeral}}}},
		{"empty token requests", &storagev1.CSIDriver{ObjectMeta: om("nfs.csi.k8s.io", "", 5*min), Spec: storagev1.CSIDriverSpec{TokenRequests: []storagev1.TokenRequest{}}}},
	}
}

func storageClasses() []Sample {
	def := map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
	return []Sample{
		{"default, older", &storagev1.StorageClass{ObjectMeta: withAnnotations(om("standard", "", 30*day), def), Provisioner: "rancher.io/local-path"}},
		{"default, newer", &storagev1.StorageClass{ObjectMeta: withAnnotations(om("fast", "", 2*day), def), Provisioner: "ebs.csi.aws.com",
			ReclaimPolicy: ptr.To(corev1.PersistentVolumeReclaimRetain), VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer), AllowVolumeExpansion: ptr.To(true)}},
		{"beta default annotation", &storagev1.StorageClass{ObjectMeta: withAnnotations(om("legacy", "", 400*day), map[string]string{"storageclass.beta.kubernetes.io/is-default-class": "true"}), Provisioner: "kubernetes.io/no-provisioner"}},
		{"not default", &storagev1.StorageClass{ObjectMeta: om("slow", "", 3*min), Provisioner: "example.com/slow", AllowVolumeExpansion: ptr.To(false)}},
	}
}

// admission are the six admissionregistration.k8s.io kinds' samples.
func admission() [][]Sample {
	webhook := func(name string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{Namespace: "webhooks", Name: name}}
	}
	none := ptr.To(admissionregistrationv1.SideEffectClassNone)
	param := &admissionregistrationv1.ParamKind{APIVersion: "example.com/v1", Kind: "Limits"}
	return [][]Sample{
		{
			{"two", &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: om("injector", "", 3*day), Webhooks: []admissionregistrationv1.MutatingWebhook{
				{Name: "a.example.com", ClientConfig: webhook("a"), SideEffects: none, AdmissionReviewVersions: []string{"v1"}},
				{Name: "b.example.com", ClientConfig: webhook("b"), SideEffects: none, AdmissionReviewVersions: []string{"v1"}}}}},
			{"none", &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: om("empty", "", 9*sec)}},
		},
		{
			{"one", &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: om("policy", "", 3*day), Webhooks: []admissionregistrationv1.ValidatingWebhook{
				{Name: "v.example.com", ClientConfig: webhook("v"), SideEffects: none, AdmissionReviewVersions: []string{"v1"}}}}},
			{"none", &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: om("empty", "", 9*sec)}},
		},
		{
			{"param kind", &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: om("replica-limit", "", 2*hour), Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{ParamKind: param,
				Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= params.max"}, {Expression: "true"}}}}},
			{"no params", &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: om("plain", "", 2*min), Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
				Validations: []admissionregistrationv1.Validation{{Expression: "true"}}}}},
		},
		{
			{"param namespace and name", &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: om("b1", "", 2*hour), Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "replica-limit",
				ParamRef: &admissionregistrationv1.ParamRef{Namespace: "team-a", Name: "limits"}, ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}}},
			{"param name", &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: om("b2", "", 2*hour), Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "replica-limit",
				ParamRef: &admissionregistrationv1.ParamRef{Name: "limits"}, ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn}}}},
			{"param selector", &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: om("b3", "", 2*hour), Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "replica-limit",
				ParamRef: &admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}, ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit}}}},
			{"no param", &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: om("b4", "", 2*min), Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "plain",
				ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}}},
		},
		{
			{"param kind", &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: om("add-label", "", 2*hour), Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{ParamKind: param,
				Mutations: []admissionregistrationv1.Mutation{{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration, ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: "Object{}"}}}}}},
			{"no params", &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: om("noop", "", 2*min)}},
		},
		{
			{"param namespace and name", &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: om("m1", "", 2*hour), Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "add-label",
				ParamRef: &admissionregistrationv1.ParamRef{Namespace: "team-a", Name: "labels"}}}},
			{"param name", &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: om("m2", "", 2*hour), Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "add-label",
				ParamRef: &admissionregistrationv1.ParamRef{Name: "labels"}}}},
			{"param selector", &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: om("m3", "", 2*hour), Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "add-label",
				ParamRef: &admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpExists}}}}}}},
			{"no param", &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: om("m4", "", 2*min), Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "noop"}}},
		},
	}
}
