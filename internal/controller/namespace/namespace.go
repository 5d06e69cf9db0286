package namespace

import (
	"context"
	"errors"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

// RootCAConfigMap is the name of the ConfigMap publishing the cluster CA in every namespace.
const RootCAConfigMap = "kube-root-ca.crt"

// Retry intervals of a Terminating namespace whose content is held by finalizers: soon
// at first, then upstream's finalizerEstimateSeconds.
const (
	heldRetryFirst = time.Second
	heldRetryLater = 15 * time.Second
	heldRetrySoon  = time.Minute
)

// Options are the injectable parts of the controller.
type Options struct {
	// Clock stamps condition transitions (default: the real clock).
	Clock clock.PassiveClock
	// Panics counts recovered panics (may be nil).
	Panics controller.PanicObserver
}

// Client is what the namespace controller reads and writes through: a controller's
// client and the removal of a namespace's spec finalizers (*registry.Store).
type Client interface {
	controller.Client
	FinalizeNamespace(ctx context.Context, name string, body *corev1.Namespace) (*registry.Result, error)
}

// Controller is the namespace controller.
type Controller struct {
	store Client
	caPEM []byte
	log   *slog.Logger
	clock clock.PassiveClock
	loop  *controller.Loop
}

// New returns a namespace controller publishing caPEM.
func New(store Client, caPEM []byte, log *slog.Logger, opts Options) *Controller {
	if log == nil {
		log = slog.Default()
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &Controller{store: store, caPEM: caPEM, log: log, clock: opts.Clock,
		loop: controller.NewLoop("namespace", store, log, opts.Panics, opts.Clock)}
}

func (c *Controller) res(resource string) *registry.Resource {
	return c.store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource(resource))
}

// Start runs the controller until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	q := controller.NewQueue("namespace")
	go c.loop.Watch(ctx, c.res("namespaces"), controller.On(func(ns *corev1.Namespace, deleted bool) {
		if !deleted {
			q.Add(ns.Name)
		}
	}))
	go c.loop.Watch(ctx, c.res("configmaps"), controller.On(func(cm *corev1.ConfigMap, deleted bool) {
		if cm.Name == RootCAConfigMap {
			q.Add(cm.Namespace)
		}
	}))
	go c.loop.Watch(ctx, c.res("serviceaccounts"), controller.On(func(sa *corev1.ServiceAccount, deleted bool) {
		if sa.Name == "default" {
			q.Add(sa.Namespace)
		}
	}))
	c.loop.Process(ctx, q, 2, c.sync)
	return nil
}

func (c *Controller) sync(ctx context.Context, name string) (time.Duration, error) {
	obj, err := c.store.Get(ctx, c.res("namespaces"), "", name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	ns, err := controller.As[*corev1.Namespace](obj)
	if err != nil {
		return 0, err
	}
	if ns.DeletionTimestamp != nil {
		return c.terminate(ctx, ns)
	}
	return 0, c.publish(ctx, ns.Name)
}

// publish creates the default ServiceAccount and the root CA ConfigMap when missing, and
// restores the ConfigMap's data when changed.
func (c *Controller) publish(ctx context.Context, ns string) error {
	if _, err := c.store.Get(ctx, c.res("serviceaccounts"), ns, "default"); apierrors.IsNotFound(err) {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}
		if _, err := c.store.Create(ctx, c.res("serviceaccounts"), ns, sa, registry.WriteOptions{}); err != nil && !ignorable(err) {
			return err
		}
	} else if err != nil {
		return err
	}
	want := map[string]string{"ca.crt": string(c.caPEM)}
	cur, err := c.store.Get(ctx, c.res("configmaps"), ns, RootCAConfigMap)
	if apierrors.IsNotFound(err) {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: RootCAConfigMap, Namespace: ns, Annotations: map[string]string{"kubernetes.io/description": "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."}},
			Data:       want,
		}
		if _, err := c.store.Create(ctx, c.res("configmaps"), ns, cm, registry.WriteOptions{}); err != nil && !ignorable(err) {
			return err
		}
		return nil
	}
	if err != nil {
		return err
	}
	cm, err := controller.As[*corev1.ConfigMap](cur)
	if err != nil {
		return err
	}
	if bundle := caBundle(cm.Data["ca.crt"], c.caPEM, c.clock.Now()); cm.Data["ca.crt"] != bundle || len(cm.Data) != 1 {
		_, err := c.store.Update(ctx, c.res("configmaps"), ns, RootCAConfigMap, "", func(o runtime.Object) (runtime.Object, error) {
			cm, err := controller.As[*corev1.ConfigMap](o)
			if err != nil {
				return nil, err
			}
			cm.Data = map[string]string{"ca.crt": caBundle(cm.Data["ca.crt"], c.caPEM, c.clock.Now())}
			return cm, nil
		}, registry.WriteOptions{})
		if err != nil && !ignorable(err) {
			return err
		}
	}
	return nil
}

// ignorable reports errors that mean someone else already did the work, or the namespace
// is going away.
func ignorable(err error) bool {
	return apierrors.IsAlreadyExists(err) || apierrors.IsNotFound(err) || apierrors.IsForbidden(err) || apierrors.IsConflict(err)
}

// terminate is upstream's namespace deleter for one pass over a Terminating namespace:
//
//  1. every served namespaced group-resource (custom resources included) is listed and
//     each object not yet being deleted is deleted (through the registry: quotas are
//     credited in the same transaction);
//  2. what is listed afterwards remains, counted with the finalizers that hold it;
//  3. the namespace's deletion conditions are set from that (written only when changed),
//     so `kubectl describe namespace` says what holds it;
//  4. errors are retried with backoff; content held by finalizers is looked at again
//     later; with nothing left the `kubernetes` finalizer is removed, deleting ns.
func (c *Controller) terminate(ctx context.Context, ns *corev1.Namespace) (time.Duration, error) {
	if len(ns.Spec.Finalizers) == 0 {
		// Finalized: what holds it now is metadata finalizers, not its content.
		return 0, nil
	}
	report := newContentReport()
	for _, res := range c.namespacedResources() {
		c.deleteContent(ctx, ns.Name, res, report)
	}
	if err := c.setConditions(ctx, ns.Name, report); err != nil {
		return 0, err
	}
	if len(report.errs) > 0 {
		return 0, errors.Join(report.errs...)
	}
	if len(report.remaining) > 0 {
		// Objects held by finalizers go away when their controllers release them.
		if c.clock.Since(ns.DeletionTimestamp.Time) < heldRetrySoon {
			return heldRetryFirst, nil
		}
		return heldRetryLater, nil
	}
	return 0, c.finalize(ctx, ns)
}

// namespacedResources returns one served resource per namespaced group-resource (the
// versions of a group-resource share their objects).
func (c *Controller) namespacedResources() []*registry.Resource {
	cat := c.store.Catalogue()
	seen := map[schema.GroupResource]bool{}
	var out []*registry.Resource
	for _, r := range cat.All() {
		gr := r.GroupResource()
		if !r.Namespaced || seen[gr] || (r.Storage != nil && r.Storage.Resource.GroupResource() != gr) {
			continue // a version stored as another resource goes with that resource
		}
		seen[gr] = true
		if pref := cat.ForGroupResource(gr); pref != nil {
			r = pref
		}
		out = append(out, r)
	}
	return out
}

// deleteContent deletes the objects of one resource in ns and adds what remains to report.
func (c *Controller) deleteContent(ctx context.Context, ns string, res *registry.Resource, report *contentReport) {
	objs, _, err := c.store.ListObjects(ctx, res, ns)
	if err != nil {
		report.errs = append(report.errs, err)
		return
	}
	background := metav1.DeletePropagationBackground
	for _, o := range objs {
		m, err := controller.Meta(o)
		if err != nil {
			report.errs = append(report.errs, err)
			return
		}
		if m.GetDeletionTimestamp() != nil {
			continue
		}
		uid := m.GetUID()
		_, err = c.store.Delete(ctx, res, ns, m.GetName(), metav1.DeleteOptions{
			PropagationPolicy: &background, Preconditions: &metav1.Preconditions{UID: &uid},
		}, registry.WriteOptions{})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			report.errs = append(report.errs, err)
			return
		}
	}
	// What is left is held by finalizers (or was created meanwhile).
	left, _, err := c.store.ListObjects(ctx, res, ns)
	if err != nil {
		report.errs = append(report.errs, err)
		return
	}
	if len(left) == 0 {
		return
	}
	held := false
	for _, o := range left {
		m, err := controller.Meta(o)
		if err != nil {
			report.errs = append(report.errs, err)
			return
		}
		for _, f := range m.GetFinalizers() {
			report.finalizers[f]++
			held = true
		}
	}
	report.remaining[res.GroupResource()] += len(left)
	if !held {
		report.errs = append(report.errs, &remainingError{ns: ns, gvr: res.GVR})
	}
}

// remainingError is upstream's error for objects left without finalizers.
type remainingError struct {
	ns  string
	gvr schema.GroupVersionResource
}

func (e *remainingError) Error() string {
	return "unexpected items still remain in namespace: " + e.ns + " for gvr: " + e.gvr.String()
}

// setConditions writes the deletion conditions of report into the namespace's status.
func (c *Controller) setConditions(ctx context.Context, name string, report *contentReport) error {
	now := metav1.NewTime(c.clock.Now().Truncate(time.Second))
	current := report.conditions(now)
	_, err := c.store.Update(ctx, c.res("namespaces"), "", name, "status", func(o runtime.Object) (runtime.Object, error) {
		ns, err := controller.As[*corev1.Namespace](o)
		if err != nil {
			return nil, err
		}
		if ns.DeletionTimestamp == nil {
			return ns, nil
		}
		updateConditions(&ns.Status, current, now)
		return ns, nil
	}, registry.WriteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (c *Controller) finalize(ctx context.Context, ns *corev1.Namespace) error {
	var keep []corev1.FinalizerName
	for _, f := range ns.Spec.Finalizers {
		if f != corev1.FinalizerKubernetes {
			keep = append(keep, f)
		}
	}
	body := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name}, Spec: corev1.NamespaceSpec{Finalizers: keep}}
	_, err := c.store.FinalizeNamespace(ctx, ns.Name, body)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
