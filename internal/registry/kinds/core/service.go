package core

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/registry/defaults"
	"github.com/quotad/quotad/internal/registry/table"
	"github.com/quotad/quotad/internal/registry/validation"
)

// Service is the strategy of services.
type Service struct{}

// Fields adds upstream's field labels: spec.clusterIP and spec.type (a kubelet and
// kube-proxy watch Services without headless ones: spec.clusterIP!=None).
func (Service) Fields(obj runtime.Object, set fields.Set) {
	o := obj.(*corev1.Service)
	set["spec.clusterIP"] = o.Spec.ClusterIP
	set["spec.type"] = string(o.Spec.Type)
}

// Default sets upstream's defaults.
func (Service) Default(obj runtime.Object) { defaults.Service(obj.(*corev1.Service)) }

// Validate returns upstream's errors for a new object.
func (Service) Validate(obj runtime.Object) field.ErrorList {
	return validation.ServiceCreate(obj.(*corev1.Service))
}

// ValidateUpdate returns upstream's errors for an update.
func (Service) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.ServiceUpdate(obj.(*corev1.Service), old.(*corev1.Service))
}

// ConvertToTable prints upstream's columns.
func (Service) ConvertToTable(objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	return table.ServicePrinter().Convert(objs, now, include, false)
}

// PrepareForCreate resets the status and normalizes clusterIP and clusterIPs.
func (Service) PrepareForCreate(obj runtime.Object, _ auth.User, _ metav1.Time) {
	o := obj.(*corev1.Service)
	o.Status = corev1.ServiceStatus{}
	defaults.NormalizeServiceClusterIPs(o, nil)
}

// DefaultUpdate drops what the old type needed and the new one does not, sets upstream's
// defaults, then normalizes clusterIP and clusterIPs against the stored service. The
// registry allocates what is still missing afterwards.
func (Service) DefaultUpdate(obj, old runtime.Object) {
	svc, o := obj.(*corev1.Service), old.(*corev1.Service)
	dropTypeDependentFields(svc, o)
	defaults.Service(svc)
	defaults.NormalizeServiceClusterIPs(svc, o)
}

// dropTypeDependentFields drops the fields a type change makes meaningless, when the user
// left them as they were (upstream's dropTypeDependentFields).
func dropTypeDependentFields(svc, old *corev1.Service) {
	needsClusterIP := func(s *corev1.Service) bool { return s.Spec.Type != corev1.ServiceTypeExternalName }
	needsNodePort := func(s *corev1.Service) bool {
		return s.Spec.Type == corev1.ServiceTypeNodePort || s.Spec.Type == corev1.ServiceTypeLoadBalancer
	}
	externallyAccessible := needsNodePort
	if needsClusterIP(old) && !needsClusterIP(svc) {
		if equalStrings(old.Spec.ClusterIPs, svc.Spec.ClusterIPs) && old.Spec.ClusterIP == svc.Spec.ClusterIP {
			svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "", nil
		}
		if equalFamilies(old.Spec.IPFamilies, svc.Spec.IPFamilies) {
			svc.Spec.IPFamilies = nil
		}
		if ptrEqual(old.Spec.IPFamilyPolicy, svc.Spec.IPFamilyPolicy) {
			svc.Spec.IPFamilyPolicy = nil
		}
	}
	if needsNodePort(old) && !needsNodePort(svc) && sameNodePorts(old, svc) {
		for i := range svc.Spec.Ports {
			svc.Spec.Ports[i].NodePort = 0
		}
	}
	if old.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		if ptrEqual(old.Spec.AllocateLoadBalancerNodePorts, svc.Spec.AllocateLoadBalancerNodePorts) {
			svc.Spec.AllocateLoadBalancerNodePorts = nil
		}
		if ptrEqual(old.Spec.LoadBalancerClass, svc.Spec.LoadBalancerClass) {
			svc.Spec.LoadBalancerClass = nil
		}
	}
	// Leaving LoadBalancer or the Local policy gives the health check node port up.
	needsHealthCheck := func(s *corev1.Service) bool {
		return s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
	}
	if needsHealthCheck(old) && !needsHealthCheck(svc) && old.Spec.HealthCheckNodePort == svc.Spec.HealthCheckNodePort {
		svc.Spec.HealthCheckNodePort = 0
	}
	if externallyAccessible(old) && !externallyAccessible(svc) && old.Spec.ExternalTrafficPolicy == svc.Spec.ExternalTrafficPolicy {
		svc.Spec.ExternalTrafficPolicy = ""
	}
}

func sameNodePorts(a, b *corev1.Service) bool {
	if len(a.Spec.Ports) != len(b.Spec.Ports) {
		return false
	}
	for i := range a.Spec.Ports {
		if a.Spec.Ports[i].NodePort != b.Spec.Ports[i].NodePort {
			return false
		}
	}
	return true
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalFamilies(a, b []corev1.IPFamily) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func ptrEqual[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// ConvertFieldLabel is upstream's field label conversion of v1 Services.
func (Service) ConvertFieldLabel(label, value string) (string, string, error) {
	switch label {
	case "metadata.namespace", "metadata.name", "spec.clusterIP", "spec.type":
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label not supported: %s", label)
}

// StatusKeepsMetadata: a Service's /status write applies its metadata (labels,
// annotations, finalizers, owner references), as upstream's status strategy of the kind,
// which resets only the spec.
func (Service) StatusKeepsMetadata() bool { return true }
