package evaluator

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/quota"
)

// countServices is the object-count name of services.
const countServices = corev1.ResourceName("count/services")

// Services is the evaluator for core services. Services match no scope, so a scoped
// quota never counts them.
type Services struct{}

// Handles accepts the service itself and its status: a type change moves usage.
func (Services) Handles(subresource string) bool {
	return subresource == "" || subresource == "status"
}

// MatchingResources returns the service quota names among input: count/services,
// services, services.nodeports and services.loadbalancers.
func (Services) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	return quota.Intersection(input, []corev1.ResourceName{
		countServices, corev1.ResourceServices, corev1.ResourceServicesNodePorts, corev1.ResourceServicesLoadBalancers,
	})
}

// Usage returns count/services = services = 1 and, by type: NodePort → nodeports = number
// of ports; LoadBalancer → loadbalancers = 1 and nodeports = number of ports (only those
// with a nodePort when allocateLoadBalancerNodePorts is false); others → zero for both.
func (Services) Usage(obj runtime.Object) (corev1.ResourceList, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, fmt.Errorf("expect *v1.Service, got %T", obj)
	}
	ports := int64(len(svc.Spec.Ports))
	result := corev1.ResourceList{
		countServices:                        *resource.NewQuantity(1, resource.DecimalSI),
		corev1.ResourceServices:              *resource.NewQuantity(1, resource.DecimalSI),
		corev1.ResourceServicesLoadBalancers: {Format: resource.DecimalSI},
		corev1.ResourceServicesNodePorts:     {Format: resource.DecimalSI},
	}
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		result[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
	case corev1.ServiceTypeLoadBalancer:
		if svc.Spec.AllocateLoadBalancerNodePorts != nil && !*svc.Spec.AllocateLoadBalancerNodePorts {
			n := int64(0)
			for _, p := range svc.Spec.Ports {
				if p.NodePort != 0 {
					n++
				}
			}
			result[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(n, resource.DecimalSI)
		} else {
			result[corev1.ResourceServicesNodePorts] = *resource.NewQuantity(ports, resource.DecimalSI)
		}
		result[corev1.ResourceServicesLoadBalancers] = *resource.NewQuantity(1, resource.DecimalSI)
	}
	return result, nil
}
