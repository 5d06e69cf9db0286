package integration

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestPodStatusUpdateValidation: pods/status writes are validated as upstream's
// ValidatePodStatusUpdate (v1.37's default feature gates), error text for error text, each
// case on a pod of its own: the metadata's update rules and the pod's annotation rules,
// conditions, nominatedNodeName, observedGeneration, the immutable QoS class, container
// state transitions, resource claim statuses, pod and host IPs (podIP and podIPs kept in
// step as decoding defaults them), container users and allocated resources' health. The
// texts were taken from kube-apiserver's strategy and validation run on the same writes.
func TestPodStatusUpdateValidation(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	const ns = "ps"
	mkNamespace(t, s, ns)
	pods := s.Client.CoreV1().Pods(ns)
	for i, c := range podStatusCases() {
		name := fmt.Sprintf("ps-%d", i)
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
		if c.spec != nil {
			c.spec(p)
		}
		p, err := pods.Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: create: %v", c.name, err)
		}
		if c.before != nil {
			c.before(p)
			if p, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("%s: status before: %v", c.name, err)
			}
		}
		c.change(p)
		_, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// TestPodStatusUpdateStores: what a pods/status write stores besides the status, as
// upstream's status strategy: the labels, annotations and finalizers written; the stored
// owner references and QoS class (a write without one); podIPs from podIP.
func TestPodStatusUpdateStores(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	const ns = "pss"
	mkNamespace(t, s, ns)
	pods := s.Client.CoreV1().Pods(ns)
	cm, err := s.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: cm.UID}
	p := podWith("web", rl("cpu", "100m"), nil)
	p.OwnerReferences = []metav1.OwnerReference{owner}
	p, err = pods.Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Labels = map[string]string{"reported": "yes"}
	p.Annotations = map[string]string{"example.com/note": "n"}
	p.Finalizers = []string{"example.com/hold"}
	p.OwnerReferences = nil
	p.Status.QOSClass = ""
	p.Status.PodIP = "10.0.0.7"
	p, err = pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Labels["reported"] != "yes" || p.Annotations["example.com/note"] != "n" || len(p.Finalizers) != 1 {
		t.Errorf("metadata written through pods/status not stored: labels %v, annotations %v, finalizers %v", p.Labels, p.Annotations, p.Finalizers)
	}
	if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID != owner.UID {
		t.Errorf("owner references %v, want the stored ones", p.OwnerReferences)
	}
	if p.Status.QOSClass != corev1.PodQOSBurstable {
		t.Errorf("QoS class %q, want the stored Burstable", p.Status.QOSClass)
	}
	if len(p.Status.PodIPs) != 1 || p.Status.PodIPs[0].IP != "10.0.0.7" {
		t.Errorf("podIPs %v, want podIP's", p.Status.PodIPs)
	}
	p.Finalizers = nil
	if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// podStatusCase is one pods/status write: a pod created with spec, its status set to
// before (accepted), then changed by change; want is upstream's error ("": accepted).
type podStatusCase struct {
	name   string
	spec   func(*corev1.Pod)
	before func(*corev1.Pod)
	change func(*corev1.Pod)
	want   string
}

func terminated(name string, code int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Image: "nginx", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}
}

func runningStatus(name string) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Image: "nginx", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
}

func bound(p *corev1.Pod) { p.Spec.NodeName = "node-1" }

func restartPolicy(rp corev1.RestartPolicy) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.RestartPolicy = rp }
}

func podStatusCases() []podStatusCase {
	return []podStatusCase{
		{name: "labels",
			want: `Pod "ps-0" is invalid: metadata.labels: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`, change: func(p *corev1.Pod) { p.Labels = map[string]string{"a b": "c"} }},
		{name: "mirror annotation",
			want: `Pod "ps-1" is invalid: [metadata.annotations[kubernetes.io/config.mirror]: Forbidden: may not add mirror pod annotation, metadata.annotations[kubernetes.io/config.mirror]: Invalid value: "x": must set spec.nodeName if mirror pod annotation is set]`, change: func(p *corev1.Pod) { p.Annotations = map[string]string{"kubernetes.io/config.mirror": "x"} }},
		{name: "deletion cost",
			want: `Pod "ps-2" is invalid: metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "+5": must be a 32bit integer`, change: func(p *corev1.Pod) {
				p.Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": "+5"}
			}},
		{name: "conditions",
			want: `Pod "ps-3" is invalid: [status.conditions[0].observedGeneration: Invalid value: -1: must be a non-negative integer, status.conditions[0].Type: Invalid value: "bad type": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')]`, change: func(p *corev1.Pod) {
				p.Status.Conditions = []corev1.PodCondition{{Type: "bad type", Status: corev1.ConditionTrue, ObservedGeneration: -1}, {Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: "example.com/gate", Status: corev1.ConditionTrue}}
			}},
		{name: "nominated node name invalid",
			want: `Pod "ps-4" is invalid: status.nominatedNodeName: Invalid value: "Node_A": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`, change: func(p *corev1.Pod) { p.Status.NominatedNodeName = "Node_A" }},
		{name: "nominated node name of a bound pod",
			want: `Pod "ps-5" is invalid: status.nominatedNodeName: Forbidden: may not be set on pods that are already bound to a node`, spec: bound, change: func(p *corev1.Pod) { p.Status.NominatedNodeName = "node-2" }},
		{name: "nominated node name cleared on a bound pod", spec: bound, change: func(p *corev1.Pod) { p.Status.NominatedNodeName = "" }},
		{name: "observed generation",
			want: `Pod "ps-7" is invalid: status.observedGeneration: Invalid value: -1: must be a non-negative integer`, change: func(p *corev1.Pod) { p.Status.ObservedGeneration = -1 }},
		{name: "qos class",
			want: `Pod "ps-8" is invalid: status.qosClass: Invalid value: "Guaranteed": field is immutable`, change: func(p *corev1.Pod) { p.Status.QOSClass = corev1.PodQOSGuaranteed }},
		{name: "terminated container restarts, Never",
			want: `Pod "ps-9" is invalid: status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state`, spec: restartPolicy(corev1.RestartPolicyNever),
			before: func(p *corev1.Pod) { p.Status.ContainerStatuses = []corev1.ContainerStatus{terminated("c", 1)} },
			change: func(p *corev1.Pod) { p.Status.ContainerStatuses = []corev1.ContainerStatus{runningStatus("c")} }},
		{name: "succeeded container restarts, OnFailure",
			want: `Pod "ps-10" is invalid: status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state`, spec: restartPolicy(corev1.RestartPolicyOnFailure),
			before: func(p *corev1.Pod) { p.Status.ContainerStatuses = []corev1.ContainerStatus{terminated("c", 0)} },
			change: func(p *corev1.Pod) { p.Status.ContainerStatuses = []corev1.ContainerStatus{runningStatus("c")} }},
		{name: "failed container restarts, OnFailure", spec: restartPolicy(corev1.RestartPolicyOnFailure),
			before: func(p *corev1.Pod) { p.Status.ContainerStatuses = []corev1.ContainerStatus{terminated("c", 2)} },
			change: func(p *corev1.Pod) { p.Status.ContainerStatuses = []corev1.ContainerStatus{runningStatus("c")} }},
		{name: "terminated container restarts, Always",
			before: func(p *corev1.Pod) { p.Status.ContainerStatuses = []corev1.ContainerStatus{terminated("c", 0)} },
			change: func(p *corev1.Pod) { p.Status.ContainerStatuses = []corev1.ContainerStatus{runningStatus("c")} }},
		{name: "status of a container not in the spec restarts",
			want: `Pod "ps-13" is invalid: status.containerStatuses[1].state: Forbidden: may not be transitioned to non-terminated state`, spec: restartPolicy(corev1.RestartPolicyNever),
			before: func(p *corev1.Pod) {
				p.Status.ContainerStatuses = []corev1.ContainerStatus{terminated("c", 0), terminated("ghost", 0)}
			},
			change: func(p *corev1.Pod) {
				p.Status.ContainerStatuses = []corev1.ContainerStatus{terminated("c", 0), runningStatus("ghost")}
			}},
		{name: "init container restarts",
			want: `Pod "ps-14" is invalid: status.initContainerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state`, spec: func(p *corev1.Pod) {
				p.Spec.RestartPolicy = corev1.RestartPolicyNever
				p.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "busybox"}}
			},
			before: func(p *corev1.Pod) { p.Status.InitContainerStatuses = []corev1.ContainerStatus{terminated("i", 1)} },
			change: func(p *corev1.Pod) { p.Status.InitContainerStatuses = []corev1.ContainerStatus{runningStatus("i")} }},
		{name: "sidecar restarts", spec: func(p *corev1.Pod) {
			p.Spec.RestartPolicy = corev1.RestartPolicyNever
			p.Spec.InitContainers = []corev1.Container{{Name: "i", Image: "busybox", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}}
		},
			before: func(p *corev1.Pod) { p.Status.InitContainerStatuses = []corev1.ContainerStatus{terminated("i", 0)} },
			change: func(p *corev1.Pod) { p.Status.InitContainerStatuses = []corev1.ContainerStatus{runningStatus("i")} }},
		{name: "ephemeral container restarts",
			want: `Pod "ps-16" is invalid: status.ephemeralContainerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state`,
			before: func(p *corev1.Pod) {
				p.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{terminated("e", 0)}
			},
			change: func(p *corev1.Pod) {
				p.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{runningStatus("e"), {Name: "e", Image: "nginx"}}
			}},
		{name: "resource claim statuses",
			want: "Pod \"ps-17\" is invalid: [status.resourceClaimStatuses[1].name: Duplicate value: \"gpu\", status.resourceClaimStatuses[2].name: Invalid value: \"nope\": must match the name of an entry in `spec.resourceClaims`, status.resourceClaimStatuses[2].resourceClaimName: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]", spec: func(p *corev1.Pod) {
				p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("gpu-claim")}}
			}, change: func(p *corev1.Pod) {
				p.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: ptr.To("ok")}, {Name: "gpu"}, {Name: "nope", ResourceClaimName: ptr.To("Bad_Name")}}
			}},
		{name: "extended resource claim status, empty",
			want: `Pod "ps-18" is invalid: [status.extendedResourceClaimStatus.requestMappings: Required value: at least one request mapping is required, status.extendedResourceClaimStatus.resourceClaimName: Required value]`, change: func(p *corev1.Pod) {
				p.Status.ExtendedResourceClaimStatus = &corev1.PodExtendedResourceClaimStatus{}
			}},
		{name: "extended resource claim status",
			want: `Pod "ps-19" is invalid: [status.extendedResourceClaimStatus.requestMappings[1].resourceName: Invalid value: "example.com/fpga": must match the extended resource name of an entry in spec.initContainers.resources.requests or spec.containers.resources.requests, status.extendedResourceClaimStatus.requestName: Invalid value: "Req_1": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), status.extendedResourceClaimStatus.requestMappings[2].containerName: Invalid value: "ghost": must match the name of an entry in spec.initContainers.name or spec.containers.name, status.extendedResourceClaimStatus.requestMappings[3].containerName: Duplicate value: "c", status.extendedResourceClaimStatus.requestMappings[3].resourceName: Duplicate value: "example.com/gpu", status.extendedResourceClaimStatus.requestMappings[3].requestName: Duplicate value: "req-0", status.extendedResourceClaimStatus.resourceClaimName: Invalid value: "Bad_Claim": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')]`, spec: func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"example.com/gpu": resource.MustParse("1")}
				p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"example.com/gpu": resource.MustParse("1")}
			}, change: func(p *corev1.Pod) {
				p.Status.ExtendedResourceClaimStatus = &corev1.PodExtendedResourceClaimStatus{ResourceClaimName: "Bad_Claim", RequestMappings: []corev1.ContainerExtendedResourceRequest{
					{ContainerName: "c", ResourceName: "example.com/gpu", RequestName: "req-0"},
					{ContainerName: "c", ResourceName: "example.com/fpga", RequestName: "Req_1"},
					{ContainerName: "ghost", ResourceName: "example.com/gpu", RequestName: "req-2"},
					{ContainerName: "c", ResourceName: "example.com/gpu", RequestName: "req-0"},
				}}
			}},
		{name: "pod IPs",
			want: `Pod "ps-20" is invalid: [status.podIPs[2]: Invalid value: "1.2.3": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff), status.podIPs: Internal error: failed to check for dual stack with error:invalid IP[2]: 1.2.3, status.podIPs: Invalid value: [{"IP":"10.0.0.1"},{"IP":"10.0.0.2"},{"IP":"1.2.3"}]: may specify no more than one IP for each IP family]`, change: func(p *corev1.Pod) {
				p.Status.PodIP = "10.0.0.1"
				p.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "10.0.0.2"}, {IP: "1.2.3"}}
			}},
		{name: "pod IPs of one family",
			want: `Pod "ps-21" is invalid: status.podIPs: Invalid value: [{"IP":"10.0.0.1"},{"IP":"10.0.0.2"}]: may specify no more than one IP for each IP family`, change: func(p *corev1.Pod) {
				p.Status.PodIP = "10.0.0.1"
				p.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "10.0.0.2"}}
			}},
		{name: "pod IP without pod IPs", change: func(p *corev1.Pod) { p.Status.PodIP = "10.0.0.1" }},
		{name: "pod IPs without pod IP", change: func(p *corev1.Pod) { p.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.1"}} }},
		{name: "pod IP not the first", change: func(p *corev1.Pod) {
			p.Status.PodIP = "10.0.0.2"
			p.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "fd00::2"}}
		}},
		{name: "pod IP with leading zeros",
			want: `Pod "ps-25" is invalid: status.podIPs[0]: Invalid value: "010.0.0.1": must not have leading 0s`, change: func(p *corev1.Pod) {
				p.Status.PodIP = "010.0.0.1"
				p.Status.PodIPs = []corev1.PodIP{{IP: "010.0.0.1"}}
			}},
		{name: "dual-stack pod IPs", change: func(p *corev1.Pod) {
			p.Status.PodIP = "10.0.0.1"
			p.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}}
		}},
		{name: "host IPs",
			want: "Pod \"ps-27\" is invalid: [status.hostIPs[0].ip: Invalid value: \"10.0.0.1\": must be equal to `hostIP`, status.hostIPs: Invalid value: [{\"IP\":\"10.0.0.1\"},{\"IP\":\"fd00::1\"},{\"IP\":\"10.0.0.3\"}]: may specify no more than one IP for each IP family]", change: func(p *corev1.Pod) {
				p.Status.HostIP = "10.0.0.9"
				p.Status.HostIPs = []corev1.HostIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}, {IP: "10.0.0.3"}}
			}},
		{name: "host IP invalid",
			want: `Pod "ps-28" is invalid: status.hostIPs[0]: Invalid value: "::ffff:1.2.3.4": must not be an IPv4-mapped IPv6 address`, change: func(p *corev1.Pod) {
				p.Status.HostIP = "::ffff:1.2.3.4"
				p.Status.HostIPs = []corev1.HostIP{{IP: "::ffff:1.2.3.4"}}
			}},
		{name: "container user",
			want: `Pod "ps-29" is invalid: [status.containerStatuses[0].user.linux.uid: Invalid value: 8589934592: must be between 0 and 4294967295, inclusive, status.containerStatuses[0].user.linux.gid: Invalid value: -1: must be between 0 and 2147483647, inclusive, status.containerStatuses[0].user.linux.supplementalGroups[1]: Invalid value: -2: must be between 0 and 2147483647, inclusive, status.initContainerStatuses[0].user.linux.uid: Invalid value: -1: must be between 0 and 4294967295, inclusive]`, change: func(p *corev1.Pod) {
				cs := runningStatus("c")
				cs.User = &corev1.ContainerUser{Linux: &corev1.LinuxContainerUser{UID: 1 << 33, GID: -1, SupplementalGroups: []int64{5, -2}}}
				is := runningStatus("i")
				is.User = &corev1.ContainerUser{Linux: &corev1.LinuxContainerUser{UID: -1}}
				p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
				p.Status.InitContainerStatuses = []corev1.ContainerStatus{is}
			}},
		{name: "container user of a windows pod",
			want: `Pod "ps-30" is invalid: status.containerStatuses[0].user.linux: Forbidden: cannot be set for a windows pod`, spec: func(p *corev1.Pod) { p.Spec.OS = &corev1.PodOS{Name: corev1.Windows} }, change: func(p *corev1.Pod) {
				cs := runningStatus("c")
				cs.User = &corev1.ContainerUser{Linux: &corev1.LinuxContainerUser{UID: 1000, GID: 1000}}
				p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
			}},
		{name: "allocated resources status",
			want: `Pod "ps-31" is invalid: [status.containerStatuses[0].allocatedResourcesStatus[0].name: Invalid value: "memory": must match one of the container's resource requests, status.containerStatuses[0].allocatedResourcesStatus[0].resources[0].health: Unsupported value: "Bad": supported values: "Healthy", "Unhealthy", "Unknown", status.containerStatuses[0].allocatedResourcesStatus[0].resources[1].message: Required value: must be non-empty if specified, status.containerStatuses[0].allocatedResourcesStatus[0].resources[1].resourceID: Duplicate value: "a", status.containerStatuses[0].allocatedResourcesStatus[1].name: Invalid value: "claim:x": must match one of the container's resource claims as 'claim:<claimName>/<requestName>' when container.resources.claims[*].request is set or 'claim:<claimName>' when it is empty, status.containerStatuses[0].allocatedResourcesStatus[1].resources[0].message: Too long: may not be more than 1024 bytes, status.ephemeralContainerStatuses[0].allocatedResourcesStatus: Forbidden: must not be specified in container status]`, spec: func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"cpu": resource.MustParse("100m")}
			}, change: func(p *corev1.Pod) {
				cs := runningStatus("c")
				cs.AllocatedResourcesStatus = []corev1.ResourceStatus{
					{Name: "memory", Resources: []corev1.ResourceHealth{{ResourceID: "a", Health: "Bad"}, {ResourceID: "a", Health: corev1.ResourceHealthStatusHealthy, Message: ptr.To("")}}},
					{Name: "claim:x", Resources: []corev1.ResourceHealth{{ResourceID: "b", Health: corev1.ResourceHealthStatusUnknown, Message: ptr.To(strings.Repeat("m", 1025))}}},
					{Name: "cpu", Resources: []corev1.ResourceHealth{{ResourceID: "c", Health: corev1.ResourceHealthStatusHealthy, Message: ptr.To("fine")}}},
				}
				ghost := runningStatus("ghost")
				ghost.AllocatedResourcesStatus = []corev1.ResourceStatus{{Name: "memory"}}
				eph := runningStatus("e")
				eph.AllocatedResourcesStatus = []corev1.ResourceStatus{{Name: "cpu"}}
				p.Status.ContainerStatuses = []corev1.ContainerStatus{cs, ghost}
				p.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{eph}
			}},
	}
}
