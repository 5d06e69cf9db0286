package table

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestServiceCells(t *testing.T) {
	tcp80 := corev1.ServicePort{Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)}
	tests := []struct {
		name string
		spec corev1.ServiceSpec
		lb   corev1.LoadBalancerStatus
		want []interface{} // TYPE CLUSTER-IP EXTERNAL-IP PORT(S) (AGE) SELECTOR
	}{
		{"cluster ip", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10", "fd00::a"},
			Ports: []corev1.ServicePort{tcp80, {Port: 53, Protocol: corev1.ProtocolUDP}}, Selector: map[string]string{"app": "dns", "tier": "x"}},
			corev1.LoadBalancerStatus{}, []interface{}{"ClusterIP", "10.96.0.10", "<none>", "80/TCP,53/UDP", "app=dns,tier=x"}},
		{"cluster ip without clusterIPs", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.11"},
			corev1.LoadBalancerStatus{}, []interface{}{"ClusterIP", "10.96.0.11", "<none>", "<none>", "<none>"}},
		{"headless", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "None", ClusterIPs: []string{"None"}, Ports: []corev1.ServicePort{tcp80}},
			corev1.LoadBalancerStatus{}, []interface{}{"ClusterIP", "None", "<none>", "80/TCP", "<none>"}},
		{"external ips", corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIPs: []string{"10.0.0.1"}, ExternalIPs: []string{"1.2.3.4", "5.6.7.8"}},
			corev1.LoadBalancerStatus{}, []interface{}{"ClusterIP", "10.0.0.1", "1.2.3.4,5.6.7.8", "<none>", "<none>"}},
		{"node port", corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIPs: []string{"10.0.0.2"}, Ports: []corev1.ServicePort{{Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}}},
			corev1.LoadBalancerStatus{}, []interface{}{"NodePort", "10.0.0.2", "<none>", "80:30080/TCP", "<none>"}},
		{"load balancer pending", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.0.0.3"}},
			corev1.LoadBalancerStatus{}, []interface{}{"LoadBalancer", "10.0.0.3", "<pending>", "<none>", "<none>"}},
		{"load balancer ingress, sorted, never clipped", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.0.0.4"}},
			corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{Hostname: "very-long-name.example.com"}, {IP: "9.9.9.9"}, {IP: "1.1.1.1"}}},
			[]interface{}{"LoadBalancer", "10.0.0.4", "1.1.1.1,9.9.9.9,very-long-name.example.com", "<none>", "<none>"}},
		{"load balancer with external ips", corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.0.0.5"}, ExternalIPs: []string{"7.7.7.7"}},
			corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "8.8.8.8"}}}, []interface{}{"LoadBalancer", "10.0.0.5", "8.8.8.8,7.7.7.7", "<none>", "<none>"}},
		{"external name", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"},
			corev1.LoadBalancerStatus{}, []interface{}{"ExternalName", "<none>", "db.example.com", "<none>", "<none>"}},
		{"no type", corev1.ServiceSpec{}, corev1.LoadBalancerStatus{}, []interface{}{"", "<none>", "<unknown>", "<none>", "<none>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &corev1.Service{ObjectMeta: objMeta("s", 3*time.Hour), Spec: tt.spec, Status: corev1.ServiceStatus{LoadBalancer: tt.lb}}
			want := append([]interface{}{"s"}, tt.want[:4]...)
			want = append(want, "3h", tt.want[4])
			checkCells(t, svc, want)
		})
	}
}

func TestSimpleCoreCells(t *testing.T) {
	tests := []struct {
		name string
		obj  runtime.Object
		want []interface{}
	}{
		{"namespace", &corev1.Namespace{ObjectMeta: objMeta("team-a", 49*time.Hour), Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
			[]interface{}{"team-a", "Active", "2d1h"}},
		{"terminating namespace", &corev1.Namespace{ObjectMeta: objMeta("old", 400*24*time.Hour), Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}},
			[]interface{}{"old", "Terminating", "400d"}},
		{"namespace without creation time", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x"}},
			[]interface{}{"x", "", "<unknown>"}},
		{"secret", &corev1.Secret{ObjectMeta: objMeta("tls", 90*time.Second), Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": nil, "tls.key": nil}},
			[]interface{}{"tls", "kubernetes.io/tls", int64(2), "90s"}},
		{"empty secret", &corev1.Secret{ObjectMeta: objMeta("e", 2*time.Minute)},
			[]interface{}{"e", "", int64(0), "2m"}},
		{"configmap counts data and binaryData", &corev1.ConfigMap{ObjectMeta: objMeta("cm", 5*time.Minute+30*time.Second),
			Data: map[string]string{"a": "1", "b": "2"}, BinaryData: map[string][]byte{"c": {1}}},
			[]interface{}{"cm", int64(3), "5m30s"}},
		{"service account", &corev1.ServiceAccount{ObjectMeta: objMeta("default", 10*time.Minute), Secrets: []corev1.ObjectReference{{Name: "t"}}},
			[]interface{}{"default", "10m"}},
		{"endpoints none", &corev1.Endpoints{ObjectMeta: objMeta("e", time.Second)},
			[]interface{}{"e", "<none>", "1s"}},
		{"endpoints", &corev1.Endpoints{ObjectMeta: objMeta("e", time.Second), Subsets: []corev1.EndpointSubset{
			{Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1"}, {IP: "10.0.0.2"}}, Ports: []corev1.EndpointPort{{Port: 80}, {Port: 443}}},
		}}, []interface{}{"e", "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more...", "1s"}},
		{"headless endpoints", &corev1.Endpoints{ObjectMeta: objMeta("e", time.Second), Subsets: []corev1.EndpointSubset{
			{Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1"}}},
		}}, []interface{}{"e", "10.0.0.1", "1s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkCells(t, tt.obj, tt.want) })
	}
}

func TestNodeCells(t *testing.T) {
	tests := []struct {
		name string
		node corev1.Node
		want []interface{}
	}{
		{"bare", corev1.Node{ObjectMeta: objMeta("n", time.Hour)},
			[]interface{}{"n", "Unknown", "<none>", "60m", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"}},
		{"ready control plane, cordoned", corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "cp", CreationTimestamp: ago(26 * time.Hour), Labels: map[string]string{
				"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/": "", "kubernetes.io/role": "master", "other": "x"}},
			Spec: corev1.NodeSpec{Unschedulable: true},
			Status: corev1.NodeStatus{
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}, {Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
				Addresses:  []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "cp"}, {Type: corev1.NodeInternalIP, Address: "192.168.0.2"}, {Type: corev1.NodeExternalIP, Address: "3.3.3.3"}},
				NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: "v1.32.0", OSImage: "Debian", KernelVersion: "6.1", ContainerRuntimeVersion: "containerd://2.0"},
			}},
			[]interface{}{"cp", "Ready,SchedulingDisabled", "control-plane,master", "26h", "v1.32.0", "192.168.0.2", "3.3.3.3", "Debian", "6.1", "containerd://2.0"}},
		{"not ready", corev1.Node{ObjectMeta: objMeta("w", time.Minute), Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}}},
			[]interface{}{"w", "NotReady", "<none>", "60s", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkCells(t, &tt.node, tt.want) })
	}
}

func TestPersistentVolumeClaimCells(t *testing.T) {
	block := corev1.PersistentVolumeBlock
	tests := []struct {
		name string
		pvc  corev1.PersistentVolumeClaim
		want []interface{}
	}{
		{"pending", corev1.PersistentVolumeClaim{
			ObjectMeta: objMeta("data", 20*time.Second),
			Spec:       corev1.PersistentVolumeClaimSpec{StorageClassName: ptr("fast"), Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{"storage": resource.MustParse("1Gi")}}},
			Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
		}, []interface{}{"data", "Pending", "", "", "", "fast", "<unset>", "20s", "<unset>"}},
		{"bound", corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data", CreationTimestamp: ago(20 * time.Second), Annotations: map[string]string{"volume.beta.kubernetes.io/storage-class": "beta"}},
			Spec:       corev1.PersistentVolumeClaimSpec{VolumeName: "pv-1", StorageClassName: ptr("fast"), VolumeMode: &block, VolumeAttributesClassName: ptr("gold")},
			Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: corev1.ResourceList{"storage": resource.MustParse("2Gi")},
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod, corev1.ReadWriteMany, corev1.ReadWriteOnce, corev1.ReadWriteOnce}},
		}, []interface{}{"data", "Bound", "pv-1", "2Gi", "RWO,RWX,RWOP", "beta", "gold", "20s", "Block"}},
		{"terminating", corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "d", CreationTimestamp: ago(time.Second), DeletionTimestamp: agoPtr(0)},
			Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound},
		}, []interface{}{"d", "Terminating", "", "", "", "", "<unset>", "1s", "<unset>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkCells(t, &tt.pvc, tt.want) })
	}
}

func TestPersistentVolumeCells(t *testing.T) {
	pv := &corev1.PersistentVolume{
		ObjectMeta: objMeta("pv-1", time.Hour),
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{"storage": resource.MustParse("5Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			ClaimRef:                      &corev1.ObjectReference{Namespace: "ns", Name: "data"},
			StorageClassName:              "slow",
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
	}
	checkCells(t, pv, []interface{}{"pv-1", "5Gi", "ROX", "Retain", "Bound", "ns/data", "slow", "<unset>", "", "60m", "<unset>"})
}

func TestReplicationControllerCells(t *testing.T) {
	rc := &corev1.ReplicationController{
		ObjectMeta: objMeta("rc", 4*time.Minute),
		Spec: corev1.ReplicationControllerSpec{Selector: map[string]string{"app": "web"},
			Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: containers("web", "log")}}},
		Status: corev1.ReplicationControllerStatus{Replicas: 2, ReadyReplicas: 1},
	}
	checkCells(t, rc, []interface{}{"rc", int64(1), int64(2), int64(1), "4m", "web,log", "web:1,log:1", "app=web"})

	rc.Spec.Replicas = ptr(int32(3))
	rc.Spec.Template = nil
	rc.Spec.Selector = nil
	checkCells(t, rc, []interface{}{"rc", int64(3), int64(2), int64(1), "4m", "", "", "<none>"})
}

func TestResourceQuotaCells(t *testing.T) {
	list := func(kv ...string) corev1.ResourceList {
		l := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return l
	}
	tests := []struct {
		name           string
		hard, used     corev1.ResourceList
		request, limit string
	}{
		{"kubectl-protocol example", list("requests.cpu", "1", "requests.memory", "1Gi", "requests.nvidia.com/gpu", "4", "limits.cpu", "2", "limits.memory", "2Gi"), nil,
			"requests.cpu: 0/1, requests.memory: 0/1Gi, requests.nvidia.com/gpu: 0/4", "limits.cpu: 0/2, limits.memory: 0/2Gi"},
		{"upstream doc example", list("requests.cpu", "1", "requests.memory", "1Gi", "limits.cpu", "2", "limits.memory", "2Gi"),
			list("requests.cpu", "500m", "requests.memory", "512Mi", "limits.cpu", "1", "limits.memory", "1Gi"),
			"requests.cpu: 500m/1, requests.memory: 512Mi/1Gi", "limits.cpu: 1/2, limits.memory: 1Gi/2Gi"},
		{"object counts and bare names", list("pods", "10", "count/deployments.apps", "2", "cpu", "4", "limits", "1", "services.loadbalancers", "0"),
			list("pods", "3", "cpu", "1500m"),
			"count/deployments.apps: 0/2, cpu: 1500m/4, limits: 0/1, pods: 3/10, services.loadbalancers: 0/0", ""},
		{"canonical quantities", list("requests.memory", "1024Mi", "limits.cpu", "2000m"), list("requests.memory", "1536Mi", "limits.cpu", "0.5"),
			"requests.memory: 1536Mi/1Gi", "limits.cpu: 500m/2"},
		{"used without hard is not shown", list("pods", "1"), list("pods", "1", "secrets", "3"), "pods: 1/1", ""},
		{"no status", nil, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := &corev1.ResourceQuota{ObjectMeta: objMeta("compute", 64*time.Second),
				Spec:   corev1.ResourceQuotaSpec{Hard: list("pods", "99")}, // spec is not shown: status is
				Status: corev1.ResourceQuotaStatus{Hard: tt.hard, Used: tt.used}}
			checkCells(t, q, []interface{}{"compute", tt.request, tt.limit, "64s"})
		})
	}
}

func TestEventCells(t *testing.T) {
	tests := []struct {
		name  string
		event corev1.Event
		want  []interface{}
	}{
		{"legacy event", corev1.Event{
			ObjectMeta:     objMeta("web.17a", time.Hour),
			InvolvedObject: corev1.ObjectReference{Kind: "ReplicaSet", Name: "web-5869d7778c", FieldPath: "spec"},
			Reason:         "FailedCreate", Type: corev1.EventTypeWarning, Count: 7,
			Message:        "  Error creating: pods \"web-x\" is forbidden: exceeded quota\n",
			Source:         corev1.EventSource{Component: "replicaset-controller"},
			FirstTimestamp: ago(10 * time.Minute), LastTimestamp: ago(2 * time.Minute),
		}, []interface{}{"2m", "Warning", "FailedCreate", "replicaset/web-5869d7778c", "spec", "replicaset-controller",
			"Error creating: pods \"web-x\" is forbidden: exceeded quota", "10m", int64(7), "web.17a"}},
		{"new API singleton", corev1.Event{
			ObjectMeta:     objMeta("e", time.Hour),
			InvolvedObject: corev1.ObjectReference{Kind: "Node"},
			Reason:         "Starting", Type: corev1.EventTypeNormal,
			EventTime:           metav1.NewMicroTime(testNow.Add(-30 * time.Second)),
			ReportingController: "kubelet", ReportingInstance: "node-1",
		}, []interface{}{"30s", "Normal", "Starting", "node", "", "kubelet, node-1", "", "30s", int64(1), "e"}},
		{"series", corev1.Event{
			ObjectMeta:     objMeta("s", time.Hour),
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p"},
			EventTime:      metav1.NewMicroTime(testNow.Add(-3 * time.Minute)),
			Series:         &corev1.EventSeries{Count: 4, LastObservedTime: metav1.NewMicroTime(testNow.Add(-5 * time.Second))},
			Source:         corev1.EventSource{Component: "kubelet", Host: "node-2"},
		}, []interface{}{"5s", "", "", "pod/p", "", "kubelet, node-2", "", "3m", int64(4), "s"}},
		{"no times", corev1.Event{ObjectMeta: objMeta("z", time.Hour)},
			[]interface{}{"<unknown>", "", "", "", "", "", "", "<unknown>", int64(1), "z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkCells(t, &tt.event, tt.want) })
	}
}
