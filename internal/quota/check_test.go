package quota_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/evaluator"
	"github.com/quotad/quotad/internal/quota/quotatest"
)

var (
	podsGR   = schema.GroupResource{Resource: "pods"}
	svcGR    = schema.GroupResource{Resource: "services"}
	pvcGR    = schema.GroupResource{Resource: "persistentvolumeclaims"}
	cmGR     = schema.GroupResource{Resource: "configmaps"}
	deployGR = schema.GroupResource{Group: "apps", Resource: "deployments"}
	customGR = schema.GroupResource{Group: "example.com", Resource: "foos"}
	eventsGR = schema.GroupResource{Resource: "events"}
)

// rq builds a quota whose spec.hard and status.hard are hard, with status.used used.
func rq(t testing.TB, name string, hard, used []string) corev1.ResourceQuota {
	q := corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: "1"},
		Spec:       corev1.ResourceQuotaSpec{Hard: rl(t, hard...)},
		Status:     corev1.ResourceQuotaStatus{Hard: rl(t, hard...), Used: rl(t, used...)},
	}
	return q
}

func withScopes(q corev1.ResourceQuota, scopes ...corev1.ResourceQuotaScope) corev1.ResourceQuota {
	q.Spec.Scopes = scopes
	return q
}

func withSelector(q corev1.ResourceQuota, reqs ...corev1.ScopedResourceSelectorRequirement) corev1.ResourceQuota {
	q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: reqs}
	return q
}

// ctr builds a container with requests defaulted from limits, as the registry does
// before admission.
func ctr(t testing.TB, name string, requests, limits []string) corev1.Container {
	req := rl(t, requests...)
	lim := rl(t, limits...)
	for n, q := range lim {
		if _, ok := req[n]; !ok {
			req[n] = q.DeepCopy()
		}
	}
	return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}
}

func podOf(name string, containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: "7"},
		Spec:       corev1.PodSpec{Containers: containers},
	}
}

func create(gr schema.GroupResource, obj runtime.Object) quota.Request {
	return quota.Request{Operation: quota.Create, Resource: gr, Object: obj}
}

func update(gr schema.GroupResource, sub string, obj, old runtime.Object) quota.Request {
	return quota.Request{Operation: quota.Update, Resource: gr, Subresource: sub, Object: obj, OldObject: old}
}

func del(gr schema.GroupResource, old runtime.Object) quota.Request {
	return quota.Request{Operation: quota.Delete, Resource: gr, OldObject: old}
}

// describeError renders an error as the wire would carry it.
func describeError(err error) string {
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		s := se.Status()
		d := s.Details
		return fmt.Sprintf("%d %s group=%q kind=%q name=%q\n%s", s.Code, s.Reason, d.Group, d.Kind, d.Name, s.Message)
	}
	return "plain error (HTTP 500)\n" + err.Error()
}

var clusterServicesLimited = []quota.LimitedResource{{
	Resource: "pods",
	MatchScopes: []corev1.ScopedResourceSelectorRequirement{{
		ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"cluster-services"},
	}},
}}

func TestCheckRequestRefusals(t *testing.T) {
	reg := evaluator.NewRegistry()
	crossNS := podOf("with-affinity", ctr(t, "c", nil, nil))
	crossNS.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "zone", NamespaceSelector: &metav1.LabelSelector{}}},
	}}
	clusterServices := podOf("critical", ctr(t, "c", nil, []string{"cpu=100m", "memory=64Mi"}))
	clusterServices.Spec.PriorityClassName = "cluster-services"
	generated := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "cfg-", Namespace: "ns"}}
	goldPVC := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "ns"},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To("gold"),
			Resources:        corev1.VolumeResourceRequirements{Requests: rl(t, "storage=10Gi")},
		},
	}
	lb := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", ResourceVersion: "3"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}}}
	clusterIP := lb.DeepCopy()
	clusterIP.Spec.Type = corev1.ServiceTypeClusterIP

	tests := []struct {
		name    string
		quotas  []corev1.ResourceQuota
		req     quota.Request
		limited []quota.LimitedResource
	}{
		{
			name:   "exceeded quota (documentation quota-mem-cpu example)",
			quotas: []corev1.ResourceQuota{rq(t, "mem-cpu-demo", []string{"requests.cpu=1", "requests.memory=1Gi", "limits.cpu=2", "limits.memory=2Gi"}, []string{"requests.cpu=800m", "requests.memory=600Mi", "limits.cpu=800m", "limits.memory=800Mi"})},
			req:    create(podsGR, podOf("quota-mem-cpu-demo-2", ctr(t, "c", []string{"cpu=100m", "memory=700Mi"}, []string{"cpu=800m", "memory=1Gi"}))),
		},
		{
			name:   "exceeded quota lists every exceeded name",
			quotas: []corev1.ResourceQuota{rq(t, "compute", []string{"pods=1", "requests.cpu=1", "requests.memory=1Gi"}, []string{"pods=1", "requests.cpu=1", "requests.memory=0"})},
			req:    create(podsGR, podOf("p", ctr(t, "c", []string{"cpu=1", "memory=100Mi"}, nil))),
		},
		{
			name: "first exceeded quota in order refuses",
			quotas: []corev1.ResourceQuota{
				rq(t, "roomy", []string{"pods=10"}, []string{"pods=0"}),
				rq(t, "tight-a", []string{"pods=1"}, []string{"pods=1"}),
				rq(t, "tight-b", []string{"count/pods=0"}, []string{"count/pods=0"}),
			},
			req: create(podsGR, podOf("p", ctr(t, "c", nil, nil))),
		},
		{
			name:   "must specify (documentation example)",
			quotas: []corev1.ResourceQuota{rq(t, "compute-resources", []string{"requests.cpu=1", "requests.memory=1Gi", "limits.cpu=2", "limits.memory=2Gi"}, []string{"requests.cpu=0", "requests.memory=0", "limits.cpu=0", "limits.memory=0"})},
			req: create(podsGR, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "ns"}, Spec: corev1.PodSpec{
				InitContainers: []corev1.Container{{Name: "init-html"}}, Containers: []corev1.Container{{Name: "nginx"}},
			}}),
		},
		{
			name:   "must specify: requests only with a limits quota",
			quotas: []corev1.ResourceQuota{rq(t, "limits", []string{"limits.cpu=2"}, []string{"limits.cpu=0"})},
			req:    create(podsGR, podOf("p", ctr(t, "c", []string{"cpu=500m"}, nil))),
		},
		{
			name:   "status unknown for quota",
			quotas: []corev1.ResourceQuota{rq(t, "fresh", []string{"pods=10", "requests.cpu=1", "services=1"}, []string{"pods=0"})},
			req:    create(podsGR, podOf("p", ctr(t, "c", []string{"cpu=100m"}, nil))),
		},
		{
			name:   "quota usage is negative",
			quotas: []corev1.ResourceQuota{rq(t, "q", []string{"pods=10"}, []string{"pods=0"})},
			req:    create(podsGR, podOf("negative", ctr(t, "c", []string{"cpu=-1", "memory=-1Mi"}, nil))),
		},
		{
			name:    "insufficient quota to consume",
			quotas:  []corev1.ResourceQuota{rq(t, "plain-storage", []string{"requests.storage=100Gi"}, []string{"requests.storage=0"})},
			req:     create(pvcGR, goldPVC),
			limited: []quota.LimitedResource{{Resource: "persistentvolumeclaims", MatchContains: []string{".storageclass.storage.k8s.io/requests.storage", "persistentvolumeclaims"}}},
		},
		{
			name:    "insufficient quota to match these scopes (no quota at all)",
			req:     create(podsGR, clusterServices),
			limited: clusterServicesLimited,
		},
		{
			name:    "insufficient quota to match these scopes (CrossNamespacePodAffinity)",
			quotas:  []corev1.ResourceQuota{rq(t, "pods", []string{"pods=10"}, []string{"pods=0"})},
			req:     create(podsGR, crossNS),
			limited: []quota.LimitedResource{{Resource: "pods", MatchScopes: []corev1.ScopedResourceSelectorRequirement{{ScopeName: corev1.ResourceQuotaScopeCrossNamespacePodAffinity, Operator: corev1.ScopeSelectorOpExists}}}},
		},
		{
			name:   "disable-cross-namespace-affinity quota refuses such pods",
			quotas: []corev1.ResourceQuota{withSelector(rq(t, "disable-cross-namespace-affinity", []string{"pods=0"}, []string{"pods=0"}), corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopeCrossNamespacePodAffinity, Operator: corev1.ScopeSelectorOpExists})},
			req:    create(podsGR, crossNS),
		},
		{
			name:   "error matching scopes of quota",
			quotas: []corev1.ResourceQuota{withSelector(rq(t, "bad-selector", []string{"pods=10"}, []string{"pods=0"}), corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"not valid!"}})},
			req:    create(podsGR, podOf("p", ctr(t, "c", nil, nil))),
		},
		{
			name:   "update without the old object",
			quotas: []corev1.ResourceQuota{rq(t, "q", []string{"services=10"}, []string{"services=1"})},
			req:    quota.Request{Operation: quota.Update, Resource: svcGR, Name: "web", Object: lb},
		},
		{
			name:   "service type change exceeding loadbalancers",
			quotas: []corev1.ResourceQuota{rq(t, "object-counts", []string{"services=10", "services.loadbalancers=0"}, []string{"services=1", "services.loadbalancers=0"})},
			req:    update(svcGR, "", lb, clusterIP),
		},
		{
			name:   "object count, name from generateName",
			quotas: []corev1.ResourceQuota{rq(t, "object-counts", []string{"configmaps=1", "count/configmaps=5"}, []string{"configmaps=1", "count/configmaps=1"})},
			req:    create(cmGR, generated),
		},
		{
			name:   "object count of a group resource, name from the request",
			quotas: []corev1.ResourceQuota{rq(t, "test", []string{"count/deployments.apps=2"}, []string{"count/deployments.apps=2"})},
			req:    quota.Request{Operation: quota.Create, Resource: deployGR, Name: "nginx", Object: &unstructured.Unstructured{}},
		},
		{
			name:   "custom resource count, no name anywhere",
			quotas: []corev1.ResourceQuota{rq(t, "crs", []string{"count/foos.example.com=0"}, []string{"count/foos.example.com=0"})},
			req:    create(customGR, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Foo"}}),
		},
		{
			name:   "PVC resize beyond requests.storage",
			quotas: []corev1.ResourceQuota{rq(t, "storage", []string{"requests.storage=15Gi"}, []string{"requests.storage=10Gi"})},
			req: func() quota.Request {
				old := goldPVC.DeepCopy()
				old.ResourceVersion = "4"
				bigger := old.DeepCopy()
				bigger.Spec.Resources.Requests = rl(t, "storage=20Gi")
				return update(pvcGR, "", bigger, old)
			}(),
		},
	}
	g := newGolden(t, "check_refusals.golden")
	for _, tt := range tests {
		snapshot := deepCopyQuotas(tt.quotas)
		changed, err := quota.CheckRequest(tt.quotas, tt.req, reg, tt.limited)
		if err == nil {
			t.Errorf("%s: admitted, changed %d quotas", tt.name, len(changed))
			continue
		}
		if changed != nil {
			t.Errorf("%s: refusal returned quotas", tt.name)
		}
		if !reflect.DeepEqual(snapshot, tt.quotas) {
			t.Errorf("%s: input quotas were modified", tt.name)
		}
		g.Add(tt.name, describeError(err))
	}
	g.Check()
}

func deepCopyQuotas(in []corev1.ResourceQuota) []corev1.ResourceQuota {
	if in == nil {
		return nil
	}
	out := make([]corev1.ResourceQuota, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}

// showChanged renders the returned quotas as "name: used".
func showChanged(changed []corev1.ResourceQuota) string {
	if len(changed) == 0 {
		return "(no change)"
	}
	var lines []string
	for _, q := range changed {
		lines = append(lines, q.Name+": "+show(q.Status.Used))
	}
	return strings.Join(lines, "\n")
}

func TestCheckRequestAccounting(t *testing.T) {
	reg := evaluator.NewRegistry()
	compute := func(used ...string) corev1.ResourceQuota {
		return rq(t, "compute", []string{"pods=10", "count/pods=10", "requests.cpu=4", "requests.memory=4Gi", "limits.cpu=8", "limits.memory=8Gi"}, used)
	}
	zero := []string{"pods=0", "count/pods=0", "requests.cpu=0", "requests.memory=0", "limits.cpu=0", "limits.memory=0"}
	running := podOf("web", ctr(t, "c", []string{"cpu=500m", "memory=512Mi"}, []string{"cpu=1", "memory=1Gi"}))
	running.Status.Phase = corev1.PodRunning
	succeeded := running.DeepCopy()
	succeeded.Status.Phase = corev1.PodSucceeded
	afterCreate := []string{"pods=1", "count/pods=1", "requests.cpu=500m", "requests.memory=512Mi", "limits.cpu=1", "limits.memory=1Gi"}

	svc := func(typ corev1.ServiceType, ports int) *corev1.Service {
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", ResourceVersion: "3"}, Spec: corev1.ServiceSpec{Type: typ}}
		for i := range ports {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Port: int32(80 + i)})
		}
		return s
	}
	objectCounts := rq(t, "object-counts", []string{"services=10", "services.loadbalancers=2", "services.nodeports=5", "configmaps=10", "count/configmaps=10"},
		[]string{"services=1", "services.loadbalancers=0", "services.nodeports=0", "configmaps=3", "count/configmaps=3"})

	pvc := func(request, allocated string) *corev1.PersistentVolumeClaim {
		p := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "ns", ResourceVersion: "9"},
			Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("gold"),
				Resources: corev1.VolumeResourceRequirements{Requests: rl(t, "storage="+request)}},
		}
		if allocated != "" {
			p.Status.AllocatedResources = rl(t, "storage="+allocated)
		}
		return p
	}
	storage := rq(t, "storage", []string{"requests.storage=10Gi", "gold.storageclass.storage.k8s.io/requests.storage=10Gi", "persistentvolumeclaims=5"},
		[]string{"requests.storage=5Gi", "gold.storageclass.storage.k8s.io/requests.storage=5Gi", "persistentvolumeclaims=1"})

	terminating := running.DeepCopy()
	terminating.Spec.ActiveDeadlineSeconds = ptr.To[int64](60)
	scoped := []corev1.ResourceQuota{
		withScopes(rq(t, "terminating", []string{"pods=5", "requests.cpu=2"}, []string{"pods=1", "requests.cpu=500m"}), corev1.ResourceQuotaScopeTerminating),
		withScopes(rq(t, "not-terminating", []string{"pods=5", "requests.cpu=2"}, []string{"pods=0", "requests.cpu=0"}), corev1.ResourceQuotaScopeNotTerminating),
	}
	bestEffortPod := podOf("be", ctr(t, "c", nil, nil))
	priority := func(class string) *corev1.Pod {
		p := podOf("prio", ctr(t, "c", []string{"cpu=500m", "memory=10Gi"}, nil))
		p.Spec.PriorityClassName = class
		return p
	}
	priorityQuotas := []corev1.ResourceQuota{
		withSelector(rq(t, "pods-high", []string{"cpu=1k", "memory=200Gi", "pods=10"}, []string{"cpu=0", "memory=0", "pods=0"}),
			corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"high"}}),
		withSelector(rq(t, "pods-medium", []string{"cpu=10", "memory=20Gi", "pods=10"}, []string{"cpu=0", "memory=0", "pods=0"}),
			corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"medium"}}),
		withSelector(rq(t, "pods-low", []string{"cpu=5", "memory=10Gi", "pods=10"}, []string{"cpu=0", "memory=0", "pods=0"}),
			corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"low"}}),
	}
	overHard := rq(t, "lowered", []string{"pods=1", "requests.cpu=100m"}, []string{"pods=3", "requests.cpu=1500m"})

	tests := []struct {
		name   string
		quotas []corev1.ResourceQuota
		req    quota.Request
		want   string
	}{
		{"create charges every matching name", []corev1.ResourceQuota{compute(zero...)}, create(podsGR, running),
			"compute: count/pods=1 limits.cpu=1 limits.memory=1Gi pods=1 requests.cpu=500m requests.memory=512Mi"},
		{"delete credits exactly", []corev1.ResourceQuota{compute(afterCreate...)}, del(podsGR, running),
			"compute: count/pods=0 limits.cpu=0 limits.memory=0 pods=0 requests.cpu=0 requests.memory=0"},
		{"pod reaching Succeeded (status) credits compute, keeps count/pods", []corev1.ResourceQuota{compute(afterCreate...)}, update(podsGR, "status", succeeded, running),
			"compute: count/pods=1 limits.cpu=0 limits.memory=0 pods=0 requests.cpu=0 requests.memory=0"},
		{"deleting a succeeded pod credits count/pods only", []corev1.ResourceQuota{compute("pods=0", "count/pods=1", "requests.cpu=0", "requests.memory=0", "limits.cpu=0", "limits.memory=0")}, del(podsGR, succeeded),
			"compute: count/pods=0 limits.cpu=0 limits.memory=0 pods=0 requests.cpu=0 requests.memory=0"},
		{"update changing nothing changes nothing", []corev1.ResourceQuota{compute(afterCreate...)}, update(podsGR, "", running, running), "(no change)"},
		{"update changing nothing is admitted even over hard", []corev1.ResourceQuota{overHard}, update(podsGR, "", running, running), "(no change)"},
		{"delete is admitted over hard", []corev1.ResourceQuota{overHard}, del(podsGR, running), "lowered: pods=2 requests.cpu=1"},
		{"request only: charged the request", []corev1.ResourceQuota{rq(t, "req", []string{"requests.cpu=1", "cpu=1"}, []string{"requests.cpu=0", "cpu=0"})},
			create(podsGR, podOf("p", ctr(t, "c", []string{"cpu=250m"}, nil))), "req: cpu=250m requests.cpu=250m"},
		{"limit only: requests default to limits, both charged", []corev1.ResourceQuota{rq(t, "both", []string{"requests.cpu=1", "limits.cpu=1"}, []string{"requests.cpu=0", "limits.cpu=0"})},
			create(podsGR, podOf("p", ctr(t, "c", nil, []string{"cpu=300m"}))), "both: limits.cpu=300m requests.cpu=300m"},
		{"untracked names are not charged", []corev1.ResourceQuota{rq(t, "pods-only", []string{"pods=2"}, []string{"pods=0"})},
			create(podsGR, running), "pods-only: pods=1"},
		{"quota with empty status.hard matches nothing", []corev1.ResourceQuota{{ObjectMeta: metav1.ObjectMeta{Name: "new"}, Spec: corev1.ResourceQuotaSpec{Hard: rl(t, "pods=0")}}},
			create(podsGR, running), "(no change)"},
		{"unknown qualified names stay untouched", []corev1.ResourceQuota{rq(t, "mixed", []string{"example.com/foo=1", "pods=5"}, []string{"pods=0"})},
			create(podsGR, running), "mixed: pods=1"},
		{"service ClusterIP to LoadBalancer charges", []corev1.ResourceQuota{objectCounts}, update(svcGR, "", svc(corev1.ServiceTypeLoadBalancer, 2), svc(corev1.ServiceTypeClusterIP, 2)),
			"object-counts: configmaps=3 count/configmaps=3 services=1 services.loadbalancers=1 services.nodeports=2"},
		{"service LoadBalancer to ClusterIP credits", []corev1.ResourceQuota{rq(t, "object-counts", []string{"services=10", "services.loadbalancers=2", "services.nodeports=5"}, []string{"services=1", "services.loadbalancers=1", "services.nodeports=2"})},
			update(svcGR, "", svc(corev1.ServiceTypeClusterIP, 2), svc(corev1.ServiceTypeLoadBalancer, 2)),
			"object-counts: services=1 services.loadbalancers=0 services.nodeports=0"},
		{"service delete credits", []corev1.ResourceQuota{rq(t, "object-counts", []string{"services=10", "count/services=10"}, []string{"services=2", "count/services=2"})},
			del(svcGR, svc(corev1.ServiceTypeClusterIP, 1)), "object-counts: count/services=1 services=1"},
		{"configmap delete credits count and legacy name", []corev1.ResourceQuota{objectCounts}, del(cmGR, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}),
			"object-counts: configmaps=2 count/configmaps=2 services=1 services.loadbalancers=0 services.nodeports=0"},
		{"configmap update changes no count", []corev1.ResourceQuota{objectCounts}, update(cmGR, "", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: "2"}}, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: "1"}}),
			"(no change)"},
		{"custom resource create and count", []corev1.ResourceQuota{rq(t, "crs", []string{"count/foos.example.com=3"}, []string{"count/foos.example.com=1"})},
			create(customGR, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Foo", "metadata": map[string]any{"name": "f"}}}),
			"crs: count/foos.example.com=2"},
		{"ignored resources are never charged", []corev1.ResourceQuota{rq(t, "q", []string{"count/events=0"}, []string{"count/events=0"})},
			create(eventsGR, &corev1.Event{}), "(no change)"},
		{"PVC resize via allocatedResources in status within hard is charged", []corev1.ResourceQuota{storage},
			update(pvcGR, "status", pvc("5Gi", "8Gi"), pvc("5Gi", "")),
			"storage: gold.storageclass.storage.k8s.io/requests.storage=8Gi persistentvolumeclaims=1 requests.storage=8Gi"},
		{"PVC spec resize within hard", []corev1.ResourceQuota{storage}, update(pvcGR, "", pvc("8Gi", ""), pvc("5Gi", "")),
			"storage: gold.storageclass.storage.k8s.io/requests.storage=8Gi persistentvolumeclaims=1 requests.storage=8Gi"},
		{"PVC delete credits", []corev1.ResourceQuota{storage}, del(pvcGR, pvc("5Gi", "")),
			"storage: gold.storageclass.storage.k8s.io/requests.storage=0 persistentvolumeclaims=0 requests.storage=0"},
		{"scoped quotas never count services", []corev1.ResourceQuota{withScopes(rq(t, "be", []string{"pods=5"}, []string{"pods=0"}), corev1.ResourceQuotaScopeBestEffort),
			withScopes(rq(t, "be-services", []string{"count/services=5"}, []string{"count/services=0"}), corev1.ResourceQuotaScopeBestEffort)},
			create(svcGR, svc(corev1.ServiceTypeClusterIP, 1)), "(no change)"},
		{"BestEffort scope counts best-effort pods only", []corev1.ResourceQuota{withScopes(rq(t, "be", []string{"pods=5"}, []string{"pods=0"}), corev1.ResourceQuotaScopeBestEffort),
			withScopes(rq(t, "not-be", []string{"pods=5"}, []string{"pods=0"}), corev1.ResourceQuotaScopeNotBestEffort)},
			create(podsGR, bestEffortPod), "be: pods=1"},
		{"pod leaving the Terminating scope moves between quotas", scoped, update(podsGR, "", running, terminating),
			"terminating: pods=0 requests.cpu=0\nnot-terminating: pods=1 requests.cpu=500m"},
		{"priority class selects one quota (documentation example)", priorityQuotas, create(podsGR, priority("high")), "pods-high: cpu=500m memory=10Gi pods=1"},
		{"pod without priority class matches none", priorityQuotas, create(podsGR, priority("")), "(no change)"},
	}
	g := newGolden(t, "check_accounting.golden")
	for _, tt := range tests {
		snapshot := deepCopyQuotas(tt.quotas)
		changed, err := quota.CheckRequest(tt.quotas, tt.req, reg, nil)
		if err != nil {
			t.Errorf("%s: refused: %v", tt.name, err)
			continue
		}
		if got := showChanged(changed); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
		if !reflect.DeepEqual(snapshot, tt.quotas) {
			t.Errorf("%s: input quotas were modified", tt.name)
		}
		g.Add(tt.name, showChanged(changed))
	}
	g.Check()
}

func TestCheckRequestMore(t *testing.T) {
	reg := evaluator.NewRegistry()
	clusterServicesSelector := corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"cluster-services"}}
	critical := podOf("critical", ctr(t, "c", nil, []string{"cpu=100m", "memory=64Mi"}))
	critical.Spec.PriorityClassName = "cluster-services"
	plain := podOf("plain", ctr(t, "c", nil, []string{"cpu=100m", "memory=64Mi"}))
	noRV := plain.DeepCopy()
	noRV.ResourceVersion = ""
	badSelector := withSelector(rq(t, "bad-selector", []string{"pods=10"}, []string{"pods=0"}),
		corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"not valid!"}})

	tests := []struct {
		name    string
		quotas  []corev1.ResourceQuota
		req     quota.Request
		limited []quota.LimitedResource
		want    string
	}{
		{
			name:    "cluster-services pod admitted where a scope-only quota covers it",
			quotas:  []corev1.ResourceQuota{withSelector(rq(t, "pods-cluster-services", nil, nil), clusterServicesSelector)},
			req:     create(podsGR, critical),
			limited: clusterServicesLimited,
			want:    "(no change)",
		},
		{
			name:    "cluster-services pod charged to the covering quota",
			quotas:  []corev1.ResourceQuota{withSelector(rq(t, "pods-cluster-services", []string{"pods=10"}, []string{"pods=1"}), clusterServicesSelector)},
			req:     create(podsGR, critical),
			limited: clusterServicesLimited,
			want:    "pods-cluster-services: pods=2",
		},
		{
			name:    "pods outside the limited scope need no covering quota",
			req:     create(podsGR, plain),
			limited: clusterServicesLimited,
			want:    "(no change)",
		},
		{
			name:    "limited scopes are not checked for requests that consume nothing more",
			quotas:  []corev1.ResourceQuota{rq(t, "q", []string{"pods=5"}, []string{"pods=1"})},
			req:     update(podsGR, "", critical, critical),
			limited: clusterServicesLimited,
			want:    "(no change)",
		},
		{
			name:    "deletes are never refused by limited scopes",
			quotas:  []corev1.ResourceQuota{rq(t, "q", []string{"pods=5"}, []string{"pods=1"})},
			req:     del(podsGR, critical),
			limited: clusterServicesLimited,
			want:    "q: pods=0",
		},
		{
			name: "every matching quota is charged",
			quotas: []corev1.ResourceQuota{
				rq(t, "a", []string{"pods=5"}, []string{"pods=1"}),
				rq(t, "b", []string{"limits.memory=1Gi", "requests.cpu=1"}, []string{"limits.memory=0", "requests.cpu=0"}),
				rq(t, "c", []string{"services=1"}, []string{"services=0"}),
			},
			req:  create(podsGR, plain),
			want: "a: pods=2\nb: limits.memory=64Mi requests.cpu=100m",
		},
		{
			name:   "create on update (old object without resourceVersion) is charged in full",
			quotas: []corev1.ResourceQuota{rq(t, "a", []string{"pods=5"}, []string{"pods=1"})},
			req:    update(podsGR, "", plain, noRV),
			want:   "a: pods=2",
		},
		{
			name:   "a credit for a name without a used entry leaves it absent",
			quotas: []corev1.ResourceQuota{rq(t, "a", []string{"pods=5", "requests.cpu=1"}, []string{"pods=1"})},
			req:    del(podsGR, plain),
			want:   "a: pods=0",
		},
		{
			name:   "a quota whose selector cannot be evaluated is skipped on update",
			quotas: []corev1.ResourceQuota{badSelector},
			req:    update(podsGR, "", plain, plain),
			want:   "(no change)",
		},
		{
			name:   "a quota whose selector cannot be evaluated gets no credit on delete",
			quotas: []corev1.ResourceQuota{badSelector},
			req:    del(podsGR, plain),
			want:   "(no change)",
		},
		{
			name:   "subresources that carry other kinds are not handled",
			quotas: []corev1.ResourceQuota{rq(t, "a", []string{"pods=0"}, []string{"pods=0"})},
			req:    quota.Request{Operation: quota.Create, Resource: podsGR, Subresource: "binding", Object: &corev1.Binding{}},
			want:   "(no change)",
		},
		{
			name:   "pod status update raising usage within hard is charged",
			quotas: []corev1.ResourceQuota{rq(t, "a", []string{"pods=2"}, []string{"pods=1"})},
			req: func() quota.Request {
				failed := plain.DeepCopy()
				failed.Status.Phase = corev1.PodFailed
				return update(podsGR, "status", plain, failed)
			}(),
			want: "a: pods=2",
		},
	}
	for _, tt := range tests {
		changed, err := quota.CheckRequest(tt.quotas, tt.req, reg, tt.limited)
		if err != nil {
			t.Errorf("%s: refused: %v", tt.name, err)
			continue
		}
		if got := showChanged(changed); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

func TestCheckRequestDryRunIsExact(t *testing.T) {
	// Dry-run is the caller's concern: the same request gives the same decision and the
	// same returned quotas every time, and the inputs never change.
	reg := evaluator.NewRegistry()
	quotas := []corev1.ResourceQuota{rq(t, "a", []string{"pods=2"}, []string{"pods=1"})}
	req := create(podsGR, podOf("p", ctr(t, "c", nil, nil)))
	first, err1 := quota.CheckRequest(quotas, req, reg, nil)
	second, err2 := quota.CheckRequest(quotas, req, reg, nil)
	if err1 != nil || err2 != nil || showChanged(first) != "a: pods=2" || !reflect.DeepEqual(first, second) {
		t.Fatalf("got %v %v / %v %v", showChanged(first), err1, showChanged(second), err2)
	}
	if show(quotas[0].Status.Used) != "pods=1" {
		t.Fatal("input modified")
	}
	first[0].Status.Used["pods"] = rl(t, "pods=9")["pods"]
	if show(quotas[0].Status.Used) != "pods=1" {
		t.Fatal("returned quotas share maps with the input")
	}
}

func TestCheckRequestBadRequests(t *testing.T) {
	reg := evaluator.NewRegistry()
	for _, tt := range []struct {
		req  quota.Request
		want string
	}{
		{quota.Request{Operation: quota.Create, Resource: podsGR}, "quota: CREATE request without an object"},
		{quota.Request{Operation: quota.Update, Resource: podsGR, OldObject: &corev1.Pod{}}, "quota: UPDATE request without an object"},
		{quota.Request{Operation: quota.Delete, Resource: podsGR, Name: "p"}, `pods "p" is forbidden: unable to get previous usage since prior version of object was not found`},
		{quota.Request{Operation: "CONNECT", Resource: podsGR}, `quota: unsupported operation "CONNECT"`},
		{quota.Request{Operation: quota.Create, Resource: podsGR, Object: &corev1.Service{}}, "expect *v1.Pod, got *v1.Service"},
	} {
		_, err := quota.CheckRequest(nil, tt.req, reg, nil)
		if err == nil || err.Error() != tt.want {
			t.Errorf("got %v, want %s", err, tt.want)
		}
	}
}

// TestCheckRequestStoredBeyondBound: quotas and objects stored before quantities were
// bounded (written straight to etcd) are charged and refused as their values say, and a
// check costs what a normal one does (Quantity.Cmp against hard 1e1000000000 scales by a
// billion-digit power of ten and takes hours).
func TestCheckRequestStoredBeyondBound(t *testing.T) {
	reg := evaluator.NewRegistry()
	hugePod := podOf("huge", ctr(t, "c", []string{"cpu=1e1000000000"}, nil))
	tests := []struct {
		name   string
		quotas []corev1.ResourceQuota
		req    quota.Request
		want   string
	}{
		{
			name:   "huge hard admits and charges",
			quotas: []corev1.ResourceQuota{rq(t, "q", []string{"pods=1e1000000000", "requests.cpu=1e10000000"}, []string{"pods=3", "requests.cpu=1"})},
			req:    create(podsGR, podOf("p", ctr(t, "c", []string{"cpu=250m"}, nil))),
			want:   "q: pods=4 requests.cpu=1250m",
		},
		{
			name:   "huge used refuses",
			quotas: []corev1.ResourceQuota{rq(t, "q", []string{"pods=10"}, []string{"pods=1e1000000000"})},
			req:    create(podsGR, podOf("p", ctr(t, "c", nil, nil))),
			want:   "403 Forbidden group=\"\" kind=\"pods\" name=\"p\"\npods \"p\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=10e999999999, limited: pods=10",
		},
		{
			name:   "a huge negative used absorbs a charge (nothing to write)",
			quotas: []corev1.ResourceQuota{rq(t, "q", []string{"pods=10"}, []string{"pods=-1e10000000"})},
			req:    create(podsGR, podOf("p", ctr(t, "c", nil, nil))),
			want:   "",
		},
		{
			name:   "a stored pod beyond the bound is credited on delete",
			quotas: []corev1.ResourceQuota{rq(t, "q", []string{"requests.cpu=1e10000000", "pods=5"}, []string{"requests.cpu=1e1000000000", "pods=1"})},
			req:    del(podsGR, hugePod),
			want:   "q: pods=0 requests.cpu=0",
		},
		{
			name:   "a pod beyond the bound exceeds a huge hard",
			quotas: []corev1.ResourceQuota{rq(t, "q", []string{"requests.cpu=1e10000000"}, []string{"requests.cpu=0"})},
			req:    create(podsGR, hugePod),
			want:   "403 Forbidden group=\"\" kind=\"pods\" name=\"huge\"\npods \"huge\" is forbidden: exceeded quota: q, requested: requests.cpu=10e999999999, used: requests.cpu=0, limited: requests.cpu=10e9999999",
		},
	}
	for _, tt := range tests {
		quotatest.Within(t, quotatest.StallBound, tt.name, func() error {
			changed, err := quota.CheckRequest(deepCopyQuotas(tt.quotas), tt.req, reg, nil)
			got := ""
			if err != nil {
				got = describeError(err)
			} else {
				for _, q := range changed {
					got += q.Name + ": " + quotatest.Show(q.Status.Used)
				}
			}
			if got != tt.want {
				return fmt.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			return nil
		})
	}
}
