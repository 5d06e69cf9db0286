package kubernetesservice

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

// Names and labels of upstream's objects.
const (
	Name           = "kubernetes"
	Namespace      = metav1.NamespaceDefault
	PortName       = "https"
	ServicePort    = 443
	serviceNameKey = discoveryv1.LabelServiceName
	skipMirrorKey  = discoveryv1.LabelSkipMirror
	// HeartbeatsAnnotation holds, as JSON, each replica's address and its last heartbeat.
	HeartbeatsAnnotation = "endpoints.quotad.io/apiserver-heartbeats"
	// DefaultInterval is how often a replica renews its heartbeat (upstream's 10 s).
	DefaultInterval = 10 * time.Second
)

// Endpoint is one replica's advertised address and secure port.
type Endpoint struct {
	IP   string
	Port int32
}

func (e Endpoint) key() string { return net.JoinHostPort(e.IP, strconv.Itoa(int(e.Port))) }

// Controller reconciles the kubernetes Service, Endpoints and EndpointSlice.
type Controller struct {
	store controller.Client
	log   *slog.Logger
	loop  *controller.Loop
	self  Endpoint
	// serviceIP is the kubernetes Service's cluster IP.
	serviceIP string
	interval  time.Duration
	clock     clock.WithTicker
}

// New returns the controller of replica self, for the kubernetes Service at serviceIP (the
// first address of the service range); interval 0 is DefaultInterval.
func New(store controller.Client, log *slog.Logger, panics controller.PanicObserver, self Endpoint, serviceIP string, interval time.Duration) *Controller {
	return NewWithClock(store, log, panics, self, serviceIP, interval, clock.RealClock{})
}

// NewWithClock is New with the clock its heartbeats and ticks read.
func NewWithClock(store controller.Client, log *slog.Logger, panics controller.PanicObserver, self Endpoint, serviceIP string, interval time.Duration, clk clock.WithTicker) *Controller {
	if log == nil {
		log = slog.Default()
	}
	if interval <= 0 {
		interval = DefaultInterval
	}
	return &Controller{store: store, log: log, loop: controller.NewLoop("kubernetes-service", store, log, panics, nil), self: self, serviceIP: serviceIP, interval: interval, clock: clk}
}

// Start reconciles every interval until ctx ends (call Reconcile first to have the objects
// before serving).
func (c *Controller) Start(ctx context.Context) error {
	t := c.clock.NewTicker(c.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
		c.loop.Guard("reconcile", func() {
			if err := c.Reconcile(ctx); err != nil && ctx.Err() == nil {
				c.log.Warn("reconciling the kubernetes service", "err", err)
			}
		})
	}
}

// Reconcile writes this replica's heartbeat and brings the three objects to Desired.
//  1. The Endpoints: this replica's heartbeat renewed, stale replicas dropped.
//  2. The EndpointSlice and the Service, from the same heartbeats.
func (c *Controller) Reconcile(ctx context.Context) error {
	beats, err := c.reconcileEndpoints(ctx)
	if err != nil {
		return err
	}
	_, slice, svc := Desired(beats, c.serviceIP)
	if err := c.reconcileSlice(ctx, slice); err != nil {
		return err
	}
	return c.reconcileService(ctx, svc)
}

func (c *Controller) res(gv, resource string) *registry.Resource {
	for _, r := range c.store.Catalogue().All() {
		if r.GVR.GroupVersion().String() == gv && r.GVR.Resource == resource {
			return r
		}
	}
	return nil
}

// Heartbeats reads the heartbeats annotation (address → time).
func Heartbeats(ep *corev1.Endpoints) map[string]time.Time {
	out := map[string]time.Time{}
	if ep == nil {
		return out
	}
	_ = json.Unmarshal([]byte(ep.Annotations[HeartbeatsAnnotation]), &out)
	return out
}

func (c *Controller) reconcileEndpoints(ctx context.Context) (map[string]time.Time, error) {
	res := c.res("v1", "endpoints")
	now := c.clock.Now().UTC().Truncate(time.Second)
	var beats map[string]time.Time
	build := func(cur *corev1.Endpoints) *corev1.Endpoints {
		beats = Heartbeats(cur)
		for k, at := range beats {
			if now.Sub(at) > 3*c.interval {
				delete(beats, k)
			}
		}
		beats[c.self.key()] = now
		want, _, _ := Desired(beats, c.serviceIP)
		if cur != nil {
			want.ObjectMeta = *cur.ObjectMeta.DeepCopy()
			if want.Labels == nil {
				want.Labels = map[string]string{}
			}
			want.Labels[skipMirrorKey] = "true"
		}
		b, _ := json.Marshal(beats)
		if want.Annotations == nil {
			want.Annotations = map[string]string{}
		}
		want.Annotations[HeartbeatsAnnotation] = string(b)
		return want
	}
	_, err := c.store.Update(ctx, res, Namespace, Name, "", func(cur runtime.Object) (runtime.Object, error) {
		ep, err := controller.As[*corev1.Endpoints](cur)
		if err != nil {
			return nil, err
		}
		return build(ep), nil
	}, registry.WriteOptions{SkipValidation: true})
	if apierrors.IsNotFound(err) {
		_, err = c.store.Create(ctx, res, Namespace, build(nil), registry.WriteOptions{SkipValidation: true})
		if apierrors.IsAlreadyExists(err) {
			return c.reconcileEndpoints(ctx)
		}
	}
	return beats, err
}

func (c *Controller) reconcileSlice(ctx context.Context, want *discoveryv1.EndpointSlice) error {
	res := c.res("discovery.k8s.io/v1", "endpointslices")
	_, err := c.store.Update(ctx, res, Namespace, Name, "", func(cur runtime.Object) (runtime.Object, error) {
		es, err := controller.As[*discoveryv1.EndpointSlice](cur)
		if err != nil {
			return nil, err
		}
		if es.Labels == nil {
			es.Labels = map[string]string{}
		}
		es.Labels[serviceNameKey] = Name
		es.AddressType, es.Endpoints, es.Ports = want.AddressType, want.Endpoints, want.Ports
		return es, nil
	}, registry.WriteOptions{SkipValidation: true})
	if apierrors.IsNotFound(err) {
		_, err = c.store.Create(ctx, res, Namespace, want, registry.WriteOptions{SkipValidation: true})
		if apierrors.IsAlreadyExists(err) {
			return c.reconcileSlice(ctx, want)
		}
	}
	return err
}

// reconcileService creates the Service when it is missing and keeps its ports.
func (c *Controller) reconcileService(ctx context.Context, want *corev1.Service) error {
	res := c.res("v1", "services")
	obj, err := c.store.Get(ctx, res, Namespace, Name)
	if apierrors.IsNotFound(err) {
		_, err = c.store.Create(ctx, res, Namespace, want, registry.WriteOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}
	if err != nil {
		return err
	}
	svc, err := controller.As[*corev1.Service](obj)
	if err != nil {
		return err
	}
	if svc.Spec.Type == corev1.ServiceTypeClusterIP && equality.Semantic.DeepEqual(svc.Spec.Ports, want.Spec.Ports) {
		return nil
	}
	_, err = c.store.Update(ctx, res, Namespace, Name, "", func(cur runtime.Object) (runtime.Object, error) {
		s, err := controller.As[*corev1.Service](cur)
		if err != nil {
			return nil, err
		}
		s.Spec.Type = corev1.ServiceTypeClusterIP
		s.Spec.Ports = want.Spec.Ports
		return s, nil
	}, registry.WriteOptions{})
	return err
}

// Desired returns the Endpoints, EndpointSlice and Service the heartbeats call for (object
// metadata beyond name, namespace and labels is the caller's). Replicas are grouped by
// port; the EndpointSlice and the Service's targetPort follow the group of most replicas
// (the lowest port on a tie), so every replica computes the same objects.
func Desired(beats map[string]time.Time, svcIP string) (*corev1.Endpoints, *discoveryv1.EndpointSlice, *corev1.Service) {
	byPort := map[int32][]string{}
	for k := range beats {
		host, port, err := net.SplitHostPort(k)
		n, perr := strconv.Atoi(port)
		if err != nil || perr != nil || net.ParseIP(host) == nil {
			continue
		}
		byPort[int32(n)] = append(byPort[int32(n)], host)
	}
	ports := make([]int32, 0, len(byPort))
	for p := range byPort {
		sort.Strings(byPort[p])
		ports = append(ports, p)
	}
	sort.Slice(ports, func(i, j int) bool { return ports[i] < ports[j] })
	var main int32
	for _, p := range ports {
		if main == 0 || len(byPort[p]) > len(byPort[main]) {
			main = p
		}
	}
	ep := &corev1.Endpoints{
		TypeMeta:   metav1.TypeMeta{Kind: "Endpoints", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: Namespace, Labels: map[string]string{skipMirrorKey: "true"}},
	}
	for _, p := range ports {
		ss := corev1.EndpointSubset{Ports: []corev1.EndpointPort{{Name: PortName, Port: p, Protocol: corev1.ProtocolTCP}}}
		for _, ip := range byPort[p] {
			ss.Addresses = append(ss.Addresses, corev1.EndpointAddress{IP: ip})
		}
		ep.Subsets = append(ep.Subsets, ss)
	}
	addrType := discoveryv1.AddressTypeIPv4
	if len(byPort[main]) > 0 && net.ParseIP(byPort[main][0]).To4() == nil {
		addrType = discoveryv1.AddressTypeIPv6
	}
	name, tcp, ready := PortName, corev1.ProtocolTCP, true
	mainPort := main
	slice := &discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{Kind: "EndpointSlice", APIVersion: "discovery.k8s.io/v1"},
		ObjectMeta:  metav1.ObjectMeta{Name: Name, Namespace: Namespace, Labels: map[string]string{serviceNameKey: Name}},
		AddressType: addrType,
		Ports:       []discoveryv1.EndpointPort{{Name: &name, Port: &mainPort, Protocol: &tcp}},
	}
	for _, ip := range byPort[main] {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}})
	}
	policy := corev1.IPFamilyPolicySingleStack
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{Kind: "Service", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: Name, Namespace: Namespace, Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIP: svcIP, ClusterIPs: []string{svcIP},
			Ports:           []corev1.ServicePort{{Name: PortName, Port: ServicePort, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(main)}},
			SessionAffinity: corev1.ServiceAffinityNone, IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol}, IPFamilyPolicy: &policy,
		},
	}
	return ep, slice, svc
}
