package endpoints

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/dump"
	"k8s.io/utils/clock"
	utilnet "k8s.io/utils/net"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/controller/endpointslice"
	"github.com/quotad/quotad/internal/controller/record"
	"github.com/quotad/quotad/internal/registry"
)

// Upstream's names and bounds.
const (
	ControllerName = "endpoint-controller"
	LabelManagedBy = "endpoints.kubernetes.io/managed-by"
	MaxCapacity    = 1000
	truncated      = "truncated"
)

var endpointsGVR = corev1.SchemeGroupVersion.WithResource("endpoints")

// address is upstream's podToEndpointAddressForService: the pod's IP of the Service's
// first family, its node and a reference to it.
func address(svc *corev1.Service, pod *corev1.Pod) (*corev1.EndpointAddress, error) {
	family := corev1.IPv4Protocol
	if len(svc.Spec.IPFamilies) > 0 {
		family = svc.Spec.IPFamilies[0]
	} else if svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone {
		if utilnet.IsIPv6String(svc.Spec.ClusterIP) {
			family = corev1.IPv6Protocol
		}
	} else if utilnet.IsIPv6String(pod.Status.PodIP) {
		family = corev1.IPv6Protocol
	}
	var ipStr string
	for _, pip := range pod.Status.PodIPs {
		ip := utilnet.ParseIPSloppy(pip.IP)
		if ip != nil && utilnet.IsIPv6(ip) == (family == corev1.IPv6Protocol) {
			ipStr = ip.String()
			break
		}
	}
	if ipStr == "" {
		return nil, fmt.Errorf("failed to find a matching endpoint for service %v", svc.Name)
	}
	node := pod.Spec.NodeName
	return &corev1.EndpointAddress{IP: ipStr, NodeName: &node,
		TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}}, nil
}

// Subsets computes the subsets of svc's Endpoints from the pods it selects, as upstream's
// syncService does before comparing: one subset per pod and port, then repacked.
func Subsets(svc *corev1.Service, pods []*corev1.Pod) []corev1.EndpointSubset {
	subsets := []corev1.EndpointSubset{}
	add := func(pod *corev1.Pod, epa corev1.EndpointAddress, epp *corev1.EndpointPort) {
		ports := []corev1.EndpointPort{}
		if epp != nil {
			ports = append(ports, *epp)
		}
		if svc.Spec.PublishNotReadyAddresses || endpointslice.PodReady(pod) {
			subsets = append(subsets, corev1.EndpointSubset{Addresses: []corev1.EndpointAddress{epa}, Ports: ports})
		} else {
			subsets = append(subsets, corev1.EndpointSubset{NotReadyAddresses: []corev1.EndpointAddress{epa}, Ports: ports})
		}
	}
	for _, pod := range pods {
		if !endpointslice.ShouldPodBeInEndpoints(pod, svc.Spec.PublishNotReadyAddresses) {
			continue
		}
		ep, err := address(svc, pod)
		if err != nil {
			continue
		}
		epa := *ep
		if endpointslice.ShouldSetHostname(pod, svc) {
			epa.Hostname = pod.Spec.Hostname
		}
		if len(svc.Spec.Ports) == 0 {
			if svc.Spec.ClusterIP == corev1.ClusterIPNone {
				add(pod, epa, nil)
			}
			continue
		}
		for i := range svc.Spec.Ports {
			sp := &svc.Spec.Ports[i]
			n, err := endpointslice.FindPort(pod, sp)
			if err != nil {
				continue
			}
			add(pod, epa, &corev1.EndpointPort{Name: sp.Name, Port: int32(n), Protocol: sp.Protocol, AppProtocol: sp.AppProtocol})
		}
	}
	return Repack(subsets)
}

// Repack is upstream's RepackSubsets: addresses grouped by the set of ports they serve (an
// address ready on one port and not on another is not ready), sorted as SortSubsets.
func Repack(subsets []corev1.EndpointSubset) []corev1.EndpointSubset {
	type addrKey struct {
		ip  string
		uid string
	}
	all := map[addrKey]*corev1.EndpointAddress{}
	var order []addrKey
	byPort := map[corev1.EndpointPort]map[addrKey]bool{}
	var portOrder []corev1.EndpointPort
	mapAddr := func(a *corev1.EndpointAddress, port corev1.EndpointPort, ready bool) {
		k := addrKey{ip: a.IP}
		if a.TargetRef != nil {
			k.uid = string(a.TargetRef.UID)
		}
		if all[k] == nil {
			c := *a
			all[k] = &c
			order = append(order, k)
		}
		if byPort[port] == nil {
			byPort[port] = map[addrKey]bool{}
			portOrder = append(portOrder, port)
		}
		if was, found := byPort[port][k]; !found || was {
			byPort[port][k] = ready
		}
	}
	for i := range subsets {
		ports := subsets[i].Ports
		if len(ports) == 0 {
			ports = []corev1.EndpointPort{{Port: -1}}
		}
		for _, p := range ports {
			for j := range subsets[i].Addresses {
				mapAddr(&subsets[i].Addresses[j], p, true)
			}
			for j := range subsets[i].NotReadyAddresses {
				mapAddr(&subsets[i].NotReadyAddresses[j], p, false)
			}
		}
	}
	// Ports with the same addresses (and readiness) share a subset.
	groupKey := func(m map[addrKey]bool) string {
		keys := make([]string, 0, len(m))
		for k, r := range m {
			keys = append(keys, fmt.Sprintf("%s\x00%s\x00%v", k.ip, k.uid, r))
		}
		sort.Strings(keys)
		return strings.Join(keys, "\x01")
	}
	groups := map[string][]corev1.EndpointPort{}
	groupAddrs := map[string]map[addrKey]bool{}
	var groupOrder []string
	for _, p := range portOrder {
		g := groupKey(byPort[p])
		if _, ok := groupAddrs[g]; !ok {
			groupAddrs[g] = byPort[p]
			groupOrder = append(groupOrder, g)
			groups[g] = nil
		}
		if p.Port > 0 {
			groups[g] = append(groups[g], p)
		}
	}
	final := []corev1.EndpointSubset{}
	for _, g := range groupOrder {
		var ready, notReady []corev1.EndpointAddress
		for _, k := range order {
			r, ok := groupAddrs[g][k]
			if !ok {
				continue
			}
			if r {
				ready = append(ready, *all[k])
			} else {
				notReady = append(notReady, *all[k])
			}
		}
		final = append(final, corev1.EndpointSubset{Addresses: ready, NotReadyAddresses: notReady, Ports: groups[g]})
	}
	return sortSubsets(final)
}

// hashOf is upstream's DeepHashObject with FNV-128a.
func hashOf(obj interface{}) []byte {
	h := fnv.New128a()
	fmt.Fprintf(h, "%v", dump.ForHash(obj))
	return h.Sum(nil)
}

// lessAddress is upstream's LessEndpointAddress: by IP, then target UID.
func lessAddress(a, b *corev1.EndpointAddress) bool {
	if c := bytes.Compare([]byte(a.IP), []byte(b.IP)); c != 0 {
		return c < 0
	}
	if b.TargetRef == nil {
		return false
	}
	if a.TargetRef == nil {
		return true
	}
	return a.TargetRef.UID < b.TargetRef.UID
}

// sortSubsets is upstream's SortSubsets.
func sortSubsets(subsets []corev1.EndpointSubset) []corev1.EndpointSubset {
	for i := range subsets {
		s := &subsets[i]
		sort.Slice(s.Addresses, func(a, b int) bool { return lessAddress(&s.Addresses[a], &s.Addresses[b]) })
		sort.Slice(s.NotReadyAddresses, func(a, b int) bool { return lessAddress(&s.NotReadyAddresses[a], &s.NotReadyAddresses[b]) })
		sort.Slice(s.Ports, func(a, b int) bool { return bytes.Compare(hashOf(s.Ports[a]), hashOf(s.Ports[b])) < 0 })
	}
	sort.Slice(subsets, func(a, b int) bool { return bytes.Compare(hashOf(subsets[a]), hashOf(subsets[b])) < 0 })
	return subsets
}

// Truncate is upstream's truncateEndpoints: past MaxCapacity addresses, not-ready ones are
// cut first (or, past it in ready ones alone, every not-ready one and ready ones beyond
// it), each subset keeping its share; it reports whether it cut.
func Truncate(ep *corev1.Endpoints) bool {
	ready, notReady := 0, 0
	for _, s := range ep.Subsets {
		ready += len(s.Addresses)
		notReady += len(s.NotReadyAddresses)
	}
	if ready+notReady <= MaxCapacity {
		return false
	}
	truncateReady := false
	max := MaxCapacity - ready
	total := notReady
	if ready > MaxCapacity {
		truncateReady, max, total = true, MaxCapacity, ready
	}
	left := max
	for i := range ep.Subsets {
		s := ep.Subsets[i]
		n := len(s.Addresses)
		if !truncateReady {
			n = len(s.NotReadyAddresses)
		}
		add := int(math.Ceil(float64(n) / float64(total) * float64(max)))
		if add > left {
			add = left
		}
		if truncateReady {
			if len(s.Addresses) > add {
				s.Addresses = s.Addresses[:add]
			}
			s.NotReadyAddresses = []corev1.EndpointAddress{}
			left -= len(s.Addresses)
		} else {
			if len(s.NotReadyAddresses) > add {
				s.NotReadyAddresses = s.NotReadyAddresses[:add]
			}
			left -= len(s.NotReadyAddresses)
		}
		ep.Subsets[i] = s
	}
	return true
}

// subsetsEqual compares subsets ignoring target resourceVersions.
func subsetsEqual(a, b []corev1.EndpointSubset) bool {
	strip := func(in []corev1.EndpointSubset) []corev1.EndpointSubset {
		out := make([]corev1.EndpointSubset, len(in))
		for i := range in {
			out[i] = *in[i].DeepCopy()
			for _, l := range [][]corev1.EndpointAddress{out[i].Addresses, out[i].NotReadyAddresses} {
				for j := range l {
					if l[j].TargetRef != nil {
						l[j].TargetRef.ResourceVersion = ""
					}
				}
			}
		}
		return out
	}
	return equality.Semantic.DeepEqual(strip(a), strip(b))
}

// labelsCorrect is upstream's labelsCorrectForEndpoints.
func labelsCorrect(ep, svc map[string]string) bool {
	if ep[LabelManagedBy] != ControllerName {
		return false
	}
	skipped := 0
	for k, v := range ep {
		if k == corev1.IsHeadlessService || k == LabelManagedBy {
			skipped++
		} else if sv, ok := svc[k]; !ok || sv != v {
			return false
		}
	}
	return len(svc) == len(ep)-skipped
}

// capacityCorrect is upstream's capacityAnnotationSetCorrectly.
func capacityCorrect(ann map[string]string, subsets []corev1.EndpointSubset) bool {
	n := 0
	for _, s := range subsets {
		n += len(s.Addresses) + len(s.NotReadyAddresses)
	}
	if n > MaxCapacity {
		return false
	}
	_, ok := ann[corev1.EndpointsOverCapacity]
	return !ok
}

// Desired returns the Endpoints svc should have given the current one (nil for none) and
// the pods it selects, or nil when current is already right.
func Desired(svc *corev1.Service, current *corev1.Endpoints, pods []*corev1.Pod) *corev1.Endpoints {
	subsets := Subsets(svc, pods)
	if current != nil && (subsetsEqual(current.Subsets, subsets) || subsetsEqual(Repack(current.DeepCopy().Subsets), subsets)) &&
		labelsCorrect(current.Labels, svc.Labels) && capacityCorrect(current.Annotations, current.Subsets) {
		return nil
	}
	var ep *corev1.Endpoints
	if current != nil {
		ep = current.DeepCopy()
	} else {
		ep = &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Namespace: svc.Namespace}}
	}
	ep.Subsets = subsets
	ep.Labels = map[string]string{}
	for k, v := range svc.Labels {
		ep.Labels[k] = v
	}
	if ep.Annotations == nil {
		ep.Annotations = map[string]string{}
	}
	delete(ep.Annotations, corev1.EndpointsLastChangeTriggerTime)
	if Truncate(ep) {
		ep.Annotations[corev1.EndpointsOverCapacity] = truncated
	} else {
		delete(ep.Annotations, corev1.EndpointsOverCapacity)
	}
	if !endpointslice.ServiceIPSet(svc) {
		ep.Labels[corev1.IsHeadlessService] = ""
	} else {
		delete(ep.Labels, corev1.IsHeadlessService)
	}
	ep.Labels[LabelManagedBy] = ControllerName
	return ep
}

// Options configures the controller.
type Options struct {
	// Pods, when set, is the index of pods shared with the other controllers watching
	// every pod (it must then run once the controller has started: SharedPods.Run); nil:
	// an index of its own, watched from Start.
	Pods   *controller.SharedPods
	Panics controller.PanicObserver
	Log    *slog.Logger
}

// Controller is the endpoints controller.
type Controller struct {
	store controller.Client
	log   *slog.Logger
	loop  *controller.Loop
	rec   *record.Recorder
	w     *endpointslice.Watcher
}

// New returns the controller.
func New(store controller.Client, opts Options) *Controller {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	return &Controller{store: store, log: opts.Log, loop: controller.NewLoop(ControllerName, store, opts.Log, opts.Panics, nil),
		rec: record.NewRecorder(store, ControllerName, clock.RealClock{}, opts.Log), w: endpointslice.NewWatcher(opts.Pods)}
}

// Start runs the controller until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	c.rec.Start(ctx) // the event recorder stops with the controller
	q := controller.NewQueue("endpoint")
	cat := c.store.Catalogue()
	c.w.Watch(ctx, c.loop, cat, q)
	// Endpoints changed by others (or left over) are checked against their Service.
	go c.loop.Watch(ctx, cat.Get(endpointsGVR), controller.On(func(ep *corev1.Endpoints, deleted bool) {
		if ep.Labels[LabelManagedBy] == ControllerName || deleted {
			q.Add(ep.Namespace + "/" + ep.Name)
		}
	}))
	c.loop.Process(ctx, q, 4, func(ctx context.Context, key string) (time.Duration, error) {
		return 0, c.Sync(ctx, key)
	})
	return nil
}

// Sync is upstream's syncService for one Service ("ns/name"): the Service and its Endpoints
// read from storage, its pods from the watcher's cache.
func (c *Controller) Sync(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	cat := c.store.Catalogue()
	epRes := cat.Get(endpointsGVR)
	obj, err := c.store.Get(ctx, cat.Get(endpointslice.ServicesGVR), ns, name)
	if apierrors.IsNotFound(err) {
		// The Service is gone: so is its Endpoints, if this controller made it.
		cur, gerr := c.store.Get(ctx, epRes, ns, name)
		if gerr != nil {
			if apierrors.IsNotFound(gerr) {
				return nil
			}
			return gerr
		}
		ep, _ := cur.(*corev1.Endpoints)
		if ep == nil || ep.Labels[LabelManagedBy] != ControllerName {
			return nil
		}
		uid := ep.UID
		_, err = c.store.Delete(ctx, epRes, ns, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}, registry.WriteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return nil
	}
	if err != nil {
		return err
	}
	svc, err := controller.As[*corev1.Service](obj)
	if err != nil {
		return err
	}
	if !endpointslice.Managed(svc) {
		return nil
	}
	pods := c.w.PodsOf(svc)
	var current *corev1.Endpoints
	if o, err := c.store.Get(ctx, epRes, ns, name); err == nil {
		current, _ = o.(*corev1.Endpoints)
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	want := Desired(svc, current, pods)
	if want == nil {
		return nil
	}
	if current == nil {
		_, err = c.store.Create(ctx, epRes, ns, want, registry.WriteOptions{})
		if err != nil {
			if apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
				return nil
			}
			c.rec.Eventf(ctx, want, corev1.EventTypeWarning, "FailedToCreateEndpoint", "Failed to create endpoint for service %v/%v: %v", ns, name, err)
		}
		return err
	}
	_, err = c.store.Update(ctx, epRes, ns, name, "", func(cur runtime.Object) (runtime.Object, error) {
		have, err := controller.As[*corev1.Endpoints](cur)
		if err != nil {
			return nil, err
		}
		if have.ResourceVersion != current.ResourceVersion {
			return nil, apierrors.NewConflict(epRes.GroupResource(), name, fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
		}
		return want, nil
	}, registry.WriteOptions{})
	if err != nil {
		c.rec.Eventf(ctx, want, corev1.EventTypeWarning, "FailedToUpdateEndpoint", "Failed to update endpoint %v/%v: %v", ns, name, err)
	}
	return err
}
