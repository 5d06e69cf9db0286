package quota_test

import (
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/evaluator"
)

// namespaceObjects is a namespace's content for CalculateUsage.
func namespaceObjects(t *testing.T) map[schema.GroupResource][]runtime.Object {
	running := podOf("a", ctr(t, "c", []string{"cpu=500m", "memory=256Mi"}, []string{"cpu=1", "memory=512Mi"}))
	bestEffort := podOf("b", ctr(t, "c", nil, nil))
	done := podOf("c", ctr(t, "c", []string{"cpu=2"}, nil))
	done.Status.Phase = corev1.PodSucceeded
	high := podOf("d", ctr(t, "c", []string{"cpu=250m"}, nil))
	high.Spec.PriorityClassName = "high"
	custom := func(kind, name string) runtime.Object {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": kind, "metadata": map[string]any{"name": name, "namespace": "ns"}}}
	}
	return map[schema.GroupResource][]runtime.Object{
		{Resource: "pods"}: {running, bestEffort, done, high},
		{Resource: "services"}: {
			&corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}},
			&corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}, {Port: 443}}}},
		},
		{Resource: "persistentvolumeclaims"}: {
			&corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("gold"), Resources: corev1.VolumeResourceRequirements{Requests: rl(t, "storage=10Gi")}}},
			&corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: rl(t, "storage=5Gi")}}},
		},
		{Resource: "configmaps"}:                 {&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt"}}, &corev1.ConfigMap{}},
		{Resource: "resourcequotas"}:             {&corev1.ResourceQuota{}},
		{Group: "apps", Resource: "deployments"}: {custom("Deployment", "nginx")},
		{Group: "apps", Resource: "replicasets"}: {custom("ReplicaSet", "nginx-1"), custom("ReplicaSet", "nginx-2")},
		{Group: "example.com", Resource: "bars"}: {custom("Bar", "x"), custom("Bar", "y")},
	}
}

func TestCalculateUsage(t *testing.T) {
	reg := evaluator.NewRegistry()
	objects := namespaceObjects(t)
	high := corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"high"}}
	tests := []struct {
		name      string
		quota     corev1.ResourceQuota
		want      string
		wantLists string
	}{
		{
			name: "every tracked name, zero where nothing exists, unknown names absent",
			quota: rq(t, "all", []string{
				"pods=100", "count/pods=100", "cpu=10", "requests.cpu=10", "limits.cpu=10", "memory=10Gi", "limits.memory=10Gi",
				"requests.nvidia.com/gpu=4", "hugepages-2Mi=1Gi", "services=10", "count/services=10", "services.loadbalancers=10",
				"services.nodeports=10", "persistentvolumeclaims=10", "requests.storage=1Ti",
				"gold.storageclass.storage.k8s.io/requests.storage=1Ti", "gold.storageclass.storage.k8s.io/persistentvolumeclaims=10",
				"configmaps=10", "count/configmaps=10", "secrets=10", "count/secrets=10", "resourcequotas=10", "replicationcontrollers=10",
				"count/deployments.apps=5", "count/replicasets.apps=5", "count/bars.example.com=5", "count/foos.example.com=5",
				"example.com/unknown=1", "count/events=5",
			}, nil),
			want: "configmaps=2 count/bars.example.com=2 count/configmaps=2 count/deployments.apps=1 count/pods=4 count/replicasets.apps=2 " +
				"count/secrets=0 count/services=2 cpu=750m gold.storageclass.storage.k8s.io/persistentvolumeclaims=1 " +
				"gold.storageclass.storage.k8s.io/requests.storage=10Gi hugepages-2Mi=0 limits.cpu=1 limits.memory=512Mi memory=256Mi " +
				"persistentvolumeclaims=2 pods=3 replicationcontrollers=0 requests.cpu=750m requests.nvidia.com/gpu=0 requests.storage=15Gi " +
				"resourcequotas=1 secrets=0 services=2 services.loadbalancers=1 services.nodeports=2",
			wantLists: "/configmaps /persistentvolumeclaims /pods /replicationcontrollers /resourcequotas /secrets /services apps/deployments apps/replicasets example.com/bars example.com/foos",
		},
		{
			name:      "BestEffort scope",
			quota:     withScopes(rq(t, "be", []string{"pods=10", "count/services=10"}, nil), corev1.ResourceQuotaScopeBestEffort),
			want:      "count/services=0 pods=1",
			wantLists: "/pods /services",
		},
		{
			name:      "NotBestEffort scope counts non-terminal pods only under pods",
			quota:     withScopes(rq(t, "not-be", []string{"pods=10", "count/pods=10", "requests.cpu=10"}, nil), corev1.ResourceQuotaScopeNotBestEffort),
			want:      "count/pods=3 pods=2 requests.cpu=750m",
			wantLists: "/pods",
		},
		{
			name:      "priority class selector",
			quota:     withSelector(rq(t, "pods-high", []string{"cpu=1k", "pods=10"}, nil), high),
			want:      "cpu=250m pods=1",
			wantLists: "/pods",
		},
		{
			name:      "empty status.hard tracks nothing",
			quota:     corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Hard: rl(t, "pods=1")}},
			want:      "",
			wantLists: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var listed []string
			list := func(gr schema.GroupResource) ([]runtime.Object, error) {
				listed = append(listed, gr.Group+"/"+gr.Resource)
				if gr == (schema.GroupResource{Group: "example.com", Resource: "foos"}) {
					return nil, fmt.Errorf("listing foos: %w", quota.ErrResourceNotServed)
				}
				return objects[gr], nil
			}
			got, err := quota.CalculateUsage(&tt.quota, reg, list)
			if err != nil {
				t.Fatal(err)
			}
			if s := show(got); s != tt.want {
				t.Errorf("usage:\n got %s\nwant %s", s, tt.want)
			}
			var lists []string
			for _, gr := range quota.GroupResourcesToList(&tt.quota, reg) {
				lists = append(lists, gr.Group+"/"+gr.Resource)
			}
			if fmt.Sprint(lists) != fmt.Sprint(listed) || joinSpace(lists) != tt.wantLists {
				t.Errorf("lists:\n listed %v\n needed %v\n want   %s", listed, lists, tt.wantLists)
			}
		})
	}
}

func joinSpace(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

func TestCalculateUsageListError(t *testing.T) {
	boom := errors.New("etcd unavailable")
	q := rq(t, "q", []string{"pods=1"}, nil)
	_, err := quota.CalculateUsage(&q, evaluator.NewRegistry(), func(schema.GroupResource) ([]runtime.Object, error) { return nil, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
}

// TestCalculateUsageAgreesWithCheckRequest creates every object of the namespace one by
// one through CheckRequest, starting from the recomputed usage of an empty namespace, and
// checks the charged usage equals the recomputation; then deletes them all and checks it
// returns to the empty usage.
func TestCalculateUsageAgreesWithCheckRequest(t *testing.T) {
	reg := evaluator.NewRegistry()
	objects := namespaceObjects(t)
	hard := []string{"pods=100", "count/pods=100", "requests.ephemeral-storage=1Ti", "services=10", "services.loadbalancers=10", "services.nodeports=10", "persistentvolumeclaims=10", "requests.storage=1Ti",
		"gold.storageclass.storage.k8s.io/requests.storage=1Ti", "configmaps=10", "count/deployments.apps=5", "count/bars.example.com=5"}
	quotas := []corev1.ResourceQuota{
		rq(t, "all", hard, nil),
		withScopes(rq(t, "be", []string{"pods=10"}, nil), corev1.ResourceQuotaScopeBestEffort),
		withScopes(rq(t, "not-be", []string{"pods=10", "requests.cpu=10"}, nil), corev1.ResourceQuotaScopeNotBestEffort),
	}
	recompute := func(present map[schema.GroupResource][]runtime.Object) []string {
		var out []string
		for i := range quotas {
			u, err := quota.CalculateUsage(&quotas[i], reg, func(gr schema.GroupResource) ([]runtime.Object, error) { return present[gr], nil })
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, show(u))
		}
		return out
	}
	empty := recompute(nil)
	for i := range quotas {
		u, _ := quota.CalculateUsage(&quotas[i], reg, func(schema.GroupResource) ([]runtime.Object, error) { return nil, nil })
		quotas[i].Status.Used = u
	}
	apply := func(changed []corev1.ResourceQuota) {
		for _, c := range changed {
			for i := range quotas {
				if quotas[i].Name == c.Name {
					quotas[i] = c
				}
			}
		}
	}
	current := func() []string {
		var out []string
		for _, q := range quotas {
			out = append(out, show(q.Status.Used))
		}
		return out
	}
	for gr, objs := range objects {
		if gr.Resource == "resourcequotas" || gr.Resource == "replicasets" {
			continue
		}
		for _, obj := range objs {
			changed, err := quota.CheckRequest(quotas, create(gr, obj), reg, nil)
			if err != nil {
				t.Fatalf("create %v: %v", gr, err)
			}
			apply(changed)
		}
	}
	present := map[schema.GroupResource][]runtime.Object{}
	for gr, objs := range objects {
		if gr.Resource != "resourcequotas" && gr.Resource != "replicasets" {
			present[gr] = objs
		}
	}
	if want, got := recompute(present), current(); fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatalf("after creates:\n charged    %v\n recomputed %v", got, want)
	}
	for gr, objs := range present {
		for _, obj := range objs {
			changed, err := quota.CheckRequest(quotas, del(gr, obj), reg, nil)
			if err != nil {
				t.Fatalf("delete %v: %v", gr, err)
			}
			apply(changed)
		}
	}
	if got := current(); fmt.Sprint(empty) != fmt.Sprint(got) {
		t.Fatalf("after deletes:\n charged %v\n empty   %v", got, empty)
	}
}
