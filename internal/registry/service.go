package registry

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/storage"
)

// serviceCIDR is the range cluster IPs are allocated from, as kube-apiserver's default.
var serviceCIDR = net.IPNet{IP: net.IPv4(10, 96, 0, 0).To4(), Mask: net.CIDRMask(12, 32)}

const nodePortMin, nodePortMax = 30000, 32767

// KubernetesServiceIP is the first address of the service range, the kubernetes Service's
// (random allocation never picks it).
func KubernetesServiceIP() string {
	ip := make(net.IP, 4)
	binary.BigEndian.PutUint32(ip, binary.BigEndian.Uint32(serviceCIDR.IP)+1)
	return ip.String()
}

func randUint32() uint32 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return binary.BigEndian.Uint32(b[:])
}

// Cluster IPs and node ports are allocated exactly: each allocated value has a key in etcd
// (allocationKey) whose value names its service, and the write of a Service puts the keys
// of the values it takes (guarded: they must not exist) and deletes those it gives up, in
// the same transaction as the Service itself. Two services can never hold one value, across
// any number of replicas, and no write needs to read the other Services.

const (
	allocationPrefix = "/registry/quotad.io/allocations/"
	// allocationAttempts bounds the random picks of a free value.
	allocationAttempts = 64
)

func clusterIPKey(ip string) string              { return allocationPrefix + "clusterips/" + ip }
func nodePortKey(port int32) string              { return allocationPrefix + "nodeports/" + strconv.Itoa(int(port)) }
func allocationOwner(svc *corev1.Service) []byte { return []byte(svc.Namespace + "/" + svc.Name) }

// serviceAllocations returns the allocation keys a service holds.
func serviceAllocations(svc *corev1.Service) []string {
	if svc == nil {
		return nil
	}
	var keys []string
	for _, ip := range svc.Spec.ClusterIPs {
		if ip != "" && ip != corev1.ClusterIPNone {
			keys = append(keys, clusterIPKey(ip))
		}
	}
	if len(svc.Spec.ClusterIPs) == 0 && svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone {
		keys = append(keys, clusterIPKey(svc.Spec.ClusterIP))
	}
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			keys = append(keys, nodePortKey(p.NodePort))
		}
	}
	return keys
}

// allocationChanges returns what a Service write adds to its transaction: a guard and a put
// for every allocation the new state takes, a delete for every one the old state gives up.
func allocationChanges(svc, old *corev1.Service) ([]storage.Compare, []storage.Op) {
	held := map[string]bool{}
	for _, k := range serviceAllocations(old) {
		held[k] = true
	}
	var cmps []storage.Compare
	var ops []storage.Op
	keep := map[string]bool{}
	for _, k := range serviceAllocations(svc) {
		keep[k] = true
		if held[k] {
			continue
		}
		cmps = append(cmps, storage.Compare{Target: storage.ModRevisionEquals, Key: k})
		ops = append(ops, storage.Op{Type: storage.OpPut, Key: k, Value: allocationOwner(svc)})
	}
	for k := range held {
		if !keep[k] {
			ops = append(ops, storage.Op{Type: storage.OpDelete, Key: k})
		}
	}
	return cmps, ops
}

// allocationTaken reports whether key is held by a service other than svc.
func (s *Store) allocationTaken(ctx context.Context, key string, svc *corev1.Service) (bool, error) {
	kv, err := s.cfg.Storage.Get(ctx, key)
	if isNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, internalError(err)
	}
	return string(kv.Value) != string(allocationOwner(svc)), nil
}

// allocateService assigns a cluster IP and node ports that no other service holds, and
// refuses requested ones another service holds. The write's guards make the choice exact.
func (s *Store) allocateService(ctx context.Context, svc *corev1.Service) error {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if svc.Spec.ClusterIP == "" {
		size := uint32(1) << 20
		base := binary.BigEndian.Uint32(serviceCIDR.IP)
		for i := 0; ; i++ {
			if i == allocationAttempts {
				return apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: range is full"))
			}
			ip := make(net.IP, 4)
			binary.BigEndian.PutUint32(ip, base+randUint32()%(size-3)+2)
			taken, err := s.allocationTaken(ctx, clusterIPKey(ip.String()), svc)
			if err != nil {
				return err
			}
			if !taken {
				svc.Spec.ClusterIP = ip.String()
				break
			}
		}
	} else if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		taken, err := s.allocationTaken(ctx, clusterIPKey(svc.Spec.ClusterIP), svc)
		if err != nil {
			return err
		}
		if taken {
			return ipAllocated(svc)
		}
	}
	if len(svc.Spec.ClusterIPs) == 0 {
		svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
	}
	// The IP family policy and families as upstream's allocator sets them on a cluster of
	// IPv4 service addresses (initIPFamilyFields): SingleStack and IPv4 by default; a
	// headless Service without a selector requires dual-stack by default and gets both
	// families unless it asks for one.
	selectorless := svc.Spec.ClusterIP == corev1.ClusterIPNone && len(svc.Spec.Selector) == 0
	if svc.Spec.IPFamilyPolicy == nil {
		p := corev1.IPFamilyPolicySingleStack
		if selectorless {
			p = corev1.IPFamilyPolicyRequireDualStack
		}
		svc.Spec.IPFamilyPolicy = &p
	}
	if len(svc.Spec.IPFamilies) == 0 {
		svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	if selectorless && len(svc.Spec.IPFamilies) == 1 && *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack {
		other := corev1.IPv6Protocol
		if svc.Spec.IPFamilies[0] == corev1.IPv6Protocol {
			other = corev1.IPv4Protocol
		}
		svc.Spec.IPFamilies = append(svc.Spec.IPFamilies, other)
	}
	if svc.Spec.Type != corev1.ServiceTypeNodePort && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return nil
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.AllocateLoadBalancerNodePorts != nil && !*svc.Spec.AllocateLoadBalancerNodePorts {
		return nil
	}
	chosen := map[int32]bool{}
	for i := range svc.Spec.Ports {
		if p := svc.Spec.Ports[i].NodePort; p != 0 {
			chosen[p] = true
		}
	}
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		if p.NodePort != 0 {
			taken, err := s.allocationTaken(ctx, nodePortKey(p.NodePort), svc)
			if err != nil {
				return err
			}
			if taken {
				return portAllocated(svc, i)
			}
			continue
		}
		for j := 0; ; j++ {
			if j == allocationAttempts {
				return apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: range is full"))
			}
			port := int32(nodePortMin + int(randUint32()%uint32(nodePortMax-nodePortMin+1)))
			if chosen[port] {
				continue
			}
			taken, err := s.allocationTaken(ctx, nodePortKey(port), svc)
			if err != nil {
				return err
			}
			if !taken {
				p.NodePort = port
				chosen[port] = true
				break
			}
		}
	}
	return nil
}

// ipAllocated is upstream's refusal of a requested cluster IP another service holds.
func ipAllocated(svc *corev1.Service) error {
	ips := svc.Spec.ClusterIPs
	if len(ips) == 0 {
		ips = []string{svc.Spec.ClusterIP}
	}
	return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name, field.ErrorList{
		field.Invalid(field.NewPath("spec", "clusterIPs"), ips, "failed to allocate IP "+svc.Spec.ClusterIP+": provided IP is already allocated"),
	})
}

func portAllocated(svc *corev1.Service, i int) error {
	return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name, field.ErrorList{
		field.Invalid(field.NewPath("spec", "ports").Index(i).Child("nodePort"), svc.Spec.Ports[i].NodePort, "provided port is already allocated"),
	})
}

// allocationRefusal turns a lost allocation race into the refusal a request for that value
// gets; nil when the value was not requested by the client (the server picks again).
func allocationRefusal(svc, requested *corev1.Service, key string) error {
	if requested.Spec.ClusterIP != "" && key == clusterIPKey(requested.Spec.ClusterIP) {
		return ipAllocated(svc)
	}
	for i, p := range requested.Spec.Ports {
		if p.NodePort != 0 && key == nodePortKey(p.NodePort) {
			return portAllocated(svc, i)
		}
	}
	return nil
}

// BackfillServiceAllocations records the allocations of stored Services that have none
// (data written before allocations were recorded); values held twice stay with the first.
func (s *Store) BackfillServiceAllocations(ctx context.Context) error {
	res := s.cfg.Catalogue.Get(corev1.SchemeGroupVersion.WithResource("services"))
	objs, _, err := s.ListObjects(ctx, res, "")
	if err != nil {
		return err
	}
	for _, o := range objs {
		svc := o.(*corev1.Service)
		for _, key := range serviceAllocations(svc) {
			_, err := s.cfg.Storage.Txn(ctx, storage.Txn{
				Compares: []storage.Compare{{Target: storage.ModRevisionEquals, Key: key}},
				Ops:      []storage.Op{{Type: storage.OpPut, Key: key, Value: allocationOwner(svc)}},
			})
			if err != nil && !errors.Is(err, storage.ErrConflict) {
				return err
			}
		}
	}
	return nil
}
