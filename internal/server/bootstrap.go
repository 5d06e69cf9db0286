package server

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/admission/priority"
	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/controller/apiservices"
	"github.com/quotad/quotad/internal/controller/clusterroleaggregation"
	"github.com/quotad/quotad/internal/controller/crd"
	"github.com/quotad/quotad/internal/controller/csrsigning"
	"github.com/quotad/quotad/internal/controller/defaultservicecidr"
	"github.com/quotad/quotad/internal/controller/disruption"
	"github.com/quotad/quotad/internal/controller/flowcontrol"
	"github.com/quotad/quotad/internal/controller/garbagecollector"
	"github.com/quotad/quotad/internal/controller/namespace"
	"github.com/quotad/quotad/internal/controller/resourcequota"
	"github.com/quotad/quotad/internal/controller/workloads"
	"github.com/quotad/quotad/internal/pki"
	"github.com/quotad/quotad/internal/registry"
)

// bootstrap creates what every cluster has from the first start: the default, kube-system
// and kube-public namespaces and the system priority classes. Existing objects are kept.
func bootstrap(ctx context.Context, store *registry.Store) error {
	nsRes := store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("namespaces"))
	for _, name := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := store.Create(ctx, nsRes, "", ns, registry.WriteOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	pcRes := store.Catalogue().Get(schedulingv1.SchemeGroupVersion.WithResource("priorityclasses"))
	for _, pc := range priority.SystemClasses() {
		pc := pc
		if _, err := store.Create(ctx, pcRes, "", &pc, registry.WriteOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return defaultServiceCIDR(store, nil, nil).Sync(ctx)
}

// defaultServiceCIDR is the controller of the ServiceCIDR holding quotad's service range.
func defaultServiceCIDR(store *registry.Store, log *slog.Logger, m *metrics) *defaultservicecidr.Controller {
	var panics controller.PanicObserver
	if m != nil {
		panics = m
	}
	return defaultservicecidr.New(store, log, panics, []string{registry.DefaultServiceCIDR()})
}

// crdRegistrar serves a CRD's custom resources as soon as its write commits.
func crdRegistrar(cat *registry.Catalogue) func(res *registry.Resource, obj runtime.Object, deleted bool) {
	return func(res *registry.Resource, obj runtime.Object, deleted bool) {
		if c, ok := obj.(*apiextensionsv1.CustomResourceDefinition); ok {
			crd.Register(cat, c, deleted)
		}
	}
}

// loadCRDs serves the custom resources of every stored CRD before the server accepts requests.
func loadCRDs(ctx context.Context, store *registry.Store) error {
	res := store.Catalogue().Get(apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions"))
	objs, _, err := store.ListObjects(ctx, res, "")
	if err != nil {
		return err
	}
	for _, o := range objs {
		if def, ok := o.(*apiextensionsv1.CustomResourceDefinition); ok {
			crd.Register(store.Catalogue(), def, false)
		}
	}
	return nil
}

// startControllers starts the in-process controllers; Wait returns when all have stopped.
func startControllers(ctx context.Context, store *registry.Store, log *slog.Logger, cfg Config, m *metrics, caPEM []byte) *sync.WaitGroup {
	var wg sync.WaitGroup
	run := func(name string, start func(context.Context) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := start(ctx); err != nil && ctx.Err() == nil {
				log.Error("controller stopped", "controller", name, "err", err)
			}
		}()
	}
	wopts := workloads.Options{Panics: m}
	run("namespace", namespace.New(store, caPEM, log, namespace.Options{Panics: m}).Start)
	run("crd", crd.New(store, log, m).Start)
	run("clusterrole-aggregation", clusterroleaggregation.New(store, log, m).Start)
	run("resourcequota", resourcequota.New(store, cfg.ResourceQuotaSyncPeriod, log, m).Start)
	run("replicaset", workloads.NewReplicaSet(store, log, wopts).Start)
	run("replicationcontroller", workloads.NewReplicationController(store, log, wopts).Start)
	run("deployment", workloads.NewDeployment(store, log, wopts).Start)
	run("job", workloads.NewJob(store, log, wopts).Start)
	run("cronjob", workloads.NewCronJob(store, log, wopts).Start)
	run("disruption", disruption.New(store, log, m).Start)
	run("statefulset", workloads.NewStatefulSet(store, log, wopts).Start)
	run("daemonset", workloads.NewDaemonSet(store, log, wopts).Start)
	run("flowcontrol", flowcontrol.New(store, log, m).Start)
	run("apiservices", apiservices.New(store, log, m).Start)
	run("default-servicecidr", defaultServiceCIDR(store, log, m).Start)
	run("csrsigning", csrsigning.New(store, log, m, func() (*pki.Authority, error) {
		return pki.LoadAuthority(filepath.Join(cfg.DataDir, "ca.crt"), filepath.Join(cfg.DataDir, "ca.key"))
	}).Start)
	run("garbagecollector", garbagecollector.New(store, log, garbagecollector.Options{Panics: m}).Start)
	return &wg
}
