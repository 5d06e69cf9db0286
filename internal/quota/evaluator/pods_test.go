package evaluator

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func container(t *testing.T, name string, requests, limits []string) corev1.Container {
	return corev1.Container{
		Name:      name,
		Resources: corev1.ResourceRequirements{Requests: rl(t, requests...), Limits: rl(t, limits...)},
	}
}

func TestPodUsage(t *testing.T) {
	always := ptr.To(corev1.ContainerRestartPolicyAlways)
	tests := []struct {
		name string
		pod  func() *corev1.Pod
		want string
	}{
		{
			name: "every compute name",
			pod: func() *corev1.Pod {
				return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{container(t, "c",
					[]string{"cpu=100m", "memory=128Mi", "ephemeral-storage=1Gi", "hugepages-2Mi=4Mi", "nvidia.com/gpu=1"},
					[]string{"cpu=200m", "memory=256Mi", "ephemeral-storage=2Gi", "hugepages-2Mi=4Mi", "nvidia.com/gpu=1"})}}}
			},
			want: "count/pods=1 cpu=100m ephemeral-storage=1Gi hugepages-2Mi=4Mi limits.cpu=200m limits.ephemeral-storage=2Gi " +
				"limits.memory=256Mi memory=128Mi pods=1 requests.cpu=100m requests.ephemeral-storage=1Gi " +
				"requests.hugepages-2Mi=4Mi requests.memory=128Mi requests.nvidia.com/gpu=1",
		},
		{
			name: "best effort pod",
			pod: func() *corev1.Pod {
				return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
			},
			want: "count/pods=1 pods=1",
		},
		{
			name: "containers are summed",
			pod: func() *corev1.Pod {
				return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
					container(t, "a", []string{"cpu=100m", "memory=1Gi"}, []string{"cpu=1"}),
					container(t, "b", []string{"cpu=250m"}, []string{"cpu=500m", "memory=2Gi"}),
				}}}
			},
			want: "count/pods=1 cpu=350m limits.cpu=1500m limits.memory=2Gi memory=1Gi pods=1 requests.cpu=350m requests.memory=1Gi",
		},
		{
			name: "regular init container larger than containers",
			pod: func() *corev1.Pod {
				return &corev1.Pod{Spec: corev1.PodSpec{
					InitContainers: []corev1.Container{container(t, "init", []string{"cpu=2"}, nil)},
					Containers:     []corev1.Container{container(t, "c", []string{"cpu=1", "memory=1Gi"}, nil)},
				}}
			},
			want: "count/pods=1 cpu=2 memory=1Gi pods=1 requests.cpu=2 requests.memory=1Gi",
		},
		{
			name: "sidecar before a regular init container adds to its demand",
			pod: func() *corev1.Pod {
				side := container(t, "side", []string{"cpu=200m"}, nil)
				side.RestartPolicy = always
				return &corev1.Pod{Spec: corev1.PodSpec{
					InitContainers: []corev1.Container{side, container(t, "init", []string{"cpu=500m"}, nil)},
					Containers:     []corev1.Container{container(t, "c", []string{"cpu=100m"}, nil)},
				}}
			},
			want: "count/pods=1 cpu=700m pods=1 requests.cpu=700m",
		},
		{
			name: "sidecar after a regular init container only adds to the running sum",
			pod: func() *corev1.Pod {
				side := container(t, "side", []string{"cpu=200m"}, nil)
				side.RestartPolicy = always
				return &corev1.Pod{Spec: corev1.PodSpec{
					InitContainers: []corev1.Container{container(t, "init", []string{"cpu=250m"}, nil), side},
					Containers:     []corev1.Container{container(t, "c", []string{"cpu=100m"}, nil)},
				}}
			},
			want: "count/pods=1 cpu=300m pods=1 requests.cpu=300m",
		},
		{
			name: "overhead is added to requests and to non-zero limits",
			pod: func() *corev1.Pod {
				return &corev1.Pod{Spec: corev1.PodSpec{
					Overhead:   rl(t, "cpu=50m", "memory=10Mi"),
					Containers: []corev1.Container{container(t, "c", []string{"cpu=100m"}, []string{"cpu=200m"})},
				}}
			},
			want: "count/pods=1 cpu=150m limits.cpu=250m memory=10Mi pods=1 requests.cpu=150m requests.memory=10Mi",
		},
		{
			name: "pod-level resources replace cpu and memory only",
			pod: func() *corev1.Pod {
				return &corev1.Pod{Spec: corev1.PodSpec{
					Resources: &corev1.ResourceRequirements{Requests: rl(t, "cpu=1", "memory=1Gi"), Limits: rl(t, "cpu=2", "memory=2Gi")},
					Containers: []corev1.Container{container(t, "c",
						[]string{"cpu=100m", "ephemeral-storage=1Gi"}, []string{"ephemeral-storage=3Gi"})},
				}}
			},
			want: "count/pods=1 cpu=1 ephemeral-storage=1Gi limits.cpu=2 limits.ephemeral-storage=3Gi limits.memory=2Gi memory=1Gi " +
				"pods=1 requests.cpu=1 requests.ephemeral-storage=1Gi requests.memory=1Gi",
		},
		{
			name: "ephemeral containers never count",
			pod: func() *corev1.Pod {
				p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{container(t, "c", []string{"cpu=1"}, nil)}}}
				p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
					Name: "debug", Resources: corev1.ResourceRequirements{Requests: rl(t, "cpu=5")}}}}
				return p
			},
			want: "count/pods=1 cpu=1 pods=1 requests.cpu=1",
		},
		{
			name: "extended resources count only as requests.<name>",
			pod: func() *corev1.Pod {
				return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{container(t, "c",
					[]string{"example.com/foo=2"}, []string{"example.com/foo=2"})}}}
			},
			want: "count/pods=1 pods=1 requests.example.com/foo=2",
		},
		{
			name: "succeeded pod counts only count/pods",
			pod: func() *corev1.Pod {
				return &corev1.Pod{
					Spec:   corev1.PodSpec{Containers: []corev1.Container{container(t, "c", []string{"cpu=1"}, []string{"cpu=1"})}},
					Status: corev1.PodStatus{Phase: corev1.PodSucceeded},
				}
			},
			want: "count/pods=1",
		},
		{
			name: "failed pod counts only count/pods",
			pod: func() *corev1.Pod {
				return &corev1.Pod{
					Spec:   corev1.PodSpec{Containers: []corev1.Container{container(t, "c", []string{"cpu=1"}, nil)}},
					Status: corev1.PodStatus{Phase: corev1.PodFailed},
				}
			},
			want: "count/pods=1",
		},
		{
			name: "running pod counts",
			pod: func() *corev1.Pod {
				return &corev1.Pod{
					Spec:   corev1.PodSpec{Containers: []corev1.Container{container(t, "c", []string{"cpu=1"}, nil)}},
					Status: corev1.PodStatus{Phase: corev1.PodRunning},
				}
			},
			want: "count/pods=1 cpu=1 pods=1 requests.cpu=1",
		},
		{
			name: "pod deleted with no grace left counts only count/pods",
			pod: func() *corev1.Pod {
				return &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{}, DeletionGracePeriodSeconds: ptr.To[int64](0)},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{container(t, "c", []string{"cpu=1"}, nil)}},
				}
			},
			want: "count/pods=1",
		},
		{
			name: "pod in its grace period still counts",
			pod: func() *corev1.Pod {
				return &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{}, DeletionGracePeriodSeconds: ptr.To[int64](30)},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{container(t, "c", []string{"cpu=1"}, nil)}},
				}
			},
			want: "count/pods=1 cpu=1 pods=1 requests.cpu=1",
		},
		{
			// Upstream stops counting it by the clock once deletionTimestamp+grace has
			// passed; quotad counts it until a write ends it (design.md §2).
			name: "pod past its grace period by the clock still counts",
			pod: func() *corev1.Pod {
				return &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{Time: time.Unix(0, 0)}, DeletionGracePeriodSeconds: ptr.To[int64](1)},
					Spec:       corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{container(t, "c", []string{"cpu=1"}, nil)}},
					Status:     corev1.PodStatus{Phase: corev1.PodRunning},
				}
			},
			want: "count/pods=1 cpu=1 pods=1 requests.cpu=1",
		},
		{
			name: "terminating pod reported Succeeded counts only count/pods",
			pod: func() *corev1.Pod {
				return &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{}, DeletionGracePeriodSeconds: ptr.To[int64](30)},
					Spec:       corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{container(t, "c", []string{"cpu=1"}, nil)}},
					Status:     corev1.PodStatus{Phase: corev1.PodSucceeded},
				}
			},
			want: "count/pods=1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := tt.pod()
			before := pod.DeepCopy()
			got, err := Pods{}.Usage(pod)
			if err != nil {
				t.Fatal(err)
			}
			if s := show(got); s != tt.want {
				t.Errorf("usage:\n got %s\nwant %s", s, tt.want)
			}
			if !equalPods(before, pod) {
				t.Error("Usage modified the pod")
			}
		})
	}
}

func equalPods(a, b *corev1.Pod) bool {
	return reflect.DeepEqual(a, b)
}

func TestPodUsageWrongType(t *testing.T) {
	_, err := Pods{}.Usage(&corev1.Service{})
	if err == nil || err.Error() != "expect *v1.Pod, got *v1.Service" {
		t.Fatalf("got %v", err)
	}
}

func TestPodMatchingResources(t *testing.T) {
	input := []corev1.ResourceName{
		"count/pods", "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
		"limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "hugepages-2Mi", "requests.hugepages-1Gi",
		"requests.nvidia.com/gpu", "nvidia.com/gpu", "limits.nvidia.com/gpu", "requests.deviceclass.resource.kubernetes.io/gpu",
		"requests.kubernetes.io/foo", "services", "secrets", "requests.storage", "count/services", "example.com/foo",
	}
	got := Pods{}.MatchingResources(input)
	want := "count/pods cpu ephemeral-storage hugepages-2Mi limits.cpu limits.ephemeral-storage limits.memory memory pods " +
		"requests.cpu requests.deviceclass.resource.kubernetes.io/gpu requests.ephemeral-storage requests.hugepages-1Gi " +
		"requests.memory requests.nvidia.com/gpu"
	var s []string
	for _, n := range got {
		s = append(s, string(n))
	}
	if strings.Join(s, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(s, " "), want)
	}
}

func TestPodHandles(t *testing.T) {
	for sub, want := range map[string]bool{"": true, "status": true, "resize": true, "binding": false, "eviction": false, "ephemeralcontainers": false, "log": false} {
		if got := (Pods{}).Handles(sub); got != want {
			t.Errorf("Handles(%q) = %v, want %v", sub, got, want)
		}
	}
}

func TestPodMatchesScope(t *testing.T) {
	sel := func(scope corev1.ResourceQuotaScope, op corev1.ScopeSelectorOperator, values ...string) corev1.ScopedResourceSelectorRequirement {
		return corev1.ScopedResourceSelectorRequirement{ScopeName: scope, Operator: op, Values: values}
	}
	exists := func(scope corev1.ResourceQuotaScope) corev1.ScopedResourceSelectorRequirement {
		return sel(scope, corev1.ScopeSelectorOpExists)
	}
	bestEffort := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	burstable := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{container(t, "c", []string{"cpu=1"}, nil)}}}
	qosFromStatus := &corev1.Pod{
		Spec:   corev1.PodSpec{Containers: []corev1.Container{container(t, "c", []string{"cpu=1"}, nil)}},
		Status: corev1.PodStatus{QOSClass: corev1.PodQOSBestEffort},
	}
	terminating := &corev1.Pod{Spec: corev1.PodSpec{ActiveDeadlineSeconds: ptr.To[int64](30)}}
	zeroDeadline := &corev1.Pod{Spec: corev1.PodSpec{ActiveDeadlineSeconds: ptr.To[int64](0)}}
	high := &corev1.Pod{Spec: corev1.PodSpec{PriorityClassName: "high"}}
	noClass := &corev1.Pod{}
	affinity := func(a *corev1.Affinity) *corev1.Pod { return &corev1.Pod{Spec: corev1.PodSpec{Affinity: a}} }
	term := func(namespaces []string, selector *metav1.LabelSelector) corev1.PodAffinityTerm {
		return corev1.PodAffinityTerm{TopologyKey: "zone", Namespaces: namespaces, NamespaceSelector: selector}
	}

	tests := []struct {
		name string
		sel  corev1.ScopedResourceSelectorRequirement
		pod  *corev1.Pod
		want bool
		err  string
	}{
		{"Terminating with deadline", exists(corev1.ResourceQuotaScopeTerminating), terminating, true, ""},
		{"Terminating with zero deadline", exists(corev1.ResourceQuotaScopeTerminating), zeroDeadline, true, ""},
		{"Terminating without deadline", exists(corev1.ResourceQuotaScopeTerminating), noClass, false, ""},
		{"NotTerminating without deadline", exists(corev1.ResourceQuotaScopeNotTerminating), noClass, true, ""},
		{"NotTerminating with deadline", exists(corev1.ResourceQuotaScopeNotTerminating), terminating, false, ""},
		{"BestEffort best-effort pod", exists(corev1.ResourceQuotaScopeBestEffort), bestEffort, true, ""},
		{"BestEffort burstable pod", exists(corev1.ResourceQuotaScopeBestEffort), burstable, false, ""},
		{"BestEffort uses status.qosClass", exists(corev1.ResourceQuotaScopeBestEffort), qosFromStatus, true, ""},
		{"NotBestEffort burstable pod", exists(corev1.ResourceQuotaScopeNotBestEffort), burstable, true, ""},
		{"NotBestEffort best-effort pod", exists(corev1.ResourceQuotaScopeNotBestEffort), bestEffort, false, ""},
		{"PriorityClass Exists with class", exists(corev1.ResourceQuotaScopePriorityClass), high, true, ""},
		{"PriorityClass Exists without class", exists(corev1.ResourceQuotaScopePriorityClass), noClass, false, ""},
		{"PriorityClass In listed", sel(corev1.ResourceQuotaScopePriorityClass, corev1.ScopeSelectorOpIn, "low", "high"), high, true, ""},
		{"PriorityClass In not listed", sel(corev1.ResourceQuotaScopePriorityClass, corev1.ScopeSelectorOpIn, "low"), high, false, ""},
		{"PriorityClass In without class", sel(corev1.ResourceQuotaScopePriorityClass, corev1.ScopeSelectorOpIn, "low"), noClass, false, ""},
		{"PriorityClass NotIn listed", sel(corev1.ResourceQuotaScopePriorityClass, corev1.ScopeSelectorOpNotIn, "high"), high, false, ""},
		{"PriorityClass NotIn not listed", sel(corev1.ResourceQuotaScopePriorityClass, corev1.ScopeSelectorOpNotIn, "low"), high, true, ""},
		{"PriorityClass NotIn without class", sel(corev1.ResourceQuotaScopePriorityClass, corev1.ScopeSelectorOpNotIn, "low"), noClass, true, ""},
		{"PriorityClass DoesNotExist without class", sel(corev1.ResourceQuotaScopePriorityClass, corev1.ScopeSelectorOpDoesNotExist), noClass, true, ""},
		{"PriorityClass DoesNotExist with class", sel(corev1.ResourceQuotaScopePriorityClass, corev1.ScopeSelectorOpDoesNotExist), high, false, ""},
		{"PriorityClass In with invalid value", sel(corev1.ResourceQuotaScopePriorityClass, corev1.ScopeSelectorOpIn, "not valid!"), high, false,
			`failed to parse and convert selector: values[0][PriorityClass]: Invalid value: "not valid!": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		{"PriorityClass bad operator", sel(corev1.ResourceQuotaScopePriorityClass, "Bogus"), high, false,
			`failed to parse and convert selector: "Bogus" is not a valid scope selector operator`},
		{"CrossNamespacePodAffinity without affinity", exists(corev1.ResourceQuotaScopeCrossNamespacePodAffinity), noClass, false, ""},
		{"CrossNamespacePodAffinity same-namespace term", exists(corev1.ResourceQuotaScopeCrossNamespacePodAffinity),
			affinity(&corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term(nil, nil)}}}), false, ""},
		{"CrossNamespacePodAffinity namespaces", exists(corev1.ResourceQuotaScopeCrossNamespacePodAffinity),
			affinity(&corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term([]string{"other"}, nil)}}}), true, ""},
		{"CrossNamespacePodAffinity empty namespaceSelector", exists(corev1.ResourceQuotaScopeCrossNamespacePodAffinity),
			affinity(&corev1.Affinity{PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: term(nil, &metav1.LabelSelector{})}}}}), true, ""},
		{"CrossNamespacePodAffinity anti-affinity required", exists(corev1.ResourceQuotaScopeCrossNamespacePodAffinity),
			affinity(&corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term([]string{"x"}, nil)}}}), true, ""},
		{"CrossNamespacePodAffinity anti-affinity preferred", exists(corev1.ResourceQuotaScopeCrossNamespacePodAffinity),
			affinity(&corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: term(nil, &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}})}}}}), true, ""},
		{"CrossNamespacePodAffinity node affinity only", exists(corev1.ResourceQuotaScopeCrossNamespacePodAffinity),
			affinity(&corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}), false, ""},
		{"VolumeAttributesClass never matches pods", exists(corev1.ResourceQuotaScopeVolumeAttributesClass), high, false, ""},
		{"unknown scope never matches", exists("CrossNamespaceAffinity"), high, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Pods{}.MatchesScope(tt.sel, tt.pod)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error:\n got %v\nwant %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPodConstraints(t *testing.T) {
	all := []corev1.ResourceName{"requests.cpu", "requests.memory", "limits.cpu", "limits.memory"}
	tests := []struct {
		name     string
		required []corev1.ResourceName
		pod      *corev1.Pod
		want     string
	}{
		{
			name:     "documentation example: nothing set",
			required: all,
			pod: &corev1.Pod{Spec: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "init-html"}},
				Containers:     []corev1.Container{{Name: "nginx"}},
			}},
			want: "must specify limits.cpu for: init-html,nginx; limits.memory for: init-html,nginx; requests.cpu for: init-html,nginx; requests.memory for: init-html,nginx",
		},
		{
			name:     "only the names the quota tracks are required",
			required: []corev1.ResourceName{"limits.memory", "pods", "requests.storage"},
			pod: &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
				container(t, "a", nil, []string{"memory=1Gi"}), container(t, "b", []string{"memory=1Gi"}, nil),
			}}},
			want: "must specify limits.memory for: b",
		},
		{
			name:     "bare cpu and memory need requests",
			required: []corev1.ResourceName{"cpu", "memory"},
			pod:      &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{container(t, "a", []string{"cpu=1"}, []string{"memory=1Gi"})}}},
			want:     "must specify memory for: a",
		},
		{
			name:     "everything set",
			required: all,
			pod: &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
				container(t, "a", []string{"cpu=1", "memory=1Gi"}, []string{"cpu=1", "memory=1Gi"}),
			}}},
		},
		{
			name:     "ephemeral-storage, hugepages and extended names are never required",
			required: []corev1.ResourceName{"requests.ephemeral-storage", "limits.ephemeral-storage", "hugepages-2Mi", "requests.nvidia.com/gpu"},
			pod:      &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}},
		},
		{
			name:     "pod-level resources exempt the pod",
			required: all,
			pod: &corev1.Pod{Spec: corev1.PodSpec{
				Resources:  &corev1.ResourceRequirements{Limits: rl(t, "cpu=1", "memory=1Gi")},
				Containers: []corev1.Container{{Name: "a"}},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Pods{}.Constraints(tt.required, tt.pod)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
