package registry

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// serviceCIDR is the range cluster IPs are allocated from, as kube-apiserver's default.
var serviceCIDR = net.IPNet{IP: net.IPv4(10, 96, 0, 0).To4(), Mask: net.CIDRMask(12, 32)}

const nodePortMin, nodePortMax = 30000, 32767

func randUint32() uint32 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return binary.BigEndian.Uint32(b[:])
}

// allocateService assigns a cluster IP and node ports that no other service holds.
func (s *Store) allocateService(ctx context.Context, svc *corev1.Service) error {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	res := s.cfg.Catalogue.Get(corev1.SchemeGroupVersion.WithResource("services"))
	others, _, err := s.ListObjects(ctx, res, "")
	if err != nil {
		return err
	}
	usedIPs := map[string]bool{}
	usedPorts := map[int32]bool{}
	for _, o := range others {
		os := o.(*corev1.Service)
		if os.Namespace == svc.Namespace && os.Name == svc.Name {
			continue
		}
		usedIPs[os.Spec.ClusterIP] = true
		for _, p := range os.Spec.Ports {
			if p.NodePort != 0 {
				usedPorts[p.NodePort] = true
			}
		}
	}
	if svc.Spec.ClusterIP == "" {
		size := uint32(1) << 20
		base := binary.BigEndian.Uint32(serviceCIDR.IP)
		for i := 0; ; i++ {
			if i > 64 {
				return apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: range is full"))
			}
			off := randUint32()%(size-2) + 1
			ip := make(net.IP, 4)
			binary.BigEndian.PutUint32(ip, base+off)
			if !usedIPs[ip.String()] {
				svc.Spec.ClusterIP = ip.String()
				break
			}
		}
	} else if svc.Spec.ClusterIP != corev1.ClusterIPNone && usedIPs[svc.Spec.ClusterIP] {
		return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "clusterIPs").Index(0), svc.Spec.ClusterIP, "failed to allocate IP "+svc.Spec.ClusterIP+": provided IP is already allocated"),
		})
	}
	if len(svc.Spec.ClusterIPs) == 0 {
		svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
	}
	if len(svc.Spec.IPFamilies) == 0 && svc.Spec.ClusterIP != corev1.ClusterIPNone {
		svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	if svc.Spec.IPFamilyPolicy == nil {
		p := corev1.IPFamilyPolicySingleStack
		svc.Spec.IPFamilyPolicy = &p
	}
	if svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		if svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.AllocateLoadBalancerNodePorts != nil && !*svc.Spec.AllocateLoadBalancerNodePorts {
			return nil
		}
		for i := range svc.Spec.Ports {
			p := &svc.Spec.Ports[i]
			if p.NodePort != 0 {
				if usedPorts[p.NodePort] {
					return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name, field.ErrorList{
						field.Invalid(field.NewPath("spec", "ports").Index(i).Child("nodePort"), p.NodePort, fmt.Sprintf("provided port is already allocated")),
					})
				}
				usedPorts[p.NodePort] = true
				continue
			}
			for j := 0; j < 4096; j++ {
				port := int32(nodePortMin + int(randUint32()%uint32(nodePortMax-nodePortMin+1)))
				if !usedPorts[port] {
					p.NodePort = port
					usedPorts[port] = true
					break
				}
			}
		}
	}
	return nil
}

// prepareServiceUpdate drops the fields a type change makes meaningless, when the user left
// them as they were (upstream's dropTypeDependentFields), and allocates node ports the new
// type needs.
func prepareServiceUpdate(svc, old *corev1.Service) {
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
		if old.Spec.HealthCheckNodePort == svc.Spec.HealthCheckNodePort {
			svc.Spec.HealthCheckNodePort = 0
		}
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
