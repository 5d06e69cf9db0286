package endpointslice

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/utils/net"
	"k8s.io/utils/ptr"
)

// ControllerName is the value of the managed-by label of the slices this controller owns.
const ControllerName = "endpointslice-controller.k8s.io"

// DefaultMaxEndpointsPerSlice is --max-endpoints-per-slice's default.
const DefaultMaxEndpointsPerSlice = 100

// Plan is what a reconcile writes: slices to create, update (whole) and delete.
type Plan struct {
	Create, Update, Delete []*discovery.EndpointSlice
}

// addressTypes is upstream's getAddressTypesForService.
func addressTypes(svc *corev1.Service) []discovery.AddressType {
	var out []discovery.AddressType
	seen := map[discovery.AddressType]bool{}
	for _, f := range svc.Spec.IPFamilies {
		t := discovery.AddressTypeIPv4
		if f == corev1.IPv6Protocol {
			t = discovery.AddressTypeIPv6
		} else if f != corev1.IPv4Protocol {
			continue
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	if len(out) > 0 {
		return out
	}
	if ServiceIPSet(svc) {
		if utilnet.IsIPv6String(svc.Spec.ClusterIP) {
			return []discovery.AddressType{discovery.AddressTypeIPv6}
		}
		return []discovery.AddressType{discovery.AddressTypeIPv4}
	}
	return []discovery.AddressType{discovery.AddressTypeIPv4, discovery.AddressTypeIPv6}
}

// endpointPorts is upstream's getEndpointPorts.
func endpointPorts(svc *corev1.Service, pod *corev1.Pod) []discovery.EndpointPort {
	out := []discovery.EndpointPort{}
	if len(svc.Spec.Ports) == 0 && svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return out
	}
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		n, err := FindPort(pod, sp)
		if err != nil {
			continue
		}
		out = append(out, discovery.EndpointPort{Name: ptr.To(sp.Name), Port: ptr.To(int32(n)), Protocol: ptr.To(sp.Protocol), AppProtocol: sp.AppProtocol})
	}
	return out
}

// portsKey identifies a set of ports (upstream's PortMapKey), order-insensitive.
func portsKey(ports []discovery.EndpointPort) string {
	keys := make([]string, 0, len(ports))
	for _, p := range ports {
		keys = append(keys, fmt.Sprintf("%s/%d/%s/%s", ptr.Deref(p.Name, ""), ptr.Deref(p.Port, 0), ptr.Deref(p.Protocol, ""), ptr.Deref(p.AppProtocol, "")))
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

// addresses is upstream's getEndpointAddresses: the pod IPs of the address type.
func addresses(st corev1.PodStatus, t discovery.AddressType) []string {
	out := []string{}
	for _, pip := range st.PodIPs {
		ip := utilnet.ParseIPSloppy(pip.IP)
		if ip == nil {
			continue
		}
		if utilnet.IsIPv6(ip) == (t == discovery.AddressTypeIPv6) {
			out = append(out, ip.String())
		}
	}
	return out
}

// podEndpoint is upstream's podToEndpoint.
func podEndpoint(pod *corev1.Pod, node *corev1.Node, svc *corev1.Service, t discovery.AddressType) discovery.Endpoint {
	serving := PodReady(pod)
	terminating := pod.DeletionTimestamp != nil
	ready := svc.Spec.PublishNotReadyAddresses || (serving && !terminating)
	ep := discovery.Endpoint{
		Addresses:  addresses(pod.Status, t),
		Conditions: discovery.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &terminating},
		TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
	}
	if pod.Spec.NodeName != "" {
		ep.NodeName = ptr.To(pod.Spec.NodeName)
	}
	if node != nil && node.Labels[corev1.LabelTopologyZone] != "" {
		ep.Zone = ptr.To(node.Labels[corev1.LabelTopologyZone])
	}
	if ShouldSetHostname(pod, svc) {
		ep.Hostname = ptr.To(pod.Spec.Hostname)
	}
	return ep
}

// endpointKey identifies an endpoint across reconciles (upstream's endpoint hash: its
// target, hostname and addresses).
func endpointKey(ep *discovery.Endpoint) string {
	var ref string
	if ep.TargetRef != nil {
		ref = ep.TargetRef.Namespace + "/" + ep.TargetRef.Name
	}
	addrs := append([]string(nil), ep.Addresses...)
	sort.Strings(addrs)
	return ref + "|" + ptr.Deref(ep.Hostname, "") + "|" + strings.Join(addrs, ",")
}

// Prefix is upstream's getEndpointSlicePrefix: "<service>-", or the name when that is no
// DNS subdomain prefix.
func Prefix(name string) string {
	p := name + "-"
	if len(apimachineryvalidation.NameIsDNSSubdomain(p, true)) != 0 {
		return name
	}
	return p
}

func reserved(key string) bool {
	return key == discovery.LabelServiceName || key == discovery.LabelManagedBy || key == corev1.IsHeadlessService
}

// sliceLabels is upstream's setEndpointSliceLabels: the labels slice should have, and
// whether the Service's own labels on it differ.
func sliceLabels(slice *discovery.EndpointSlice, svc *corev1.Service) (map[string]string, bool) {
	have, want := map[string]string{}, map[string]string{}
	for k, v := range slice.Labels {
		if !reserved(k) {
			have[k] = v
		}
	}
	for k, v := range svc.Labels {
		if !reserved(k) {
			want[k] = v
		}
	}
	changed := !equality.Semantic.DeepEqual(have, want)
	if !ServiceIPSet(svc) {
		want[corev1.IsHeadlessService] = ""
	}
	want[discovery.LabelServiceName] = svc.Name
	want[discovery.LabelManagedBy] = ControllerName
	return want, changed
}

func ownedBy(slice *discovery.EndpointSlice, svc *corev1.Service) bool {
	for _, o := range slice.OwnerReferences {
		if o.UID == svc.UID && o.Kind == "Service" && o.APIVersion == "v1" {
			return true
		}
	}
	return false
}

// newSlice is upstream's newEndpointSlice.
func newSlice(svc *corev1.Service, t discovery.AddressType, ports []discovery.EndpointPort) *discovery.EndpointSlice {
	ref := metav1.NewControllerRef(svc, corev1.SchemeGroupVersion.WithKind("Service"))
	s := &discovery.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{GenerateName: Prefix(svc.Name), Namespace: svc.Namespace, OwnerReferences: []metav1.OwnerReference{*ref}},
		AddressType: t, Ports: ports, Endpoints: []discovery.Endpoint{},
	}
	s.Labels, _ = sliceLabels(s, svc)
	return s
}

// NodeFunc returns a node by name, nil when there is none.
type NodeFunc func(name string) *corev1.Node

// Reconcile is upstream's Reconciler.Reconcile as a pure function: the writes that make
// existing (the slices managed by this controller labelled with the Service's name) match
// the pods (those of the namespace that svc selects).
//  1. Slices of an address type the Service no longer has are deleted.
//  2. Per address type: desired endpoints grouped by port set; slices not owned by the
//     Service deleted; per port set, existing slices keep the endpoints still desired
//     (updated where changed, deleted when emptied), new endpoints fill slices being
//     updated, then the unchanged slice closest to full, then new slices.
//  3. With no endpoints at all, one empty placeholder slice.
//  4. A slice to create takes the name of one to delete when it can (an update instead).
func Reconcile(svc *corev1.Service, pods []*corev1.Pod, nodes NodeFunc, existing []*discovery.EndpointSlice, maxPerSlice int) (Plan, error) {
	if maxPerSlice <= 0 {
		maxPerSlice = DefaultMaxEndpointsPerSlice
	}
	var plan Plan
	var errs []string
	types := addressTypes(svc)
	byType := map[discovery.AddressType][]*discovery.EndpointSlice{}
	for _, s := range existing {
		supported := false
		for _, t := range types {
			supported = supported || s.AddressType == t
		}
		if !supported {
			plan.Delete = append(plan.Delete, s)
			continue
		}
		byType[s.AddressType] = append(byType[s.AddressType], s)
	}
	for _, t := range types {
		p, err := reconcileType(svc, pods, nodes, byType[t], t, maxPerSlice)
		if err != nil {
			errs = append(errs, err.Error())
		}
		plan.Create = append(plan.Create, p.Create...)
		plan.Update = append(plan.Update, p.Update...)
		plan.Delete = append(plan.Delete, p.Delete...)
	}
	if len(errs) > 0 {
		return plan, fmt.Errorf("%s", strings.Join(errs, ", "))
	}
	return plan, nil
}

type desiredSet struct {
	order []string
	eps   map[string]*discovery.Endpoint
}

func (d *desiredSet) insert(ep *discovery.Endpoint) {
	k := endpointKey(ep)
	if _, ok := d.eps[k]; !ok {
		d.order = append(d.order, k)
	}
	d.eps[k] = ep
}

func (d *desiredSet) pop() *discovery.Endpoint {
	for len(d.order) > 0 {
		k := d.order[0]
		d.order = d.order[1:]
		if ep, ok := d.eps[k]; ok {
			delete(d.eps, k)
			return ep
		}
	}
	return nil
}

func reconcileType(svc *corev1.Service, pods []*corev1.Pod, nodes NodeFunc, existing []*discovery.EndpointSlice, t discovery.AddressType, maxPerSlice int) (Plan, error) {
	var plan Plan
	var errs []string
	existingByPorts := map[string][]*discovery.EndpointSlice{}
	for _, s := range existing {
		if ownedBy(s, svc) {
			k := portsKey(s.Ports)
			existingByPorts[k] = append(existingByPorts[k], s)
		} else {
			plan.Delete = append(plan.Delete, s)
		}
	}
	desiredPorts := map[string][]discovery.EndpointPort{}
	desired := map[string]*desiredSet{}
	var portOrder []string
	for _, pod := range pods {
		if !ShouldPodBeInEndpoints(pod, true) {
			continue
		}
		ports := endpointPorts(svc, pod)
		k := portsKey(ports)
		if desired[k] == nil {
			desired[k] = &desiredSet{eps: map[string]*discovery.Endpoint{}}
			desiredPorts[k] = ports
			portOrder = append(portOrder, k)
		}
		var node *corev1.Node
		if pod.Spec.NodeName != "" && nodes != nil {
			node = nodes(pod.Spec.NodeName)
		}
		if node == nil && !svc.Spec.PublishNotReadyAddresses {
			errs = append(errs, fmt.Sprintf("skipping Pod %s for Service %s/%s: Node %s Not Found", pod.Name, svc.Namespace, svc.Name, pod.Spec.NodeName))
			continue
		}
		ep := podEndpoint(pod, node, svc, t)
		if len(ep.Addresses) > 0 {
			desired[k].insert(&ep)
		}
	}
	for _, k := range portOrder {
		c, u, d := reconcilePorts(svc, existingByPorts[k], desired[k], t, desiredPorts[k], maxPerSlice)
		plan.Create = append(plan.Create, c...)
		plan.Update = append(plan.Update, u...)
		plan.Delete = append(plan.Delete, d...)
	}
	keys := make([]string, 0, len(existingByPorts))
	for k := range existingByPorts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if desired[k] == nil {
			plan.Delete = append(plan.Delete, existingByPorts[k]...)
		}
	}
	// 3. The placeholder.
	if len(existing) == len(plan.Delete) && len(plan.Create) == 0 {
		ph := newSlice(svc, t, []discovery.EndpointPort{})
		if len(plan.Delete) == 1 && samePlaceholder(plan.Delete[0], ph) {
			plan.Delete = plan.Delete[:0]
		} else {
			plan.Create = append(plan.Create, ph)
		}
	}
	// 4. Creates become updates of slices to delete.
	for i := 0; i < len(plan.Delete) && len(plan.Create) > 0; {
		del := plan.Delete[i]
		s := plan.Create[len(plan.Create)-1]
		if del.AddressType == s.AddressType && ownedBy(del, svc) {
			s.Name = del.Name
			s.GenerateName = del.GenerateName
			s.ResourceVersion = del.ResourceVersion
			s.UID = del.UID
			plan.Create = plan.Create[:len(plan.Create)-1]
			plan.Update = append(plan.Update, s)
			plan.Delete = append(plan.Delete[:i], plan.Delete[i+1:]...)
		} else {
			i++
		}
	}
	if len(errs) > 0 {
		return plan, fmt.Errorf("%s", strings.Join(errs, ", "))
	}
	return plan, nil
}

// samePlaceholder is upstream's placeholderSliceCompare: the same everything, metadata
// compared by namespace and labels only.
func samePlaceholder(a, b *discovery.EndpointSlice) bool {
	if a.Namespace != b.Namespace || !equality.Semantic.DeepEqual(labelsOrEmpty(a.Labels), labelsOrEmpty(b.Labels)) {
		return false
	}
	if len(a.OwnerReferences) != len(b.OwnerReferences) {
		return false
	}
	for i := range a.OwnerReferences {
		if a.OwnerReferences[i].String() != b.OwnerReferences[i].String() {
			return false
		}
	}
	return a.AddressType == b.AddressType && len(a.Endpoints) == 0 && len(b.Endpoints) == 0 && len(a.Ports) == 0 && len(b.Ports) == 0
}

func labelsOrEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// reconcilePorts is upstream's reconcileByPortMapping.
func reconcilePorts(svc *corev1.Service, existing []*discovery.EndpointSlice, want *desiredSet, t discovery.AddressType, ports []discovery.EndpointPort, maxPerSlice int) (create, update, del []*discovery.EndpointSlice) {
	byName := map[string]*discovery.EndpointSlice{}
	var unchanged, toUpdate []string
	for _, s := range existing {
		byName[s.Name] = s
		kept := []discovery.Endpoint{}
		changed := false
		for i := range s.Endpoints {
			ep := &s.Endpoints[i]
			k := endpointKey(ep)
			if got, ok := want.eps[k]; ok {
				kept = append(kept, *got)
				if !equality.Semantic.DeepEqual(*got, *ep) {
					changed = true
				}
				delete(want.eps, k)
			}
		}
		labels, labelsChanged := sliceLabels(s, svc)
		switch {
		case changed || len(kept) != len(s.Endpoints):
			if len(kept) == 0 {
				del = append(del, s)
				continue
			}
			c := s.DeepCopy()
			c.Endpoints, c.Labels = kept, labels
			byName[s.Name] = c
			toUpdate = append(toUpdate, s.Name)
		case labelsChanged:
			c := s.DeepCopy()
			c.Labels = labels
			byName[s.Name] = c
			toUpdate = append(toUpdate, s.Name)
		default:
			unchanged = append(unchanged, s.Name)
		}
	}
	// New endpoints fill the slices being updated first, the emptiest first... as upstream:
	// sorted by length, most endpoints first.
	if len(want.eps) > 0 && len(toUpdate) > 0 {
		slices := make([]*discovery.EndpointSlice, 0, len(toUpdate))
		for _, n := range toUpdate {
			slices = append(slices, byName[n])
		}
		sort.SliceStable(slices, func(i, j int) bool { return len(slices[i].Endpoints) > len(slices[j].Endpoints) })
		for _, s := range slices {
			for len(want.eps) > 0 && len(s.Endpoints) < maxPerSlice {
				s.Endpoints = append(s.Endpoints, *want.pop())
			}
		}
	}
	updated := map[string]bool{}
	for _, n := range toUpdate {
		updated[n] = true
	}
	for len(want.eps) > 0 {
		var fill *discovery.EndpointSlice
		if len(want.eps) < maxPerSlice && len(unchanged) > 0 {
			closest := maxPerSlice
			for _, n := range unchanged {
				s := byName[n]
				if updated[n] {
					continue
				}
				if diff := maxPerSlice - (len(want.eps) + len(s.Endpoints)); diff >= 0 && diff < closest {
					closest, fill = diff, s
				}
			}
		}
		if fill == nil {
			fill = newSlice(svc, t, ports)
		} else {
			fill = fill.DeepCopy()
			byName[fill.Name] = fill
		}
		for len(want.eps) > 0 && len(fill.Endpoints) < maxPerSlice {
			fill.Endpoints = append(fill.Endpoints, *want.pop())
		}
		if fill.Name != "" {
			toUpdate = append(toUpdate, fill.Name)
			updated[fill.Name] = true
		} else {
			create = append(create, fill)
		}
	}
	for _, n := range toUpdate {
		update = append(update, byName[n])
	}
	return create, update, del
}
