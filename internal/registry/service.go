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
	if needsHealthCheck(svc) && svc.Spec.HealthCheckNodePort != 0 {
		keys = append(keys, nodePortKey(svc.Spec.HealthCheckNodePort))
	}
	// Ports with one port number share a node port: each key once (a transaction may not
	// name a key twice).
	slices.Sort(keys)
	return slices.Compact(keys), ips
}

// needsHealthCheck reports whether a Service holds a health check node port: a
// LoadBalancer with the Local external traffic policy.
func needsHealthCheck(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
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

// allocateService assigns a cluster IP and node ports that no other service holds, and
// refuses requested ones outside the ranges or held by another service, with upstream's
// texts. The write's guards make the choice exact.
func (s *Store) allocateService(ctx context.Context, svc, old *corev1.Service) error {
	_, heldIPs := serviceAllocations(old)
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	if svc.Spec.ClusterIP == "" {
		ip, err := s.pickClusterIP(ctx, svc)
		if err != nil {
			return err
		}
		svc.Spec.ClusterIP = ip
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
	// The ports the service asks for are never picked for it.
	chosen := map[int32]bool{}
	for i := range svc.Spec.Ports {
		if p := svc.Spec.Ports[i].NodePort; p != 0 {
			chosen[p] = true
		}
	}
	if needsHealthCheck(svc) && svc.Spec.HealthCheckNodePort != 0 {
		chosen[svc.Spec.HealthCheckNodePort] = true
	}
	if svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		if err := s.allocateNodePorts(ctx, svc, old, chosen); err != nil {
			return err
		}
	}
	// A LoadBalancer with the Local policy holds a health check node port, refused as
	// upstream refuses it (a 500) when another service or one of its own ports holds it.
	if !needsHealthCheck(svc) {
		return nil
	}
	hc := svc.Spec.HealthCheckNodePort
	if hc == 0 {
		port, err := s.pickNodePort(ctx, svc, chosen)
		svc.Spec.HealthCheckNodePort = port
		return err
	}
	if old != nil && needsHealthCheck(old) && old.Spec.HealthCheckNodePort == hc {
		return nil
	}
	refused := func(why string) error {
		return apierrors.NewInternalError(fmt.Errorf("failed to allocate requested HealthCheck NodePort %d: %s", hc, why))
	}
	if lo, hi := s.cfg.ServiceRanges.nodePortBounds(); hc < lo || hc > hi {
		return refused("provided port is not in the valid range. The range of valid ports is " + s.cfg.ServiceRanges.NodePorts.String())
	}
	taken, err := s.allocationTaken(ctx, nodePortKey(hc), svc)
	if err != nil {
		return err
	}
	if taken || holdsPort(svc, hc) {
		return refused("provided port is already allocated")
	}
	return nil
}

// allocateNodePorts gives the ports of a NodePort or LoadBalancer Service their node ports
// as upstream's initNodePorts does: ports with the same port number share one node port (a
// DNS Service's TCP and UDP 53), one requested for a later port with that number included;
// a LoadBalancer that turns node ports off gets only those it asks for. A requested one out
// of the range or held by another service is refused on its port.
func (s *Store) allocateNodePorts(ctx context.Context, svc, old *corev1.Service, chosen map[int32]bool) error {
	byPort := map[int32]int32{}
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		if p.NodePort == 0 && !needsNodePorts(svc) {
			continue
		}
		shared, ok := byPort[p.Port]
		switch {
		case ok && (p.NodePort == 0 || p.NodePort == shared):
			p.NodePort = shared
			continue
		case !ok && p.NodePort == 0:
			for _, later := range svc.Spec.Ports[i+1:] {
				if later.Port == p.Port && later.NodePort != 0 {
					p.NodePort = later.NodePort
					break
				}
			}
		}
		if p.NodePort == 0 {
			port, err := s.pickNodePort(ctx, svc, chosen)
			if err != nil {
				return err
			}
			p.NodePort = port
		} else {
			if lo, hi := s.cfg.ServiceRanges.nodePortBounds(); (p.NodePort < lo || p.NodePort > hi) && !holdsPort(old, p.NodePort) {
				return portRefused(svc, i, "provided port is not in the valid range. The range of valid ports is "+s.cfg.ServiceRanges.NodePorts.String())
			}
			taken, err := s.allocationTaken(ctx, nodePortKey(p.NodePort), svc)
			if err != nil {
				return err
			}
			if taken {
				return portAllocated(svc, i)
			}
		}
		if !ok {
			byPort[p.Port] = p.NodePort
		}
	}
	return nil
}

// needsNodePorts reports whether a Service's ports get node ports: a NodePort, or a
// LoadBalancer that does not turn them off.
func needsNodePorts(svc *corev1.Service) bool {
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeLoadBalancer:
		return svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

// pickNodePort picks a node port no other service holds and not in chosen (which it joins):
// above the ports kept for requests, then among them (pickFree).
func (s *Store) pickNodePort(ctx context.Context, svc *corev1.Service, chosen map[int32]bool) (int32, error) {
	var port int32
	base, size, static := uint32(s.cfg.ServiceRanges.NodePorts.Base), uint32(s.cfg.ServiceRanges.NodePorts.Size), staticBand(uint32(s.cfg.ServiceRanges.NodePorts.Size), 32, 128)
	found, err := pickFree([][2]uint32{{base + static, size - static}, {base, static}},
		func(v uint32) (bool, error) {
			if chosen[int32(v)] {
				return false, nil
			}
			taken, err := s.allocationTaken(ctx, nodePortKey(int32(v)), svc)
			if err != nil || taken {
				return false, err
			}
			port = int32(v)
			chosen[port] = true
			return true, nil
		}, func() (map[uint32]bool, error) {
			lr, err := s.cfg.Storage.List(ctx, allocationPrefix+"nodeports/", storage.ListOptions{KeysOnly: true})
			if err != nil {
				return nil, internalError(err)
			}
			held := map[uint32]bool{}
			for _, kv := range lr.KVs {
				if n, err := strconv.Atoi(strings.TrimPrefix(kv.Key, allocationPrefix+"nodeports/")); err == nil {
					held[uint32(n)] = true
				}
			}
			for p := range chosen {
				held[uint32(p)] = true
			}
			return held, nil
		})
	if err == nil && !found {
		err = apierrors.NewInternalError(fmt.Errorf("failed to allocate a nodePort: range is full"))
	}
	return port, err
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

// ipInRange refuses a requested cluster IP that no range ready for allocation holds, or
// that is its range's network or (IPv4) broadcast address, with upstream's texts.
func (s *Store) ipInRange(ctx context.Context, svc *corev1.Service) error {
	addr, err := netip.ParseAddr(svc.Spec.ClusterIP)
	if err != nil {
		return nil // validation answers
	}
	ranges, err := s.readyRanges(ctx)
	if err != nil {
		return err
	}
	for _, prefix := range ranges {
		if !prefix.Contains(addr) {
			continue
		}
		if !RangeGives(prefix, addr) {
			return ipRefused(svc, fmt.Sprintf("the provided IP (%s) is not in the valid range. The range of valid IPs is %s", svc.Spec.ClusterIP, prefix))
		}
		return nil
	}
	return ipRefused(svc, "the provided network does not match the current range")
}

// readyRanges returns the IPv4 ranges that give addresses, the default range first: those
// of the ServiceCIDRs Ready and not being deleted, as upstream's allocators are ready. With
// no ServiceCIDR stored at all (a store not yet bootstrapped), the default range.
func (s *Store) readyRanges(ctx context.Context) ([]netip.Prefix, error) {
	objs, _, err := s.ListObjects(ctx, s.cfg.Catalogue.Get(networkingv1.SchemeGroupVersion.WithResource("servicecidrs")), "")
	if err != nil {
		return nil, err
	}
	def := s.cfg.ServiceRanges.ClusterIPs
	if len(objs) == 0 {
		return []netip.Prefix{def}, nil
	}
	var out []netip.Prefix
	for _, o := range objs {
		c := o.(*networkingv1.ServiceCIDR)
		if c.DeletionTimestamp != nil || !serviceCIDRReady(c) {
			continue
		}
		for _, cidr := range c.Spec.CIDRs {
			if p, err := netip.ParsePrefix(cidr); err == nil && p.Addr().Is4() && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b netip.Prefix) int {
		switch {
		case a == def:
			return -1
		case b == def:
			return 1
		}
		return 0
	})
	return out, nil
}

// pickClusterIP picks a free address from the ready ranges, the default range first: in
// each, above the addresses kept for requests (upstream's offset, KEP-3070), then among
// them (pickFree). None free: upstream's "range is full".
func (s *Store) pickClusterIP(ctx context.Context, svc *corev1.Service) (string, error) {
	ranges, err := s.readyRanges(ctx)
	if err != nil {
		return "", err
	}
	var bands [][2]uint32
	for _, p := range ranges {
		first, n := givenSpan(p)
		off := staticBand(n+2, 16, 256)
		bands = append(bands, [2]uint32{first + off, n - off}, [2]uint32{first, off})
	}
	var ip string
	found, err := pickFree(bands, func(a uint32) (bool, error) {
		ip, err = s.freeIP(ctx, svc, a)
		return ip != "", err
	}, func() (map[uint32]bool, error) { return s.heldIPs(ctx) })
	if err == nil && !found {
		err = apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP for Service %q: range is full", svc.Name))
	}
	return ip, err
}

// pickFree finds a value free takes, in bands ({first, count}) in order: each is tried with
// allocationAttempts picks (every value of a smaller band, from a random start); when they
// all find taken values, held is read once (the values held) and the band's first value not
// held after a random start is offered, so a nearly full range still gives its last values
// at the cost of one read. It reports whether free took one.
func pickFree(bands [][2]uint32, free func(uint32) (bool, error), held func() (map[uint32]bool, error)) (bool, error) {
	var taken map[uint32]bool
	for _, band := range bands {
		start, count := band[0], band[1]
		if count == 0 {
			continue
		}
		at := randUint32() % count
		for i := uint32(0); i < min(count, allocationAttempts); i++ {
			idx := (at + i) % count
			if count > allocationAttempts {
				idx = randUint32() % count
			}
			if ok, err := free(start + idx); ok || err != nil {
				return ok, err
			}
		}
		if count <= allocationAttempts {
			continue // every value tried
		}
		if taken == nil {
			var err error
			if taken, err = held(); err != nil {
				return false, err
			}
		}
		for i := uint32(0); i < count; i++ {
			if v := start + (at+i)%count; !taken[v] {
				if ok, err := free(v); ok || err != nil {
					return ok, err
				}
			}
		}
	}
	return false, nil
}

// freeIP returns the address a as text when no other service holds it ("" when one does).
func (s *Store) freeIP(ctx context.Context, svc *corev1.Service, a uint32) (string, error) {
	ip := make(net.IP, 4)
	binary.BigEndian.PutUint32(ip, a)
	taken, err := s.ipTaken(ctx, ip.String(), svc)
	if err != nil || taken {
		return "", err
	}
	return ip.String(), nil
}

// heldIPs returns the IPv4 addresses an allocation key or an IPAddress holds.
func (s *Store) heldIPs(ctx context.Context) (map[uint32]bool, error) {
	held := map[uint32]bool{}
	for _, prefix := range []string{allocationPrefix + "clusterips/", s.ipAddresses().KeyPrefix("")} {
		lr, err := s.cfg.Storage.List(ctx, prefix, storage.ListOptions{KeysOnly: true})
		if err != nil {
			return nil, internalError(err)
		}
		for _, kv := range lr.KVs {
			if a, err := netip.ParseAddr(strings.TrimPrefix(kv.Key, prefix)); err == nil && a.Is4() {
				b := a.As4()
				held[binary.BigEndian.Uint32(b[:])] = true
			}
		}
	}
	return held, nil
}

// givenSpan returns the first address an IPv4 range gives (after its network address) and
// how many it gives (all but the network and broadcast addresses).
func givenSpan(p netip.Prefix) (first, n uint32) {
	size := uint64(1) << (32 - p.Bits())
	if size <= 2 {
		return 0, 0
	}
	b := p.Masked().Addr().As4()
	return binary.BigEndian.Uint32(b[:]) + 1, uint32(size - 2)
}

// staticBand is how many of a range's first values upstream's allocators keep for
// requested ones: min(max(16, size/step), most), none for a range of 16 values or fewer
// (addresses: step 16, most 256, KEP-3070; node ports: step 32, most 128, KEP-3668).
func staticBand(size, step, most uint32) uint32 {
	if size <= 16 {
		return 0
	}
	return min(max(16, size/step), most)
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
	// What is recorded, read once: only what is missing is written (a pass over a cluster
	// whose records are whole writes nothing).
	keys, err := s.cfg.Storage.List(ctx, allocationPrefix, storage.ListOptions{})
	if err != nil {
		return internalError(err)
	}
	ipRes := s.ipAddresses()
	ips, _, err := s.ListObjects(ctx, ipRes, "")
	if err != nil {
		return err
	}
	present := make(map[string]bool, len(keys.KVs)+len(ips))
	for _, kv := range keys.KVs {
		present[kv.Key] = true
	}
	for _, o := range ips {
		present[ipRes.Key("", o.(*networkingv1.IPAddress).Name)] = true
	}
	for _, o := range objs {
		svc := o.(*corev1.Service)
		owner := string(allocationOwner(svc))
		byOwner[owner] = svc
		held, addrs := serviceAllocations(svc)
		whole := !slices.ContainsFunc(held, func(k string) bool { return !present[k] }) &&
			!slices.ContainsFunc(addrs, func(ip string) bool { return !present[ipRes.Key("", ip)] })
		if whole {
			continue
		}
		cmps, ops, err := s.allocationChanges(svc, nil) // one guard per put, in order
		if err != nil {
			return err
		}
		for i := range ops {
			if present[ops[i].Key] {
				continue
			}
			if err := try([]storage.Compare{cmps[i], guardOf(owner)}, ops[i]); err != nil {
				return err
			}
		}
	}
	holds := func(owner, key string) bool {
		keys, _ := serviceAllocations(byOwner[owner])
		return slices.Contains(keys, key)
	}
	for _, kv := range keys.KVs {
		if owner := string(kv.Value); !holds(owner, kv.Key) {
			held := storage.Compare{Target: storage.ModRevisionEquals, Key: kv.Key, Revision: kv.ModRevision}
			if err := try([]storage.Compare{held, guardOf(owner)}, storage.Op{Type: storage.OpDelete, Key: kv.Key}); err != nil {
				return err
			}
		}
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
