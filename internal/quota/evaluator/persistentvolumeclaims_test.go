package evaluator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/quota"
)

func TestPVCUsage(t *testing.T) {
	pvc := func(annotations map[string]string, class *string, request, allocated []string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Annotations: annotations},
			Spec: corev1.PersistentVolumeClaimSpec{
				StorageClassName: class,
				Resources:        corev1.VolumeResourceRequirements{Requests: rl(t, request...)},
			},
			Status: corev1.PersistentVolumeClaimStatus{AllocatedResources: rl(t, allocated...)},
		}
	}
	tests := []struct {
		name string
		pvc  *corev1.PersistentVolumeClaim
		want string
	}{
		{"no class", pvc(nil, nil, []string{"storage=10Gi"}, nil),
			"count/persistentvolumeclaims=1 persistentvolumeclaims=1 requests.storage=10Gi"},
		{"class from spec", pvc(nil, ptr.To("gold"), []string{"storage=10Gi"}, nil),
			"count/persistentvolumeclaims=1 gold.storageclass.storage.k8s.io/persistentvolumeclaims=1 " +
				"gold.storageclass.storage.k8s.io/requests.storage=10Gi persistentvolumeclaims=1 requests.storage=10Gi"},
		{"beta annotation wins over spec", pvc(map[string]string{"volume.beta.kubernetes.io/storage-class": "bronze"}, ptr.To("gold"), []string{"storage=1Gi"}, nil),
			"bronze.storageclass.storage.k8s.io/persistentvolumeclaims=1 bronze.storageclass.storage.k8s.io/requests.storage=1Gi " +
				"count/persistentvolumeclaims=1 persistentvolumeclaims=1 requests.storage=1Gi"},
		{"empty beta annotation means no class", pvc(map[string]string{"volume.beta.kubernetes.io/storage-class": ""}, ptr.To("gold"), []string{"storage=1Gi"}, nil),
			"count/persistentvolumeclaims=1 persistentvolumeclaims=1 requests.storage=1Gi"},
		{"empty spec class means no class", pvc(nil, ptr.To(""), []string{"storage=1Gi"}, nil),
			"count/persistentvolumeclaims=1 persistentvolumeclaims=1 requests.storage=1Gi"},
		{"fractional bytes are rounded up", pvc(nil, nil, []string{"storage=1500m"}, nil),
			"count/persistentvolumeclaims=1 persistentvolumeclaims=1 requests.storage=2"},
		{"larger allocation counts", pvc(nil, ptr.To("gold"), []string{"storage=5Gi"}, []string{"storage=10Gi"}),
			"count/persistentvolumeclaims=1 gold.storageclass.storage.k8s.io/persistentvolumeclaims=1 " +
				"gold.storageclass.storage.k8s.io/requests.storage=10Gi persistentvolumeclaims=1 requests.storage=10Gi"},
		{"smaller allocation is ignored", pvc(nil, nil, []string{"storage=5Gi"}, []string{"storage=1Gi"}),
			"count/persistentvolumeclaims=1 persistentvolumeclaims=1 requests.storage=5Gi"},
		{"allocation without request is ignored", pvc(nil, nil, nil, []string{"storage=1Gi"}),
			"count/persistentvolumeclaims=1 persistentvolumeclaims=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PersistentVolumeClaims{}.Usage(tt.pvc)
			if err != nil {
				t.Fatal(err)
			}
			if s := show(got); s != tt.want {
				t.Errorf("got  %s\nwant %s", s, tt.want)
			}
		})
	}
}

func TestPVCMatching(t *testing.T) {
	got := PersistentVolumeClaims{}.MatchingResources([]corev1.ResourceName{
		"requests.storage", "persistentvolumeclaims", "count/persistentvolumeclaims", "gold.storageclass.storage.k8s.io/requests.storage",
		"gold.storageclass.storage.k8s.io/persistentvolumeclaims", "gold.storageclass.storage.k8s.io/limits.storage", "storage", "pods",
	})
	want := "count/persistentvolumeclaims gold.storageclass.storage.k8s.io/persistentvolumeclaims gold.storageclass.storage.k8s.io/requests.storage persistentvolumeclaims requests.storage"
	if s := names(got); s != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
	for sub, want := range map[string]bool{"": true, "status": true, "other": false} {
		if got := (PersistentVolumeClaims{}).Handles(sub); got != want {
			t.Errorf("Handles(%q) = %v", sub, got)
		}
	}
}

func TestPVCMatchesScope(t *testing.T) {
	withVAC := func(spec, current, target string) *corev1.PersistentVolumeClaim {
		p := &corev1.PersistentVolumeClaim{}
		if spec != "" {
			p.Spec.VolumeAttributesClassName = ptr.To(spec)
		}
		if current != "" {
			p.Status.CurrentVolumeAttributesClassName = ptr.To(current)
		}
		if target != "" {
			p.Status.ModifyVolumeStatus = &corev1.ModifyVolumeStatus{TargetVolumeAttributesClassName: target}
		}
		return p
	}
	vac := func(op corev1.ScopeSelectorOperator, values ...string) corev1.ScopedResourceSelectorRequirement {
		return corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopeVolumeAttributesClass, Operator: op, Values: values}
	}
	tests := []struct {
		name string
		sel  corev1.ScopedResourceSelectorRequirement
		pvc  *corev1.PersistentVolumeClaim
		want bool
	}{
		{"Exists with class", vac(corev1.ScopeSelectorOpExists), withVAC("gold", "", ""), true},
		{"Exists without class", vac(corev1.ScopeSelectorOpExists), withVAC("", "", ""), false},
		{"In spec class", vac(corev1.ScopeSelectorOpIn, "gold"), withVAC("gold", "", ""), true},
		{"In while moving gold to silver matches gold", vac(corev1.ScopeSelectorOpIn, "gold"), withVAC("silver", "gold", ""), true},
		{"In while moving gold to silver matches silver", vac(corev1.ScopeSelectorOpIn, "silver"), withVAC("silver", "gold", ""), true},
		{"In target class", vac(corev1.ScopeSelectorOpIn, "copper"), withVAC("silver", "gold", "copper"), true},
		{"In other class", vac(corev1.ScopeSelectorOpIn, "bronze"), withVAC("silver", "gold", ""), false},
		{"NotIn without class", vac(corev1.ScopeSelectorOpNotIn, "gold"), withVAC("", "", ""), true},
		{"DoesNotExist without class", vac(corev1.ScopeSelectorOpDoesNotExist), withVAC("", "", ""), true},
		{"DoesNotExist with class", vac(corev1.ScopeSelectorOpDoesNotExist), withVAC("gold", "", ""), false},
		{"pod scopes never match", corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopeBestEffort, Operator: corev1.ScopeSelectorOpExists}, withVAC("gold", "", ""), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PersistentVolumeClaims{}.MatchesScope(tt.sel, tt.pvc)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	var _ quota.ScopeMatcher = PersistentVolumeClaims{}
}
