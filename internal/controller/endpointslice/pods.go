package endpointslice

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// PodReady is upstream's IsPodReady: the pod's Ready condition is True.
func PodReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ShouldPodBeInEndpoints is upstream's: not terminal, has an IP, and not being deleted
// unless includeTerminating.
func ShouldPodBeInEndpoints(pod *corev1.Pod, includeTerminating bool) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if pod.Status.PodIP == "" && len(pod.Status.PodIPs) == 0 {
		return false
	}
	if !includeTerminating && pod.DeletionTimestamp != nil {
		return false
	}
	return true
}

// ShouldSetHostname is upstream's: the pod names a hostname and the Service as its
// subdomain.
func ShouldSetHostname(pod *corev1.Pod, svc *corev1.Service) bool {
	return pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name && svc.Namespace == pod.Namespace
}

// FindPort is upstream's: a service port's target port in pod, a named one looked up in
// its containers (and restartable init containers) with the same protocol.
func FindPort(pod *corev1.Pod, svcPort *corev1.ServicePort) (int, error) {
	tp := svcPort.TargetPort
	switch tp.Type {
	case intstr.String:
		for _, c := range pod.Spec.Containers {
			for _, p := range c.Ports {
				if p.Name == tp.StrVal && p.Protocol == svcPort.Protocol {
					return int(p.ContainerPort), nil
				}
			}
		}
		for _, c := range pod.Spec.InitContainers {
			if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
				continue
			}
			for _, p := range c.Ports {
				if p.Name == tp.StrVal && p.Protocol == svcPort.Protocol {
					return int(p.ContainerPort), nil
				}
			}
		}
	case intstr.Int:
		return tp.IntValue(), nil
	}
	return 0, fmt.Errorf("no suitable port for manifest: %s", pod.UID)
}

// Selects reports whether svc's selector (non-empty) matches pod's labels in its
// namespace.
func Selects(svc *corev1.Service, pod *corev1.Pod) bool {
	return selectsLabels(svc, pod.Namespace, pod.Labels)
}

// selectsLabels is Selects of a pod in ns with labels lbls.
func selectsLabels(svc *corev1.Service, ns string, lbls map[string]string) bool {
	if len(svc.Spec.Selector) == 0 || svc.Namespace != ns {
		return false
	}
	// labels.Set(selector).AsSelectorPreValidated().Matches(lbls), without building the
	// selector for every pod event and every Service of its namespace.
	for k, v := range svc.Spec.Selector {
		if have, ok := lbls[k]; !ok || have != v {
			return false
		}
	}
	return true
}

// Managed reports whether svc is one the endpoints controllers manage: it has a selector
// and is not ExternalName. An empty selector is none, as upstream's controllers read it
// (decoded from storage, where an empty map is not kept).
func Managed(svc *corev1.Service) bool {
	return len(svc.Spec.Selector) > 0 && svc.Spec.Type != corev1.ServiceTypeExternalName
}

// ServiceIPSet is upstream's IsServiceIPSet: a cluster IP that is not None.
func ServiceIPSet(svc *corev1.Service) bool {
	return svc.Spec.ClusterIP != corev1.ClusterIPNone && svc.Spec.ClusterIP != ""
}
