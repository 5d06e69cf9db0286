package registry

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
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

// serviceAllocations returns the allocation keys a service holds, and (in ips) the cluster
// IPs among them.
func serviceAllocations(svc *corev1.Service) (keys, ips []string) {
	if svc == nil {
		return nil, nil
	}
	for _, ip := range svc.Spec.ClusterIPs {
		if ip != "" && ip != corev1.ClusterIPNone {
			ips = append(ips, ip)
		}
	}
	if len(svc.Spec.ClusterIPs) == 0 && svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone {
		ips = append(ips, svc.Spec.ClusterIP)
	}
	for _, ip := range ips {
		keys = append(keys, clusterIPKey(ip))
	}
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			keys = append(keys, nodePortKey(p.NodePort))
		}
	}
	return keys, ips
}

// ipAddresses is the resource of the IPAddress objects naming each cluster IP's Service, as
// upstream's allocator writes them (beside the allocation keys, which older replicas
// sharing the storage guard alone).
func (s *Store) ipAddresses() *Resource {
	return s.cfg.Catalogue.Get(networkingv1.SchemeGroupVersion.WithResource("ipaddresses"))
}

// ipAddressObject is the IPAddress upstream's allocator creates for a Service's cluster IP.
func ipAddressObject(ip string, svc *corev1.Service, uid types.UID, now metav1.Time) *networkingv1.IPAddress {
	family := corev1.IPv4Protocol
	if strings.Contains(ip, ":") {
		family = corev1.IPv6Protocol
	}
	return &networkingv1.IPAddress{
		TypeMeta: metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "IPAddress"},
		ObjectMeta: metav1.ObjectMeta{
			Name: ip, UID: uid, CreationTimestamp: now,
			Labels: map[string]string{
				networkingv1.LabelIPAddressFamily: string(family),
				networkingv1.LabelManagedBy:       ipAllocatorName,
			},
		},
		Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: svc.Namespace, Name: svc.Name}},
	}
}

// ipAllocatorName is the manager upstream's allocator labels its IPAddresses with.
const ipAllocatorName = "ipallocator.k8s.io"

// allocationChanges returns what a Service write adds to its transaction: a guard and a put
// for every allocation the new state takes (with its cluster IPs' IPAddress objects), a
// delete for every one the old state gives up.
func (s *Store) allocationChanges(svc, old *corev1.Service) ([]storage.Compare, []storage.Op, error) {
	heldKeys, heldIPs := serviceAllocations(old)
	held := map[string]bool{}
	for _, k := range heldKeys {
		held[k] = true
	}
	for _, ip := range heldIPs {
		held["ip:"+ip] = true
	}
	var cmps []storage.Compare
	var ops []storage.Op
	keep := map[string]bool{}
	take := func(k string, v []byte) {
		cmps = append(cmps, storage.Compare{Target: storage.ModRevisionEquals, Key: k})
		ops = append(ops, storage.Op{Type: storage.OpPut, Key: k, Value: v})
	}
	keys, ips := serviceAllocations(svc)
	for _, k := range keys {
		keep[k] = true
		if !held[k] {
			take(k, allocationOwner(svc))
		}
	}
	res := s.ipAddresses()
	now := metav1.NewTime(s.cfg.Clock.Now().Truncate(1e9))
	for _, ip := range ips {
		keep["ip:"+ip] = true
		if held["ip:"+ip] {
			continue
		}
		b, err := encodeStored(res, ipAddressObject(ip, svc, types.UID(uuid.NewUUID()), now))
		if err != nil {
			return nil, nil, internalError(err)
		}
		take(res.Key("", ip), b)
	}
	for k := range held {
		if keep[k] {
			continue
		}
		if ip, ok := strings.CutPrefix(k, "ip:"); ok {
			k = res.Key("", ip)
		}
		ops = append(ops, storage.Op{Type: storage.OpDelete, Key: k})
	}
	return cmps, ops, nil
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

// ipTaken reports whether a cluster IP is held by a service other than svc: by its
// allocation key, or by an IPAddress object (one an admin created holds its address too).
func (s *Store) ipTaken(ctx context.Context, ip string, svc *corev1.Service) (bool, error) {
	if taken, err := s.allocationTaken(ctx, clusterIPKey(ip), svc); taken || err != nil {
		return taken, err
	}
	res := s.ipAddresses()
	kv, err := s.cfg.Storage.Get(ctx, res.Key("", ip))
	if isNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, internalError(err)
	}
	obj, err := decodeKV(res, kv)
	if err != nil {
		return true, nil
	}
	ref := obj.(*networkingv1.IPAddress).Spec.ParentRef
	return ref == nil || ref.Group != "" || ref.Resource != "services" || ref.Namespace != svc.Namespace || ref.Name != svc.Name, nil
}

// The dynamic parts of the ranges, as upstream's allocators keep the first addresses and
// ports of a range for values clients ask for (KEP-3070, KEP-3668): a cluster IP is picked
// above the first 256 addresses of the /12, a node port above the first 86 ports.
const (
	staticIPs   = 256
	staticPorts = (nodePortMax - nodePortMin + 1) / 32
)

// allocateService assigns a cluster IP and node ports that no other service holds, and
// refuses requested ones outside the ranges or held by another service, with upstream's
// texts. The write's guards make the choice exact.
func (s *Store) allocateService(ctx context.Context, svc, old *corev1.Service) error {
	_, heldIPs := serviceAllocations(old)
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if svc.Spec.ClusterIP == "" {
		size := uint32(1) << 20
		first := binary.BigEndian.Uint32(serviceCIDR.IP) + 1
		for i := 0; ; i++ {
			if i == allocationAttempts {
				return apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: range is full"))
			}
			ip := make(net.IP, 4)
			binary.BigEndian.PutUint32(ip, first+staticIPs+randUint32()%(size-2-staticIPs))
			taken, err := s.ipTaken(ctx, ip.String(), svc)
			if err != nil {
				return err
			}
			if !taken {
				svc.Spec.ClusterIP = ip.String()
				break
			}
		}
	} else if svc.Spec.ClusterIP != corev1.ClusterIPNone && !slices.Contains(heldIPs, svc.Spec.ClusterIP) {
		if err := s.ipInRange(ctx, svc); err != nil {
			return err
		}
		taken, err := s.ipTaken(ctx, svc.Spec.ClusterIP, svc)
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
			if (p.NodePort < nodePortMin || p.NodePort > nodePortMax) && !holdsPort(old, p.NodePort) {
				return portRefused(svc, i, fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %d-%d", nodePortMin, nodePortMax))
			}
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
			port := int32(nodePortMin + staticPorts + int(randUint32()%uint32(nodePortMax-nodePortMin+1-staticPorts)))
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
	return ipRefused(svc, "provided IP is already allocated")
}

// ipRefused is upstream's refusal of a requested cluster IP: why, on spec.clusterIPs.
func ipRefused(svc *corev1.Service, why string) error {
	ips := svc.Spec.ClusterIPs
	if len(ips) == 0 {
		ips = []string{svc.Spec.ClusterIP}
	}
	return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name, field.ErrorList{
		field.Invalid(field.NewPath("spec", "clusterIPs"), ips, "failed to allocate IP "+svc.Spec.ClusterIP+": "+why),
	})
}

// holdsPort reports whether a stored Service holds a node port.
func holdsPort(svc *corev1.Service, port int32) bool {
	if svc == nil {
		return false
	}
	for _, p := range svc.Spec.Ports {
		if p.NodePort == port {
			return true
		}
	}
	return false
}

func portAllocated(svc *corev1.Service, i int) error {
	return portRefused(svc, i, "provided port is already allocated")
}

func portRefused(svc *corev1.Service, i int, why string) error {
	return apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Service").GroupKind(), svc.Name, field.ErrorList{
		field.Invalid(field.NewPath("spec", "ports").Index(i).Child("nodePort"), svc.Spec.Ports[i].NodePort, why),
	})
}

// ipInRange refuses a requested cluster IP that no ServiceCIDR ready for allocation holds,
// or that is its range's network or (IPv4) broadcast address, with upstream's texts.
func (s *Store) ipInRange(ctx context.Context, svc *corev1.Service) error {
	addr, err := netip.ParseAddr(svc.Spec.ClusterIP)
	if err != nil {
		return nil // validation answers
	}
	objs, _, err := s.ListObjects(ctx, s.cfg.Catalogue.Get(networkingv1.SchemeGroupVersion.WithResource("servicecidrs")), "")
	if err != nil {
		return err
	}
	for _, o := range objs {
		c := o.(*networkingv1.ServiceCIDR)
		if c.DeletionTimestamp != nil || !serviceCIDRReady(c) {
			continue
		}
		for _, cidr := range c.Spec.CIDRs {
			prefix, err := netip.ParsePrefix(cidr)
			if err != nil || !prefix.Contains(addr) {
				continue
			}
			if !RangeGives(prefix, addr) {
				return ipRefused(svc, fmt.Sprintf("the provided IP (%s) is not in the valid range. The range of valid IPs is %s", svc.Spec.ClusterIP, prefix))
			}
			return nil
		}
	}
	return ipRefused(svc, "the provided network does not match the current range")
}

// serviceCIDRReady is upstream's readiness of a ServiceCIDR for allocation: its Ready
// condition, true when it has none.
func serviceCIDRReady(c *networkingv1.ServiceCIDR) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == networkingv1.ServiceCIDRConditionReady {
			return cond.Status == metav1.ConditionTrue
		}
	}
	return true
}

// RangeGives reports whether a service range gives out addr: one of its addresses other
// than its network address and, for IPv4, its broadcast address (upstream's
// PrefixContainsIP).
func RangeGives(p netip.Prefix, addr netip.Addr) bool {
	if !p.Contains(addr) || addr == p.Masked().Addr() {
		return false
	}
	return !addr.Is4() || p.Contains(addr.Next())
}

// allocationRefusal turns a lost allocation race into the refusal a request for that value
// gets; nil when the value was not requested by the client (the server picks again).
func (s *Store) allocationRefusal(svc, requested *corev1.Service, key string) error {
	if ip := requested.Spec.ClusterIP; ip != "" && (key == clusterIPKey(ip) || key == s.ipAddresses().Key("", ip)) {
		return ipAllocated(svc)
	}
	for i, p := range requested.Spec.Ports {
		if p.NodePort != 0 && key == nodePortKey(p.NodePort) {
			return portAllocated(svc, i)
		}
	}
	return nil
}

// RepairServiceAllocations makes the allocations agree with the stored Services, as
// kube-apiserver's repair loops for cluster IPs and node ports do (run at start and every
// RepairInterval): each Service's allocation keys and IPAddresses are put where missing
// (data written before they were recorded, an IPAddress deleted by hand); an allocation
// key, or an allocator's IPAddress, that no Service holds is deleted (an IPAddress only
// RepairGrace after its creation, as upstream waits). Every write is guarded by the
// revision of the Service it was decided from (its absence included), so a Service written
// meanwhile is never given a value it gave up, nor robbed of one it took; a value held
// twice stays with the first.
func (s *Store) RepairServiceAllocations(ctx context.Context) error {
	svcRes := s.cfg.Catalogue.Get(corev1.SchemeGroupVersion.WithResource("services"))
	objs, _, err := s.ListObjects(ctx, svcRes, "")
	if err != nil {
		return err
	}
	byOwner := map[string]*corev1.Service{}
	guardOf := func(owner string) storage.Compare {
		var rev int64
		if svc := byOwner[owner]; svc != nil {
			rev, _ = strconv.ParseInt(svc.ResourceVersion, 10, 64)
		}
		ns, name, _ := strings.Cut(owner, "/")
		return storage.Compare{Target: storage.ModRevisionEquals, Key: svcRes.Key(ns, name), Revision: rev}
	}
	try := func(cmps []storage.Compare, op storage.Op) error {
		_, err := s.cfg.Storage.Txn(ctx, storage.Txn{Compares: cmps, Ops: []storage.Op{op}})
		if err != nil && !errors.Is(err, storage.ErrConflict) {
			return internalError(err)
		}
		return nil
	}
	for _, o := range objs {
		svc := o.(*corev1.Service)
		owner := string(allocationOwner(svc))
		byOwner[owner] = svc
		cmps, ops, err := s.allocationChanges(svc, nil) // one guard per put, in order
		if err != nil {
			return err
		}
		for i := range ops {
			if err := try([]storage.Compare{cmps[i], guardOf(owner)}, ops[i]); err != nil {
				return err
			}
		}
	}
	holds := func(owner, key string) bool {
		keys, _ := serviceAllocations(byOwner[owner])
		return slices.Contains(keys, key)
	}
	keys, err := s.cfg.Storage.List(ctx, allocationPrefix, storage.ListOptions{})
	if err != nil {
		return internalError(err)
	}
	for _, kv := range keys.KVs {
		if owner := string(kv.Value); !holds(owner, kv.Key) {
			held := storage.Compare{Target: storage.ModRevisionEquals, Key: kv.Key, Revision: kv.ModRevision}
			if err := try([]storage.Compare{held, guardOf(owner)}, storage.Op{Type: storage.OpDelete, Key: kv.Key}); err != nil {
				return err
			}
		}
	}
	ipRes := s.ipAddresses()
	ips, _, err := s.ListObjects(ctx, ipRes, "")
	if err != nil {
		return err
	}
	now := s.cfg.Clock.Now()
	for _, o := range ips {
		ip := o.(*networkingv1.IPAddress)
		if ip.Labels[networkingv1.LabelManagedBy] != ipAllocatorName || now.Sub(ip.CreationTimestamp.Time) < RepairGrace {
			continue
		}
		owner := ""
		if ref := ip.Spec.ParentRef; ref != nil && ref.Group == "" && ref.Resource == "services" {
			owner = ref.Namespace + "/" + ref.Name
		}
		if owner != "" && holds(owner, clusterIPKey(ip.Name)) {
			continue
		}
		rev, _ := strconv.ParseInt(ip.ResourceVersion, 10, 64)
		cmps := []storage.Compare{{Target: storage.ModRevisionEquals, Key: ipRes.Key("", ip.Name), Revision: rev}}
		if owner != "" {
			cmps = append(cmps, guardOf(owner))
		}
		if err := try(cmps, storage.Op{Type: storage.OpDelete, Key: ipRes.Key("", ip.Name)}); err != nil {
			return err
		}
	}
	return nil
}

// RepairInterval is how often RepairServiceAllocations runs (upstream's repair interval);
// RepairGrace how old an allocator's IPAddress that no Service holds must be to be deleted.
const (
	RepairInterval = 3 * time.Minute
	RepairGrace    = time.Minute
)
