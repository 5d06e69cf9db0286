package quotaenforce

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/quota/evaluator"
)

func clusterServicesPlugin(t *testing.T) *Plugin {
	limited, err := LoadConfigFile("testdata/admission-config-cluster-services.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return NewPlugin(evaluator.NewRegistry(), limited)
}

func criticalPod(class string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "critical", Namespace: "default", ResourceVersion: "5"},
		Spec: corev1.PodSpec{PriorityClassName: class, Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{"cpu": resource.MustParse("100m")},
		}}}},
	}
}

func podAttrs(op admission.Operation, obj, old *corev1.Pod) *admission.Attributes {
	a := &admission.Attributes{
		Operation: op,
		Resource:  corev1.SchemeGroupVersion.WithResource("pods"),
		Kind:      corev1.SchemeGroupVersion.WithKind("Pod"),
		Namespace: "default",
		Name:      "critical",
	}
	if obj != nil {
		a.Object = obj
	}
	if old != nil {
		a.OldObject = old
	}
	return a
}

func TestPluginNameAndOperations(t *testing.T) {
	p := clusterServicesPlugin(t)
	if p.Name() != "ResourceQuota" || p.Name() != admission.ResourceQuota {
		t.Errorf("Name() = %q", p.Name())
	}
	for op, want := range map[admission.Operation]bool{admission.Create: true, admission.Update: true, admission.Delete: true, "CONNECT": false} {
		if p.Handles(op) != want {
			t.Errorf("Handles(%s) != %v", op, want)
		}
	}
}

func TestPluginClusterServices(t *testing.T) {
	p := clusterServicesPlugin(t)
	coveringQuota := corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "pods-cluster-services", Namespace: "kube-system"},
		Spec: corev1.ResourceQuotaSpec{ScopeSelector: &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{{
			ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"cluster-services"},
		}}}},
	}

	// Refused (HTTP 500, plain error) where no quota covers the scope.
	_, err := p.Evaluate(podAttrs(admission.Create, criticalPod("cluster-services"), nil), nil)
	if err == nil || err.Error() != "insufficient quota to match these scopes: [{PriorityClass In [cluster-services]}]" {
		t.Fatalf("got %v", err)
	}
	if _, ok := err.(apierrors.APIStatus); ok {
		t.Fatal("uncovered scopes must be a plain error, as upstream")
	}

	// Admitted where one does (kube-system in the walkthrough).
	a := podAttrs(admission.Create, criticalPod("cluster-services"), nil)
	a.Namespace = "kube-system"
	if changed, err := p.Evaluate(a, []corev1.ResourceQuota{coveringQuota}); err != nil || changed != nil {
		t.Fatalf("got %v, %v", changed, err)
	}

	// Other pods need no covering quota.
	if _, err := p.Evaluate(podAttrs(admission.Create, criticalPod(""), nil), nil); err != nil {
		t.Fatal(err)
	}
	// Deletes are never refused by limited scopes.
	if _, err := p.Evaluate(podAttrs(admission.Delete, nil, criticalPod("cluster-services")), nil); err != nil {
		t.Fatal(err)
	}
}

func TestPluginAccounting(t *testing.T) {
	p := NewPlugin(evaluator.NewRegistry(), nil)
	hard := corev1.ResourceList{"pods": resource.MustParse("1"), "requests.cpu": resource.MustParse("1")}
	q := corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "compute", Namespace: "default"},
		Spec:       corev1.ResourceQuotaSpec{Hard: hard},
		Status:     corev1.ResourceQuotaStatus{Hard: hard, Used: corev1.ResourceList{"pods": resource.MustParse("0"), "requests.cpu": resource.MustParse("0")}},
	}
	changed, err := p.Evaluate(podAttrs(admission.Create, criticalPod(""), nil), []corev1.ResourceQuota{q})
	if err != nil || len(changed) != 1 {
		t.Fatalf("create: %v %v", changed, err)
	}
	used := changed[0].Status.Used
	if pods, cpu := used["pods"], used["requests.cpu"]; pods.String() != "1" || cpu.String() != "100m" {
		t.Fatalf("charged %v", used)
	}

	// A second pod exceeds pods=1.
	_, err = p.Evaluate(podAttrs(admission.Create, criticalPod(""), nil), changed)
	if err == nil || err.Error() != `pods "critical" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=1, limited: pods=1` || !apierrors.IsForbidden(err) {
		t.Fatalf("got %v", err)
	}

	// Delete credits.
	credited, err := p.Evaluate(podAttrs(admission.Delete, nil, criticalPod("")), changed)
	if err != nil || len(credited) != 1 {
		t.Fatalf("delete: %v %v", credited, err)
	}
	if pods := credited[0].Status.Used["pods"]; !pods.IsZero() {
		t.Fatalf("credited %v", credited[0].Status.Used)
	}

	// Cluster-scoped requests touch no quota.
	a := podAttrs(admission.Create, criticalPod(""), nil)
	a.Namespace = ""
	a.Resource = corev1.SchemeGroupVersion.WithResource("namespaces")
	if changed, err := p.Evaluate(a, []corev1.ResourceQuota{q}); err != nil || changed != nil {
		t.Fatalf("cluster-scoped: %v %v", changed, err)
	}
}
