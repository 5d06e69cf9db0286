package crd

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

// CleanupFinalizer holds a CRD until its custom resources are deleted.
const CleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

// Register updates the catalogue for one CRD write; deleted or terminating CRDs stop being
// served for new writes only once they are gone.
func Register(cat *registry.Catalogue, crd *apiextensionsv1.CustomResourceDefinition, deleted bool) {
	// The resourceVersion is the revision of this state (of the deletion, for deleted ones):
	// the catalogue ignores states older than one it already applied.
	rev, _ := strconv.ParseInt(crd.ResourceVersion, 10, 64)
	if deleted {
		cat.SetCustom(crd.Name, rev, nil)
		return
	}
	cat.SetCustom(crd.Name, rev, registry.CustomResources(crd.DeepCopy()))
}

// Controller is the CRD controller.
type Controller struct {
	store controller.Client
	log   *slog.Logger
	loop  *controller.Loop
}

// New returns a CRD controller; panics counts recovered panics (may be nil).
func New(store controller.Client, log *slog.Logger, panics controller.PanicObserver) *Controller {
	if log == nil {
		log = slog.Default()
	}
	return &Controller{store: store, log: log, loop: controller.NewLoop("crd", store, log, panics, nil)}
}

func (c *Controller) res() *registry.Resource {
	return c.store.Catalogue().Get(apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions"))
}

// Start runs the controller until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	q := controller.NewQueue("crd")
	go c.loop.Watch(ctx, c.res(), controller.On(func(crd *apiextensionsv1.CustomResourceDefinition, deleted bool) {
		Register(c.store.Catalogue(), crd, deleted)
		if !deleted && crd.DeletionTimestamp != nil {
			q.Add(crd.Name)
		}
	}))
	c.loop.Process(ctx, q, 1, c.sync)
	return nil
}

// sync deletes the custom resources of a terminating CRD, then releases it.
func (c *Controller) sync(ctx context.Context, name string) (time.Duration, error) {
	obj, err := c.store.Get(ctx, c.res(), "", name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	crd, err := controller.As[*apiextensionsv1.CustomResourceDefinition](obj)
	if err != nil {
		return 0, err
	}
	if crd.DeletionTimestamp == nil {
		return 0, nil
	}
	remaining := 0
	background := metav1.DeletePropagationBackground
	for _, r := range registry.CustomResources(crd) {
		objs, _, err := c.store.ListObjects(ctx, r, "")
		if err != nil {
			return 0, err
		}
		for _, o := range objs {
			m, err := controller.Meta(o)
			if err != nil {
				return 0, err
			}
			if m.GetDeletionTimestamp() != nil {
				remaining++
				continue
			}
			if _, err := c.store.Delete(ctx, r, m.GetNamespace(), m.GetName(), metav1.DeleteOptions{PropagationPolicy: &background}, registry.WriteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return 0, err
			}
		}
		break // every version shares one storage prefix
	}
	if remaining > 0 {
		return time.Second, nil
	}
	_, err = c.store.Update(ctx, c.res(), "", name, "", func(o runtime.Object) (runtime.Object, error) {
		crd, err := controller.As[*apiextensionsv1.CustomResourceDefinition](o)
		if err != nil {
			return nil, err
		}
		var keep []string
		for _, f := range crd.Finalizers {
			if f != CleanupFinalizer {
				keep = append(keep, f)
			}
		}
		crd.Finalizers = keep
		return crd, nil
	}, registry.WriteOptions{})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	return 0, err
}
