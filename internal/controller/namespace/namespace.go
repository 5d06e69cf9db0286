package namespace

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

// RootCAConfigMap is the name of the ConfigMap publishing the cluster CA in every namespace.
const RootCAConfigMap = "kube-root-ca.crt"

// Controller is the namespace controller.
type Controller struct {
	store *registry.Store
	caPEM []byte
	log   *slog.Logger
}

// New returns a namespace controller publishing caPEM.
func New(store *registry.Store, caPEM []byte, log *slog.Logger) *Controller {
	return &Controller{store: store, caPEM: caPEM, log: log}
}

func (c *Controller) res(resource string) *registry.Resource {
	return c.store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource(resource))
}

// Start runs the controller until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	q := controller.NewQueue("namespace")
	go controller.Watch(ctx, c.store, c.res("namespaces"), c.log, func(obj runtime.Object, deleted bool) {
		if !deleted {
			q.Add(obj.(*corev1.Namespace).Name)
		}
	})
	go controller.Watch(ctx, c.store, c.res("configmaps"), c.log, func(obj runtime.Object, deleted bool) {
		if cm := obj.(*corev1.ConfigMap); cm.Name == RootCAConfigMap {
			q.Add(cm.Namespace)
		}
	})
	go controller.Watch(ctx, c.store, c.res("serviceaccounts"), c.log, func(obj runtime.Object, deleted bool) {
		if sa := obj.(*corev1.ServiceAccount); sa.Name == "default" {
			q.Add(sa.Namespace)
		}
	})
	controller.Process(ctx, q, 2, c.log, c.sync)
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
	ns := obj.(*corev1.Namespace)
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
	if cm := cur.(*corev1.ConfigMap); cm.Data["ca.crt"] != want["ca.crt"] || len(cm.Data) != 1 {
		_, err := c.store.Update(ctx, c.res("configmaps"), ns, RootCAConfigMap, "", func(o runtime.Object) (runtime.Object, error) {
			cm := o.(*corev1.ConfigMap)
			cm.Data = want
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

// terminate deletes every namespaced object in ns; when none is left it finalizes ns.
func (c *Controller) terminate(ctx context.Context, ns *corev1.Namespace) (time.Duration, error) {
	remaining := 0
	background := metav1.DeletePropagationBackground
	for _, res := range c.store.Catalogue().All() {
		if !res.Namespaced {
			continue
		}
		objs, _, err := c.store.ListObjects(ctx, res, ns.Name)
		if err != nil {
			return 0, err
		}
		for _, o := range objs {
			m := o.(metav1.ObjectMetaAccessor).GetObjectMeta()
			remaining++
			if m.GetDeletionTimestamp() != nil {
				continue
			}
			_, err := c.store.Delete(ctx, res, ns.Name, m.GetName(), metav1.DeleteOptions{PropagationPolicy: &background}, registry.WriteOptions{})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return 0, fmt.Errorf("deleting %s %s/%s: %w", res.GVR.Resource, ns.Name, m.GetName(), err)
			}
		}
	}
	if remaining > 0 {
		// Objects held by finalizers go away when their controllers release them.
		return time.Second, c.checkEmpty(ctx, ns)
	}
	return 0, c.finalize(ctx, ns)
}

func (c *Controller) checkEmpty(ctx context.Context, ns *corev1.Namespace) error {
	for _, res := range c.store.Catalogue().All() {
		if !res.Namespaced {
			continue
		}
		objs, _, err := c.store.ListObjects(ctx, res, ns.Name)
		if err != nil {
			return err
		}
		if len(objs) > 0 {
			return nil
		}
	}
	return c.finalize(ctx, ns)
}

func (c *Controller) finalize(ctx context.Context, ns *corev1.Namespace) error {
	var keep []corev1.FinalizerName
	for _, f := range ns.Spec.Finalizers {
		if f != corev1.FinalizerKubernetes {
			keep = append(keep, f)
		}
	}
	_, err := c.store.FinalizeNamespace(ctx, ns.Name, keep)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
