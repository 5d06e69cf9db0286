package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/admission/defaultingressclass"
	"github.com/quotad/quotad/internal/admission/defaulttolerationseconds"
	"github.com/quotad/quotad/internal/admission/limitranger"
	"github.com/quotad/quotad/internal/admission/namespacelifecycle"
	"github.com/quotad/quotad/internal/admission/noderestriction"
	"github.com/quotad/quotad/internal/admission/priority"
	"github.com/quotad/quotad/internal/admission/quotaenforce"
	"github.com/quotad/quotad/internal/admission/quotafit"
	"github.com/quotad/quotad/internal/admission/rbacescalation"
	"github.com/quotad/quotad/internal/admission/runtimeclass"
	"github.com/quotad/quotad/internal/admission/serviceaccount"
	"github.com/quotad/quotad/internal/apiserver"
	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/auth/node"
	"github.com/quotad/quotad/internal/auth/review"
	"github.com/quotad/quotad/internal/controller/kubernetesservice"
	"github.com/quotad/quotad/internal/controller/record"
	"github.com/quotad/quotad/internal/memlimit"
	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/evaluator"
	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/storage"
)

// Config is quotad's configuration, named after kube-apiserver's flags.
type Config struct {
	DataDir     string
	BindAddress string
	// TLSSANs are names and addresses the serving certificate covers besides the bind and
	// advertise addresses (k3s's --tls-san: a load balancer in front of the replicas).
	TLSSANs       []string
	SecurePort    int
	EtcdServers   []string
	EtcdCAFile    string
	EtcdCertFile  string
	EtcdKeyFile   string
	TokenAuthFile string
	// NoBootstrapTokenAuth turns off bootstrap tokens (--enable-bootstrap-token-auth=false).
	NoBootstrapTokenAuth       bool
	AdmissionControlConfigFile string
	EnableAdmissionPlugins     []string
	DisableAdmissionPlugins    []string
	ResourceQuotaSyncPeriod    time.Duration
	// The node lifecycle controller's kube-controller-manager flags (0: upstream's
	// defaults, see package nodelifecycle): --node-monitor-period,
	// --node-monitor-grace-period, --node-startup-grace-period, --node-eviction-rate,
	// --secondary-node-eviction-rate, --large-cluster-size-threshold and
	// --unhealthy-zone-threshold.
	NodeMonitorPeriod         time.Duration
	NodeMonitorGracePeriod    time.Duration
	NodeStartupGracePeriod    time.Duration
	NodeEvictionRate          float32
	SecondaryNodeEvictionRate float32
	LargeClusterSizeThreshold int32
	UnhealthyZoneThreshold    float32
	// MaxEndpointsPerSlice is --max-endpoints-per-slice (0: 100).
	MaxEndpointsPerSlice int
	// Clustered embedded etcd (cluster.go, join.go): ClusterInit is --cluster-init (this
	// quotad's embedded etcd becomes, or stays, a member of a cluster others may join);
	// Join is --join (the https URL of a cluster member's secure port to join through) with
	// JoinToken --join-token or JoinTokenFile --join-token-file; AdvertiseAddress is
	// --advertise-address (the IP address peers and clients reach this member at, also
	// listed in the kubernetes Endpoints; "": the bind address, or 127.0.0.1 for a wildcard
	// or loopback bind); EtcdPeerPort and EtcdClientPort are --etcd-peer-port and
	// --etcd-client-port (0: 2380 and 2379). A data dir that was a cluster member's stays
	// one without the flags.
	ClusterInit      bool
	Join             string
	JoinToken        string
	JoinTokenFile    string
	AdvertiseAddress string
	EtcdPeerPort     int
	EtcdClientPort   int
	// EtcdUnsafeNoFsync turns off the embedded etcd's fsync: for tests only.
	EtcdUnsafeNoFsync bool
	// EtcdFastElection makes a single embedded etcd member elect itself within 100ms
	// instead of 1s (storage.WithFastElection): for tests only, which start many.
	EtcdFastElection bool
	// WrapStorage, when set, wraps the storage everything but the embedded etcd's own
	// maintenance goes through (tests use it to hold or observe transactions).
	WrapStorage func(storage.Store) storage.Store
	// RequestTimeout is --request-timeout (0: 60s), MinRequestTimeout --min-request-timeout
	// (0: 1800s), MaxRequestsInflight and MaxMutatingRequestsInflight
	// --max-requests-inflight and --max-mutating-requests-inflight (0: no bound; the
	// flags default to 400 and 200). See apiserver.Config.
	RequestTimeout              time.Duration
	MinRequestTimeout           time.Duration
	MaxRequestsInflight         int
	MaxMutatingRequestsInflight int
	// ServiceRanges are --service-cluster-ip-range and --service-node-port-range (zero:
	// registry.DefaultServiceRanges).
	ServiceRanges registry.ServiceRanges
	// NoPriorityAndFairness is --enable-priority-and-fairness=false: requests past the
	// in-flight bounds are refused at once instead of queued per user, and clients whose
	// requests keep being refused are not slowed down. Penalties sizes that slowing down
	// (zero: apiserver.DefaultPenalties). See apiserver.Config.
	NoPriorityAndFairness bool
	Penalties             apiserver.Penalties
	// MaxWatchesPerUser is --max-watches-per-user (0: apiserver.DefaultMaxWatchesPerUser,
	// negative: no bound).
	MaxWatchesPerUser int
	// MaxBodyBytesInFlight bounds the request bodies held at once (0: 64 MiB); see
	// apiserver.Config.
	MaxBodyBytesInFlight int64
	// MaxLongReads bounds the pages of long lists read at once (0: half the cores); see
	// apiserver.Config.
	MaxLongReads int
	// Debug serves /debug/pprof/ (authenticated).
	Debug  bool
	Logger *slog.Logger
	// Ready, when set, receives the running server once it accepts requests.
	Ready func(*Running)

	// RuleResolver, when set, is what RBAC escalation prevention asks for the rules a user
	// holds instead of the RBAC authorizer (tests set their own).
	RuleResolver auth.RuleResolver

	// LogLevel is the level Logger was built with (kube's --v=n is slog.Level(-n)).
	LogLevel slog.Level

	// ServiceAccountIssuer is --service-account-issuer ("": authn.DefaultIssuer),
	// APIAudiences --api-audiences (none: the issuer), ServiceAccountMaxTokenExpiration
	// --service-account-max-token-expiration (0: no bound) and
	// ServiceAccountSigningKeyFile --service-account-signing-key-file ("": the data dir's
	// sa.key, created on first start; replicas that share one etcd share a key file so
	// that each accepts the others' tokens).
	ServiceAccountIssuer             string
	APIAudiences                     []string
	ServiceAccountMaxTokenExpiration time.Duration
	ServiceAccountSigningKeyFile     string
	// Audit trail, as kube-apiserver's flags: --audit-policy-file, --audit-log-path ("-"
	// is standard output), --audit-log-maxage (days), --audit-log-maxbackup,
	// --audit-log-maxsize (megabytes), --audit-log-compress, --audit-log-mode (blocking,
	// blocking-strict or batch; "" is blocking) and --audit-log-batch-buffer-size (0:
	// 10000). Events are recorded only with both a policy and a path, as upstream.
	AuditPolicyFile         string
	AuditLogPath            string
	AuditLogMaxAge          int
	AuditLogMaxBackup       int
	AuditLogMaxSize         int
	AuditLogCompress        bool
	AuditLogMode            string
	AuditLogBatchBufferSize int

	// Leader election of kube-controller-manager's controllers, as its flags:
	// --leader-elect (LeaderElect; the flag defaults to true, the zero Config runs every
	// controller on every replica), --leader-elect-lease-duration, --leader-elect-renew-deadline
	// and --leader-elect-retry-period (zero: 15s, 10s, 2s). LeaderElectNoRelease keeps the
	// Lease held on shutdown, as a killed process would (for tests). OnLeading, when set, is
	// told true when this replica's leader-only controllers start and false once they have
	// all stopped. See leader.go.
	// TerminatedPodGCThreshold is --terminated-pod-gc-threshold: the terminated pods pod
	// GC keeps before it deletes the oldest (<= 0: it deletes none; the flag defaults to
	// 12500). PodGCCheckPeriod and PodGCQuarantine replace upstream's 20s between passes
	// and 40s a node must be missing before its pods go (zero: those; for tests only).
	TerminatedPodGCThreshold int
	PodGCCheckPeriod         time.Duration
	PodGCQuarantine          time.Duration
	// KubeAPIQPS and KubeAPIBurst are --kube-api-qps and --kube-api-burst: each of
	// kube-controller-manager's controllers (but the namespace controller) writes at most
	// KubeAPIQPS objects a second after a burst of KubeAPIBurst, as kube-controller-manager's
	// client paces each controller (controller.Paced; the flags default to 20 and 30, as
	// its). Zero: unpaced.
	KubeAPIQPS   float32
	KubeAPIBurst int
	LeaderElect  bool
	// NoClusterQuotaRows is --cluster-quota-rows=false: cluster quotas' entries stored in
	// OpenShift's shape, readable by replicas of an earlier version (docs/ha.md).
	NoClusterQuotaRows       bool
	LeaderElectLeaseDuration time.Duration
	LeaderElectRenewDeadline time.Duration
	LeaderElectRetryPeriod   time.Duration
	LeaderElectNoRelease     bool
	OnLeading                func(started bool)

	// PodCertificateRequestCleanerPeriod and PodCertificateRequestCleanerThreshold
	// replace upstream's 5 minutes between the PodCertificateRequest cleaner's passes and
	// 15 minutes a request lives (zero: those; for tests only).
	PodCertificateRequestCleanerPeriod    time.Duration
	PodCertificateRequestCleanerThreshold time.Duration

	// Scheduled etcd snapshots, as k3s's flags: --etcd-snapshot-schedule-cron ("": none),
	// --etcd-snapshot-retention (0: 5) and --etcd-snapshot-dir ("": <data-dir>/snapshots).
	// Taken by the leader only, with leader election. See snapshots.go.
	EtcdSnapshotScheduleCron string
	EtcdSnapshotRetention    int
	EtcdSnapshotDir          string
}

// Running describes a started server.
type Running struct {
	// URL is the https URL the server listens on.
	URL string
	// Kubeconfig is the path of the admin kubeconfig.
	Kubeconfig string
	// Token is the admin bearer token.
	Token string
	// CAPEM is the CA certificate clients trust.
	CAPEM []byte
	// Store is the registry (for in-process tests and tools).
	Store *registry.Store
	// EtcdEndpoints are the embedded etcd's client URLs (none with --etcd-servers); clients
	// present the certificate and key in the data dir's etcd-pki.
	EtcdEndpoints []string
	// JoinToken is the token other quotads join this one's cluster with (--join-token),
	// when the embedded etcd is a cluster member; JoinTokenFile is the file holding it.
	JoinToken     string
	JoinTokenFile string
	// JoinTokenCreated is set when this start made the join token (--cluster-init on a
	// data dir without one): the one start that prints it.
	JoinTokenCreated bool
	// JoinURL is the URL other quotads join through (--join): the secure port at the
	// advertise address.
	JoinURL string
}

// Run starts quotad and blocks until ctx ends, then shuts down cleanly.
func Run(ctx context.Context, cfg Config) error {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if cfg.DataDir == "" {
		cfg.DataDir = "quotad-data"
	}
	if cfg.BindAddress == "" {
		cfg.BindAddress = "127.0.0.1"
	}
	if cfg.ResourceQuotaSyncPeriod == 0 {
		cfg.ResourceQuotaSyncPeriod = 5 * time.Minute
	}
	if err := checkClusterFlags(cfg); err != nil {
		return err
	}
	if err := validateLeaderElection(cfg); err != nil {
		return err
	}
	if err := privateDir(cfg.DataDir, log); err != nil {
		return err
	}
	// One quotad per data dir, whatever its storage: the leader identity, credentials and
	// join state in it belong to one process.
	dirLock, err := storage.TryLock(filepath.Join(cfg.DataDir, "quotad.lock"))
	if err != nil {
		return fmt.Errorf("data dir %s is in use by another quotad (give each quotad its own --data-dir): %w", cfg.DataDir, err)
	}
	defer dirLock.Close()
	// The secure port is checked before etcd starts (and a joiner joins): a second quotad
	// on one machine is told which flags to set before it changes anything.
	if cfg.SecurePort != 0 {
		if err := probeListen(net.JoinHostPort(cfg.BindAddress, strconv.Itoa(cfg.SecurePort))); err != nil {
			return securePortError(cfg, err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// 1. Admission configuration: a bad file stops startup with a clear error.
	var limited []quota.LimitedResource
	if cfg.AdmissionControlConfigFile != "" {
		l, err := quotaenforce.LoadConfigFile(cfg.AdmissionControlConfigFile)
		if err != nil {
			return err
		}
		limited = l
	}

	// Audit: a bad policy, mode or log file stops startup.
	auditor, auditBackend, err := newAuditor(cfg, log)
	if err != nil {
		return err
	}
	if auditBackend != nil {
		defer auditBackend.Close()
	}

	// 2. Storage: embedded etcd, or an external cluster.
	var etcdStore *storage.Etcd
	var embedded *storage.Embedded
	// etcdAdvertise is where the cluster member's peers and clients reach it.
	etcdAdvertise := clusterAdvertiseAddress(cfg)
	if len(cfg.EtcdServers) == 0 {
		var opts []storage.EmbeddedOption
		if cfg.EtcdUnsafeNoFsync {
			opts = append(opts, storage.WithUnsafeNoFsync())
		}
		if cfg.EtcdFastElection {
			opts = append(opts, storage.WithFastElection())
		}
		var member *storage.ClusterConfig
		if clustered(cfg) {
			m, err := clusterMember(ctx, cfg, log)
			if err != nil {
				return fmt.Errorf("embedded etcd cluster: %w", err)
			}
			member = &m
			opts = append(opts, storage.WithCluster(m))
			etcdAdvertise = m.AdvertiseHost
		}
		e, err := storage.StartEmbedded(ctx, cfg.DataDir, log, opts...)
		if err != nil {
			return fmt.Errorf("starting embedded etcd: %w", err)
		}
		embedded = e
		defer embedded.Close()
		if member != nil {
			// Kept once the member runs, for a data dir of before keptMemberFile.
			if err := keepMember(cfg.DataDir, *member); err != nil {
				return fmt.Errorf("keeping the etcd member's address and ports: %w", err)
			}
		}
		etcdStore = e.Store()
		// In quiet spells after large lists, etcd's mapped database pages go back with the
		// free heap (memlimit.Follow, when the process runs it).
		defer memlimit.WhenQuiet(func() {
			if n, err := e.PageOutIfListed(etcdStore.ListedBytes()); err != nil && !errors.Is(err, errors.ErrUnsupported) {
				log.Debug("paging out etcd's database", "err", err)
			} else if n > 0 {
				log.Debug("paged out etcd's database", "mapped", n)
			}
		})()
	} else {
		var tlsCfg *tls.Config
		if cfg.EtcdCAFile != "" || cfg.EtcdCertFile != "" {
			t, err := storage.ExternalTLS(cfg.EtcdCAFile, cfg.EtcdCertFile, cfg.EtcdKeyFile)
			if err != nil {
				return err
			}
			tlsCfg = t
		}
		c, err := storage.ConnectExternal(ctx, cfg.EtcdServers, tlsCfg, log)
		if err != nil {
			return fmt.Errorf("connecting to etcd %v: %w", cfg.EtcdServers, err)
		}
		defer c.Close()
		etcdStore = storage.NewEtcd(c)
	}
	defer etcdStore.Close()
	snapshots, err := newSnapshotScheduler(cfg, embedded, log)
	if err != nil {
		return err
	}
	var st storage.Store = etcdStore
	if cfg.WrapStorage != nil {
		st = cfg.WrapStorage(st)
	}

	// 3. Registry, admission, quota.
	var store *registry.Store
	var cached *cachedReader
	var rbacs *rbacFeed
	var tokenObjects *uidIndex
	var bootstrapTokens *bootstrapIndex
	var nodeGraph *nodeGraphFeed
	nodeRestriction := noderestriction.New(lazyStoreReader{&store})
	reader := lazyReader{&cached}
	quotaReg := evaluator.NewRegistryWithDeviceClasses(deviceClasses{cached: &cached, store: &store})
	quotaPlugin := quotaenforce.NewPlugin(quotaReg, limited)
	cat := registry.NewCatalogue()
	var fieldMgrs *fieldManagers // set below, once the OpenAPI documents exist
	validatingPolicy, mutatingPolicy, err := newPolicyPlugins(reader, cat, &fieldMgrs)
	if err != nil {
		return err
	}
	chain, err := admission.NewChain(cfg.EnableAdmissionPlugins, cfg.DisableAdmissionPlugins,
		namespacelifecycle.New(reader), limitranger.New(reader), priority.New(reader), quotaPlugin,
		serviceaccount.New(reader), nodeRestriction, defaulttolerationseconds.New(), runtimeclass.New(reader), defaultingressclass.New(reader),
		mutatingPolicy, validatingPolicy)
	if err != nil {
		return err
	}
	// escalation asks the RBAC authorizer (set below, once it exists) for the rules a user
	// holds, unless the configuration brings its own resolver.
	escalation := &rbacescalation.Checker{Reader: reader, Resolver: cfg.RuleResolver}
	// The replica's identity in the namespace turns it claims: its leader election
	// identity, kept in the data dir, so that a restarted replica takes over at once the
	// turns its predecessor left.
	replica, err := leaderIdentity(cfg.DataDir)
	if err != nil {
		return err
	}
	rcfg := registry.Config{
		Storage: st, Catalogue: cat, CustomStrategy: customStrategy(), Admission: certAdmission{rbacAdmission{chain, escalation}, escalation}, Logger: log,
		Replica: replica, ClusterQuotaNoRows: cfg.NoClusterQuotaRows, ServiceRanges: cfg.ServiceRanges,
	}
	// QuotaReview and the workload warnings: what-if answers from the live quotas.
	var fitPlugin *quotafit.Plugin
	if chain.QuotaEnabled() {
		rcfg.Quota = quotaAccounting{plugin: quotaPlugin, reg: quotaReg}
		fitPlugin = &quotafit.Plugin{Registry: quotaReg, Limited: limited, Source: fitSource{&store}}
		rcfg.Admission = quotaFitAdmission{rcfg.Admission, fitPlugin}
	}
	registerCRD := crdRegistrar(cat)
	rcfg.AfterCommit = func(res *registry.Resource, obj runtime.Object, deleted bool) {
		registerCRD(res, obj, deleted)
		if cached != nil {
			cached.observe(res, obj, deleted)
		}
		if rbacs != nil {
			rbacs.observe(res, obj, deleted)
		}
		if tokenObjects != nil {
			tokenObjects.observe(res, obj, deleted)
		}
		if bootstrapTokens != nil {
			bootstrapTokens.observe(res, obj, deleted)
		}
		if nodeGraph != nil {
			nodeGraph.observe(res, obj, deleted)
		}
	}
	metrics := newMetrics()
	if embedded != nil {
		metrics.withEmbeddedEtcd()
	}
	if auditBackend != nil {
		metrics.reg.MustRegister(auditBackend.Collectors()...)
	}
	rcfg.ObserveQuota = metrics.observeQuota
	rcfg.ObserveRequest = metrics.observeRequest
	findings := &quotaFindings{metrics: metrics}
	rcfg.QuotaFindings = findings.observe
	rcfg.ObserveWrites = metrics.observeWrites
	rcfg.ObserveIndexedList = metrics.observeIndexedList
	rcfg.ObserveQuotaLatency = metrics.admission.quota
	rcfg.Admission = timedAdmission{next: rcfg.Admission, metrics: metrics.admission}
	chain.Observe(metrics.admission.plugin)
	store = registry.NewStore(rcfg)
	findings.rec = record.NewRecorder(store, quotaEventComponent, clock.RealClock{}, log)
	findings.rec.Start(ctx) // its broadcaster stops with the server
	cached = newCachedReader(ctx, store, log)
	rbacs = newRBACFeed(ctx, store, log)
	validatingPolicy.Authorizer, mutatingPolicy.Authorizer = rbacs.authz, rbacs.authz // the policies' authorizer variable
	if escalation.Resolver == nil {
		escalation.Resolver = rbacs.authz
	}
	// Authorization is Node, then RBAC, as kube-apiserver's --authorization-mode=Node,RBAC.
	// The graph's cache of pods also answers the token index's pod UIDs.
	nodeGraph = newNodeGraphFeed(ctx, store, log)
	tokenObjects = newUIDIndex(ctx, store, log, nodeGraph.uidSources())
	if !cfg.NoBootstrapTokenAuth {
		bootstrapTokens = newBootstrapIndex(ctx, store, log)
	}
	authz := unionAuthorizer{node.New(nodeGraph.graph, storeReader{store}, node.Rules()), rbacs.authz}
	nodeRestriction.Authorizer = authz
	metrics.reg.MustRegister(newQuotaCollector(ctx, store, log), newClusterQuotaCollector(ctx, store, log))

	// 4. Bootstrap objects and controllers.
	if err := bootstrap(ctx, store); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if err := reconcileRBAC(ctx, store, log); err != nil {
		return fmt.Errorf("bootstrap rbac policy: %w", err)
	}
	if err := bootstrapFlowControl(ctx, store, log); err != nil {
		return fmt.Errorf("bootstrap flowcontrol objects and apiservices: %w", err)
	}
	if err := store.RepairServiceAllocations(ctx); err != nil {
		return fmt.Errorf("recording service allocations: %w", err)
	}
	if err := loadCRDs(ctx, store); err != nil {
		return fmt.Errorf("loading custom resource definitions: %w", err)
	}

	// 5. Listener, credentials, kubeconfig.
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.BindAddress, strconv.Itoa(cfg.SecurePort)))
	if err != nil {
		return securePortError(cfg, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	hosts := append([]string{cfg.BindAddress, "127.0.0.1"}, cfg.TLSSANs...)
	if cfg.AdvertiseAddress != "" || clustered(cfg) {
		hosts = append(hosts, etcdAdvertise)
	}
	creds, err := loadOrCreateCredentials(cfg.DataDir, hosts)
	if err != nil {
		ln.Close()
		return err
	}
	// A cluster member's join endpoint (404 elsewhere) and join token.
	var joinTokenCreated bool
	join := &joinHandler{dataDir: cfg.DataDir, saKeyFile: saKeyFile(cfg), caPEM: creds.CAPEM, adminToken: creds.AdminToken, log: log}
	if embedded != nil && embedded.Clustered() {
		if join.token, joinTokenCreated, err = loadOrCreateJoinToken(cfg.DataDir, creds.CAPEM); err != nil {
			ln.Close()
			return fmt.Errorf("join token: %w", err)
		}
		join.etcd = embedded
		log.Info("embedded etcd cluster member: other quotads join with --join and the token in the join token file (quotad token prints it)", "join", "https://"+net.JoinHostPort(etcdAdvertise, strconv.Itoa(port)), "joinTokenFile", filepath.Join(cfg.DataDir, joinTokenFile))
	}
	host := cfg.BindAddress
	if host == "0.0.0.0" || host == "::" || host == "" {
		host = "127.0.0.1"
	}
	url := "https://" + net.JoinHostPort(host, strconv.Itoa(port))
	kubeconfig := filepath.Join(cfg.DataDir, "admin.kubeconfig")
	if err := writeKubeconfig(kubeconfig, url, creds.CAPEM, creds.AdminToken); err != nil {
		ln.Close()
		return err
	}
	// Authentication: client certificates, static tokens, ServiceAccount tokens checked
	// against an index of ServiceAccounts, Pods and Secrets kept by watch.
	auth, sas, err := newAuthenticator(cfg, creds.AdminToken, tokenObjects, bootstrapTokens)
	if err != nil {
		ln.Close()
		return err
	}
	if err := rbacs.wait(ctx); err != nil {
		ln.Close()
		return err
	}
	if bootstrapTokens != nil {
		if err := bootstrapTokens.set.waitSynced(ctx); err != nil {
			ln.Close()
			return err
		}
	}
	if err := tokenObjects.waitSynced(ctx); err != nil {
		ln.Close()
		return err
	}
	// The access reviews decide through the RBAC authorizer.
	reviews := &review.Reviews{Tokens: auth, Authorizer: authz, Rules: rbacs.authz, APIAudiences: sas.APIAudiences()}
	reviewHandlers := map[schema.GroupResource]apiserver.Review{}
	for gr, h := range reviews.Handlers() {
		reviewHandlers[gr] = apiserver.Review(h)
	}
	if fitPlugin != nil {
		reviewHandlers[quotaReviewsGR] = quotaReview(store, fitPlugin)
	}
	extra := map[string]http.Handler{"/metrics": metrics.handler(auth, rbacs), caCertsPath: join, joinPath: join}
	if cfg.Debug {
		extra["/debug/pprof/"] = pprofHandler(auth, rbacs)
	}
	oa := newOpenAPI(cat)
	fieldMgrs = newFieldManagers(oa)
	api := apiserver.New(apiserver.Config{
		Store: store, Auth: auth, Authz: authz, Table: store.ConvertToTable, ListTable: store.ConvertListToTable, OpenAPI: oa, Extra: extra, Logger: log, FieldManagers: fieldMgrs,
		Version:        CurrentVersion(),
		RequestTimeout: cfg.RequestTimeout, MinRequestTimeout: cfg.MinRequestTimeout,
		MaxRequestsInflight: cfg.MaxRequestsInflight, MaxMutatingRequestsInflight: cfg.MaxMutatingRequestsInflight,
		ObservePanic: metrics.apiPanics.Inc, Audit: auditor, Requests: metrics.api,
		Reviews: reviewHandlers, TokenRequest: admittedTokenRequests(chain, nodeRestriction, tokenRequester(store, sas, cfg.ServiceAccountMaxTokenExpiration)),
		EvictionAdmission:      subresourceAdmission(chain, nodeRestriction),
		MaxBodyBytesInFlight:   cfg.MaxBodyBytesInFlight,
		ObserveWatchWaiting:    metrics.observeWatchWaiting,
		ObserveLongReadWaiting: metrics.observeLongReadWaiting, MaxLongReads: cfg.MaxLongReads,
		QueueLength: queueLength(cfg), Penalties: penalties(cfg), MaxWatchesPerUser: cfg.MaxWatchesPerUser,
		ObserveQueueWaiting: metrics.observeQueueWaiting, ObservePenalty: metrics.penalties.Inc,
		Ready: func(ctx context.Context) error {
			_, err := st.Revision(ctx)
			return err
		},
	})
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(creds.CAPEM)
	srv := &http.Server{
		Handler: api,
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{creds.ServerCert},
			ClientAuth:   tls.VerifyClientCertIfGiven, ClientCAs: pool,
			MinVersion: tls.VersionTLS12,
		},
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	controllers, err := startControllers(ctx, store, log, cfg, metrics, creds.CAPEM, authz, snapshots)
	if err != nil {
		ln.Close()
		cancel()
		controllers.Wait()
		return err
	}
	controllers.Add(1)
	go func() { defer controllers.Done(); typeCheckPolicies(ctx, store, validatingPolicy, oa, log) }()
	// The kubernetes Service, its Endpoints and EndpointSlice name this replica before it serves.
	endpointIP := advertiseAddress(cfg.BindAddress)
	if cfg.AdvertiseAddress != "" {
		endpointIP = cfg.AdvertiseAddress
	}
	kubeSvc := kubernetesservice.New(store, log, metrics, kubernetesservice.Endpoint{IP: endpointIP, Port: int32(port)}, store.ServiceRanges().KubernetesServiceIP(), 0)
	if err := kubeSvc.Reconcile(ctx); err != nil {
		ln.Close()
		return fmt.Errorf("kubernetes service: %w", err)
	}
	controllers.Add(1)
	go func() { defer controllers.Done(); _ = kubeSvc.Start(ctx) }()
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.ServeTLS(ln, "", "") }()
	log.Info("quotad is ready", "url", url, "kubeconfig", kubeconfig)
	var embeddedErr <-chan error
	var embeddedStopped <-chan struct{}
	var etcdEndpoints []string
	if embedded != nil {
		embeddedErr, embeddedStopped = embedded.Err(), embedded.Stopped()
		etcdEndpoints = embedded.Endpoints()
	}
	if cfg.Ready != nil {
		r := &Running{URL: url, Kubeconfig: kubeconfig, Token: creds.AdminToken, CAPEM: creds.CAPEM, Store: store, EtcdEndpoints: etcdEndpoints}
		if join.etcd != nil {
			r.JoinToken, r.JoinTokenFile = join.token.String(), filepath.Join(cfg.DataDir, joinTokenFile)
			r.JoinTokenCreated = joinTokenCreated
			r.JoinURL = "https://" + net.JoinHostPort(etcdAdvertise, strconv.Itoa(port))
		}
		cfg.Ready(r)
	}
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			cancel()
			controllers.Wait()
			return err
		}
	case err := <-embeddedErr:
		cancel()
		_ = srv.Close()
		controllers.Wait()
		return fmt.Errorf("embedded etcd failed: %w", err)
	case <-embeddedStopped:
		cancel()
		_ = srv.Close()
		controllers.Wait()
		return errors.New("embedded etcd stopped by itself (was its member removed from the cluster?)")
	}
	// 6. Shutdown: stop accepting, end watches, stop controllers, then storage (deferred).
	shutdownCtx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		_ = srv.Close()
	}
	// Requests whose connections Shutdown let go (a watch the client stopped) still write
	// their audit events before the audit log is closed (deferred).
	api.Drain(shutdownCtx)
	controllers.Wait()
	log.Info("quotad stopped")
	return nil
}

// privateDir creates dir with mode 0700, or narrows an existing dir that others may read
// or enter to 0700: it holds the CA key, the admin token and etcd's data.
func privateDir(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		log.Warn("data dir was open to other users; narrowing its mode to 0700", "dir", dir, "mode", fi.Mode().Perm().String())
		return os.Chmod(dir, 0o700)
	}
	return nil
}

// queueLength is the edge's per-user queue length: none without priority and fairness.
func queueLength(cfg Config) int {
	if cfg.NoPriorityAndFairness {
		return 0
	}
	return apiserver.DefaultQueueLength
}

// penalties is the edge's refusal budget per client: none without priority and fairness.
func penalties(cfg Config) apiserver.Penalties {
	if cfg.NoPriorityAndFairness {
		return apiserver.Penalties{Burst: 1}
	}
	return cfg.Penalties
}
