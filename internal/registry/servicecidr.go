package registry

import (
	"fmt"
	"net/netip"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// ServiceRanges are the ranges Services take their values from: kube-apiserver's
// --service-cluster-ip-range (the default ServiceCIDR's range, IPv4) and
// --service-node-port-range.
type ServiceRanges struct {
	ClusterIPs netip.Prefix
	NodePorts  utilnet.PortRange
}

// DefaultServiceRanges are 10.96.0.0/12 (kubeadm's, and quotad's since its first wave) and
// 30000-32767 (kube-apiserver's).
func DefaultServiceRanges() ServiceRanges {
	return ServiceRanges{ClusterIPs: netip.MustParsePrefix("10.96.0.0/12"), NodePorts: utilnet.PortRange{Base: 30000, Size: 2768}}
}

// ParseServiceRanges reads the two flags' values as kube-apiserver does, refusing what this
// IPv4 cluster cannot serve: an IPv6 or dual-stack range, a range with fewer than 8
// addresses (upstream's smallest), a node port range outside 1-65535.
func ParseServiceRanges(clusterIPs, nodePorts string) (ServiceRanges, error) {
	var r ServiceRanges
	p, err := netip.ParsePrefix(clusterIPs)
	if err != nil {
		return r, fmt.Errorf("service-cluster-ip-range %q: %v (this cluster serves one IPv4 range)", clusterIPs, err)
	}
	if !p.Addr().Is4() || p.Bits() > 29 {
		return r, fmt.Errorf("service-cluster-ip-range %q: want one IPv4 range of at least 8 addresses", clusterIPs)
	}
	if p.Bits() < 12 { // kube-apiserver's bound
		return r, fmt.Errorf("service-cluster-ip-range: specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be >= 12")
	}
	pr, err := utilnet.ParsePortRange(nodePorts)
	if err != nil {
		return r, fmt.Errorf("service-node-port-range %q: %v", nodePorts, err)
	}
	if pr.Base < 1 || pr.Base+pr.Size-1 > 65535 {
		return r, fmt.Errorf("service-node-port-range %q: ports must lie in 1-65535", nodePorts)
	}
	return ServiceRanges{ClusterIPs: p.Masked(), NodePorts: *pr}, nil
}

// KubernetesServiceIP is the first address of the cluster IP range, the kubernetes
// Service's.
func (r ServiceRanges) KubernetesServiceIP() string {
	return r.ClusterIPs.Masked().Addr().Next().String()
}

// DefaultServiceCIDR is the default ServiceCIDR's range, as text.
func (r ServiceRanges) DefaultServiceCIDR() string { return r.ClusterIPs.String() }

// nodePortBounds returns the first and last node port.
func (r ServiceRanges) nodePortBounds() (int32, int32) {
	return int32(r.NodePorts.Base), int32(r.NodePorts.Base + r.NodePorts.Size - 1)
}

// ServiceRanges returns the store's service ranges.
func (s *Store) ServiceRanges() ServiceRanges { return s.cfg.ServiceRanges }
