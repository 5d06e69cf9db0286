package apiservices

import (
	"context"
	"log/slog"
	"sort"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/registry"
)

// Label values of upstream's autoregister controller.
const (
	managedLabel       = "kube-aggregator.kubernetes.io/automanaged"
	manageOnStart      = "onstart"
	manageContinuously = "true"
	allKey             = "all"
)

// Controller keeps one local APIService per served group-version.
type Controller struct {
	store controller.Client
	log   *slog.Logger
	loop  *controller.Loop
}

// New returns the controller; panics may be nil.
func New(store controller.Client, log *slog.Logger, panics controller.PanicObserver) *Controller {
	if log == nil {
		log = slog.Default()
	}
	return &Controller{store: store, log: log, loop: controller.NewLoop("apiservices", store, log, panics, nil)}
}

func (c *Controller) res() *registry.Resource {
	return c.store.Catalogue().Get(apiregistrationv1.SchemeGroupVersion.WithResource("apiservices"))
}

func (c *Controller) crds() *registry.Resource {
	return c.store.Catalogue().Get(apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions"))
}

// Start runs the controller until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	q := controller.NewQueue("apiservices")
	add := func(runtime.Object, bool) { q.Add(allKey) }
	go c.loop.Watch(ctx, c.res(), add)
	go c.loop.Watch(ctx, c.crds(), add)
	c.loop.Process(ctx, q, 1, func(ctx context.Context, _ string) (time.Duration, error) { return 0, c.Sync(ctx) })
	return nil
}

// Desired returns the APIServices quotad should have, by name.
func (c *Controller) Desired(ctx context.Context) (map[string]*apiregistrationv1.APIService, error) {
	want := map[string]*apiregistrationv1.APIService{}
	add := func(gv schema.GroupVersion, group, version int32, managed string) {
		if gv.Group == apiregistrationv1.GroupName {
			return
		}
		name := gv.Version + "." + gv.Group
		if _, ok := want[name]; ok {
			return
		}
		want[name] = &apiregistrationv1.APIService{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{managedLabel: managed}},
			Spec:       apiregistrationv1.APIServiceSpec{Group: gv.Group, Version: gv.Version, GroupPriorityMinimum: group, VersionPriority: version},
		}
	}
	builtins := append(registry.Builtins(), registry.Reviews()...)
	for _, r := range builtins {
		gv := r.GVR.GroupVersion()
		if group, version, ok := registry.APIPriority(gv); ok {
			add(gv, group, version, manageOnStart)
		}
	}
	objs, _, err := c.store.ListObjects(ctx, c.crds(), "")
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		crd, ok := o.(*apiextensionsv1.CustomResourceDefinition)
		if !ok || crd.DeletionTimestamp != nil {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Served {
				add(schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}, 1000, 100, manageContinuously)
			}
		}
	}
	return want, nil
}

// Sync makes one pass: 1. compute the desired set, 2. create the missing, 3. put back the
// spec of changed automanaged ones, 4. delete automanaged ones no longer served.
func (c *Controller) Sync(ctx context.Context) error {
	want, err := c.Desired(ctx)
	if err != nil {
		return err
	}
	objs, _, err := c.store.ListObjects(ctx, c.res(), "")
	if err != nil {
		return err
	}
	have := map[string]*apiregistrationv1.APIService{}
	for _, o := range objs {
		if a, ok := o.(*apiregistrationv1.APIService); ok {
			have[a.Name] = a
		}
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		w := want[name]
		cur := have[name]
		switch {
		case cur == nil:
			if _, err := c.store.Create(ctx, c.res(), "", w.DeepCopy(), registry.WriteOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
		case cur.Labels[managedLabel] != "" && (!equality.Semantic.DeepEqual(cur.Spec, w.Spec) || cur.Labels[managedLabel] != w.Labels[managedLabel]):
			_, err := c.store.Update(ctx, c.res(), "", name, "", func(o runtime.Object) (runtime.Object, error) {
				a, err := controller.As[*apiregistrationv1.APIService](o)
				if err != nil {
					return nil, err
				}
				if a.Labels[managedLabel] == "" {
					return a, nil
				}
				a.Spec = w.Spec
				a.Labels[managedLabel] = w.Labels[managedLabel]
				return a, nil
			}, registry.WriteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	for name, cur := range have {
		if want[name] != nil || cur.Labels[managedLabel] == "" {
			continue
		}
		uid := cur.UID
		if _, err := c.store.Delete(ctx, c.res(), "", name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}, registry.WriteOptions{}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}
