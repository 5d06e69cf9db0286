package server

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/admission/priority"
	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/controller"
	"github.com/quotad/quotad/internal/controller/apiservices"
	"github.com/quotad/quotad/internal/controller/clusterroleaggregation"
	"github.com/quotad/quotad/internal/controller/crd"
	"github.com/quotad/quotad/internal/controller/csrapproving"
	"github.com/quotad/quotad/internal/controller/csrsigning"
	"github.com/quotad/quotad/internal/controller/defaultservicecidr"
	"github.com/quotad/quotad/internal/controller/disruption"
	"github.com/quotad/quotad/internal/controller/endpoints"
	"github.com/quotad/quotad/internal/controller/endpointslice"
	"github.com/quotad/quotad/internal/controller/etcdsnapshot"
	"github.com/quotad/quotad/internal/controller/flowcontrol"
	"github.com/quotad/quotad/internal/controller/garbagecollector"
	"github.com/quotad/quotad/internal/controller/namespace"
	"github.com/quotad/quotad/internal/controller/nodelifecycle"
	"github.com/quotad/quotad/internal/controller/pcrcleaner"
	"github.com/quotad/quotad/internal/controller/podgc"
	"github.com/quotad/quotad/internal/controller/quotaverify"
	"github.com/quotad/quotad/internal/controller/resourceclaim"
	"github.com/quotad/quotad/internal/controller/servicecidrs"
	"github.com/quotad/quotad/internal/controller/tainteviction"
	"github.com/quotad/quotad/internal/controller/ttlafterfinished"
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
	return defaultservicecidr.New(store, log, panics, []string{store.ServiceRanges().DefaultServiceCIDR()})
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
// kube-apiserver's own controllers (crd, flowcontrol, apiservices, default-servicecidr, the
// repair of service allocations every registry.RepairInterval; the
// kubernetes Service is started by Run) run on every replica. kube-controller-manager's
// controllers, and the scheduled etcd snapshots, run on one replica: with --leader-elect,
// the holder of the kube-system/kube-controller-manager Lease (see leader.go); without it,
// every replica, from the start.
func startControllers(ctx context.Context, store *registry.Store, log *slog.Logger, cfg Config, m *metrics, caPEM []byte, authz auth.Authorizer, snapshots *etcdsnapshot.Scheduler) (*sync.WaitGroup, error) {
	var wg sync.WaitGroup
	run := runner(&wg, log)
	run(ctx, "crd", crd.New(store, log, m).Start)
	run(ctx, "flowcontrol", flowcontrol.New(store, log, m).Start)
	run(ctx, "apiservices", apiservices.New(store, log, m).Start)
	run(ctx, "default-servicecidr", defaultServiceCIDR(store, log, m).Start)
	run(ctx, "repair-service-allocations", func(ctx context.Context) error {
		tick := time.NewTicker(registry.RepairInterval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-tick.C:
				if err := store.RepairServiceAllocations(ctx); err != nil && ctx.Err() == nil {
					log.Warn("repairing service allocations", "err", err)
				}
			}
		}
	})
	lead := func(ctx context.Context) {
		var lwg sync.WaitGroup
		startLeaderControllers(ctx, runner(&lwg, log), store, log, cfg, m, caPEM, authz)
		if snapshots != nil {
			runner(&lwg, log)(ctx, "etcd-snapshot", snapshots.Start)
		}
		lwg.Wait()
	}
	// On an error the controllers above are running: the caller cancels ctx and waits.
	return &wg, startLeading(ctx, &wg, log, cfg, m, store, lead)
}

// runner returns a function that runs a controller's start in a goroutine counted by wg,
// logging its error unless ctx ended.
func runner(wg *sync.WaitGroup, log *slog.Logger) func(ctx context.Context, name string, start func(context.Context) error) {
	return func(ctx context.Context, name string, start func(context.Context) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := start(ctx); err != nil && ctx.Err() == nil {
				log.Error("controller stopped", "controller", name, "err", err)
			}
		}()
	}
}

// startLeaderControllers starts kube-controller-manager's controllers, constructed anew (a
// replica that leads again after losing the lease starts fresh ones).
// authz decides for the requesters of certificates csrapproving approves.
func startLeaderControllers(ctx context.Context, run func(context.Context, string, func(context.Context) error), store *registry.Store, log *slog.Logger, cfg Config, m *metrics, caPEM []byte, authz auth.Authorizer) {
	// One watch and one index of pods, shared by the controllers that watch every pod
	// (run below, once they are all made), and one view of each pod.
	pods := controller.NewSharedPods(controller.NewPodViews())
	wopts := workloads.Options{Panics: m, Pods: pods}
	// Each controller's writes paced as kube-controller-manager's client paces them, a
	// bucket each; the namespace controller deletes a namespace's objects one by one where
	// kube-controller-manager's deletes each resource's in one request, so it is not paced.
	paced := func() controller.Client { return controller.Paced(store, cfg.KubeAPIQPS, cfg.KubeAPIBurst) }
	run(ctx, "namespace", namespace.New(store, caPEM, log, namespace.Options{Panics: m}).Start)
	run(ctx, "clusterrole-aggregation", clusterroleaggregation.New(paced(), log, m).Start)
	run(ctx, "resourcequota", quotaverify.New(store, cfg.ResourceQuotaSyncPeriod, log, m).Start)
	run(ctx, "replicaset", workloads.NewReplicaSet(paced(), log, wopts).Start)
	run(ctx, "replicationcontroller", workloads.NewReplicationController(paced(), log, wopts).Start)
	run(ctx, "deployment", workloads.NewDeployment(paced(), log, wopts).Start)
	run(ctx, "job", workloads.NewJob(paced(), log, wopts).Start)
	run(ctx, "cronjob", workloads.NewCronJob(paced(), log, wopts).Start)
	run(ctx, "disruption", disruption.New(paced(), log, m, pods).Start)
	run(ctx, "statefulset", workloads.NewStatefulSet(paced(), log, wopts).Start)
	run(ctx, "daemonset", workloads.NewDaemonSet(paced(), log, wopts).Start)
	run(ctx, "csrapproving", csrapproving.New(paced(), authz, log, m).Start)
	run(ctx, "csrsigning", csrsigning.New(paced(), log, m, func() (*pki.Authority, error) {
		return pki.LoadAuthority(filepath.Join(cfg.DataDir, "ca.crt"), filepath.Join(cfg.DataDir, "ca.key"))
	}).Start)
	run(ctx, "garbagecollector", garbagecollector.New(paced(), log, garbagecollector.Options{Panics: m}).Start)
	run(ctx, "node-lifecycle-controller", nodelifecycle.New(paced(), nodelifecycle.Options{
		MonitorPeriod: cfg.NodeMonitorPeriod, GracePeriod: cfg.NodeMonitorGracePeriod, StartupGracePeriod: cfg.NodeStartupGracePeriod,
		EvictionRate: cfg.NodeEvictionRate, SecondaryEvictionRate: cfg.SecondaryNodeEvictionRate,
		LargeClusterThreshold: cfg.LargeClusterSizeThreshold, UnhealthyZoneThreshold: cfg.UnhealthyZoneThreshold,
		Pods: pods, Panics: m, Log: log}).Start)
	run(ctx, "taint-eviction-controller", tainteviction.New(paced(), tainteviction.Options{Pods: pods, Panics: m, Log: log}).Start)
	run(ctx, "endpoints", endpoints.New(paced(), endpoints.Options{Pods: pods, Panics: m, Log: log}).Start)
	run(ctx, "endpointslice", endpointslice.New(paced(), endpointslice.Options{MaxEndpointsPerSlice: cfg.MaxEndpointsPerSlice,
		Pods: pods, Panics: m, Log: log}).Start)
	run(ctx, "podgc", podgc.New(paced(), log, podgc.Options{TerminatedPodThreshold: cfg.TerminatedPodGCThreshold,
		CheckPeriod: cfg.PodGCCheckPeriod, Quarantine: cfg.PodGCQuarantine, Pods: pods, Panics: m}).Start)
	run(ctx, "service-cidr-controller", servicecidrs.New(paced(), log, m).Start)
	run(ctx, "ttlafterfinished", ttlafterfinished.New(paced(), log, ttlafterfinished.Options{Panics: m}).Start)
	run(ctx, "resourceclaim", resourceclaim.New(paced(), log, resourceclaim.Options{Panics: m, Pods: pods}).Start)
	run(ctx, "podcertificaterequest-cleaner-controller", pcrcleaner.New(paced(), log, pcrcleaner.Options{
		Period: cfg.PodCertificateRequestCleanerPeriod, Threshold: cfg.PodCertificateRequestCleanerThreshold, Panics: m}).Start)
	// Every subscriber is made: the shared pods start once each has started.
	run(ctx, "pod-informer", func(ctx context.Context) error {
		pods.Run(ctx, controller.NewLoop("pod-informer", store, log, m, nil))
		return nil
	})
}
