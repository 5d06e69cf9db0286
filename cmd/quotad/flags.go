package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/version"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/election"
	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/registry/validation"
	"github.com/quotad/quotad/internal/server"
)

// description is what `quotad --help` prints before the flags, as kube's binaries do.
const description = `quotad serves the Kubernetes API around ResourceQuota: per-namespace hard limits on
compute, storage, extended resources and object counts, enforced at admission, with
usage that is exact at every moment (the object write and the quota charge commit in one
etcd transaction). It stores everything in etcd: an embedded member under --data-dir by
default, an external cluster with --etcd-servers.`

// section is one named group of flags, printed under "<Name> flags:" as kube's binaries
// print theirs.
type section struct {
	name string
	fs   *pflag.FlagSet
}

// options are the parsed command line.
type options struct {
	cfg       server.Config
	verbosity int
	// minRequestTimeout is --min-request-timeout, in seconds as kube's flag.
	minRequestTimeout int
	// priorityAndFairness is --enable-priority-and-fairness.
	priorityAndFairness bool
	// clusterQuotaRows is --cluster-quota-rows.
	clusterQuotaRows bool
	// bootstrapTokenAuth is --enable-bootstrap-token-auth.
	bootstrapTokenAuth bool
	// serviceIPRange and nodePortRange are --service-cluster-ip-range and
	// --service-node-port-range.
	serviceIPRange, nodePortRange string
	showVersion                   string
	help                          bool
	sections                      []section
	all                           *pflag.FlagSet
}

// newOptions declares every flag, grouped into sections, on one FlagSet.
func newOptions() *options {
	o := &options{all: pflag.NewFlagSet("quotad", pflag.ContinueOnError)}
	o.all.SortFlags = false
	c := &o.cfg
	add := func(name string, declare func(fs *pflag.FlagSet)) {
		fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
		fs.SortFlags = false
		declare(fs)
		o.sections = append(o.sections, section{name: name, fs: fs})
		o.all.AddFlagSet(fs)
	}
	add("Generic", func(fs *pflag.FlagSet) {
		fs.StringVar(&c.DataDir, "data-dir", "quotad-data", "Directory for the embedded etcd, the CA and serving certificates, the admin token and kubeconfig.")
		fs.DurationVar(&c.RequestTimeout, "request-timeout", time.Minute, "An optional field indicating the duration a handler must keep a request open before timing it out. This is the default request timeout for requests but may be overridden by the ?timeout= parameter.")
		fs.IntVar(&c.MaxRequestsInflight, "max-requests-inflight", 400, "The maximum number of non-mutating requests in flight at a given time. When the server exceeds this, it rejects requests. Zero for no limit.")
		fs.IntVar(&c.MaxMutatingRequestsInflight, "max-mutating-requests-inflight", 200, "The maximum number of mutating requests in flight at a given time. When the server exceeds this, it rejects requests. Zero for no limit.")
		fs.BoolVar(&o.priorityAndFairness, "enable-priority-and-fairness", true, "If true, requests that find the in-flight limits reached wait, queued per user and served in turn, and clients whose requests keep being refused as malformed are slowed down; if false, such requests are rejected at once and no client is slowed down.")
		fs.BoolVar(&o.clusterQuotaRows, "cluster-quota-rows", true, "Store each ClusterResourceQuota's status.namespaces as rows under one list of resource names (less than half the bytes every charge writes). Set it to false while replicas of a quotad older than the rows share the storage (an upgrade one replica at a time), which read cluster quotas stored so without their entries; reads are the same either way.")
		fs.IntVar(&c.MaxWatchesPerUser, "max-watches-per-user", 2000, "The maximum number of watches one user may hold open at once (members of system:masters are not limited). When a user exceeds this, the watch is rejected with 429. Negative for no limit.")
		fs.IntVar(&o.minRequestTimeout, "min-request-timeout", 1800, "An optional field indicating the minimum number of seconds a handler must keep a request open before timing it out. Currently only honored by the watch request handler, which picks a randomized value above this number as the connection timeout, to spread out load.")
		fs.StringVar(&o.serviceIPRange, "service-cluster-ip-range", "10.96.0.0/12", "A CIDR notation IP range from which to assign service cluster IPs. This must not overlap with any IP ranges assigned to nodes or pods. One IPv4 range (this server does not serve dual-stack Services); every replica sharing the storage must be given the same.")
		fs.StringVar(&o.nodePortRange, "service-node-port-range", "30000-32767", "A port range to reserve for services with NodePort visibility.  This must not overlap with the ephemeral port range on nodes.  Example: '30000-32767'. Inclusive at both ends of the range.")
		fs.BoolVar(&c.Debug, "profiling", false, "Enable profiling via web interface host:port/debug/pprof/ (authenticated clients only).")
	})
	add("Etcd", func(fs *pflag.FlagSet) {
		fs.StringSliceVar(&c.EtcdServers, "etcd-servers", nil, "List of etcd servers to connect with (scheme://ip:port), comma separated. When set, no embedded etcd is started.")
		fs.StringVar(&c.EtcdCAFile, "etcd-cafile", "", "SSL Certificate Authority file used to secure etcd communication.")
		fs.StringVar(&c.EtcdCertFile, "etcd-certfile", "", "SSL certification file used to secure etcd communication.")
		fs.StringVar(&c.EtcdKeyFile, "etcd-keyfile", "", "SSL key file used to secure etcd communication.")
		fs.StringVar(&c.EtcdSnapshotScheduleCron, "etcd-snapshot-schedule-cron", "", "Snapshot interval time in cron spec. eg. every 5 hours '0 */5 * * *'. Empty: no scheduled snapshots. With --leader-elect, only the leader takes them.")
		fs.StringVar(&c.EtcdSnapshotScheduleCron, "etcd-snapshot-schedule", "", "Alias of --etcd-snapshot-schedule-cron.")
		_ = fs.MarkHidden("etcd-snapshot-schedule")
		fs.IntVar(&c.EtcdSnapshotRetention, "etcd-snapshot-retention", 5, "Number of snapshots to retain.")
		fs.StringVar(&c.EtcdSnapshotDir, "etcd-snapshot-dir", "", "Directory to save db snapshots. (default: ${data-dir}/snapshots)")
	})
	add("Clustered etcd", func(fs *pflag.FlagSet) {
		fs.BoolVar(&c.ClusterInit, "cluster-init", false, "Make the embedded etcd a member of a cluster other quotads may join with --join: it listens for peers on --advertise-address:--etcd-peer-port and for clients there and on the loopback address at --etcd-client-port, and writes the join token to join-token in --data-dir. A data dir with a single member's etcd keeps its data.")
		fs.StringVar(&c.Join, "join", "", "Join the embedded etcd cluster of the quotad serving at this URL (https://<host>:<secure-port>), as a new member, on a data dir without etcd data; on a restart the member starts from its data dir. Needs --join-token or --join-token-file.")
		fs.StringVar(&c.JoinToken, "join-token", "", "The token to join with: the join-token file of a cluster member (K10<sha256 of the CA certificate>::server:<secret>).")
		fs.StringVar(&c.JoinTokenFile, "join-token-file", "", "A file holding the token to join with (instead of --join-token).")
		fs.StringVar(&c.AdvertiseAddress, "advertise-address", "", "The IP address on which to advertise the embedded etcd member to the cluster's other members and clients (and the apiserver in the kubernetes Endpoints). If blank, the --bind-address will be used; 127.0.0.1 when that is 0.0.0.0 or a loopback address. On a restart the embedded etcd member keeps the address it started with (kept in --data-dir; a different one is refused).")
		fs.IntVar(&c.EtcdPeerPort, "etcd-peer-port", 0, "The port of the embedded etcd's peer listener (with --cluster-init or --join). Default: 2380 on the first start; on a restart, the port the member started with, kept in --data-dir (a different one is refused: a member's URLs do not change on a restart).")
		fs.IntVar(&c.EtcdClientPort, "etcd-client-port", 0, "The port of the embedded etcd's client listener (with --cluster-init or --join). Default: 2379 on the first start; on a restart, the port the member started with, kept in --data-dir (a different one is refused).")
	})
	add("Secure serving", func(fs *pflag.FlagSet) {
		fs.StringVar(&c.BindAddress, "bind-address", "127.0.0.1", "The IP address on which to listen for the --secure-port port.")
		fs.StringSliceVar(&c.TLSSANs, "tls-san", nil, "Add additional hostnames or IPv4/IPv6 addresses as Subject Alternative Names on the server TLS cert (a load balancer's name or address in front of several quotads), comma separated or repeated.")
		fs.IntVar(&c.SecurePort, "secure-port", 6443, "The port on which to serve HTTPS with authentication and authorization. 0 picks a free port; the admin kubeconfig records the real one.")
	})
	add("Authentication", func(fs *pflag.FlagSet) {
		fs.StringVar(&c.TokenAuthFile, "token-auth-file", "", "If set, the file that will be used to secure the secure port of the API server via token authentication.")
		fs.BoolVar(&o.bootstrapTokenAuth, "enable-bootstrap-token-auth", true, "Enable to allow secrets of type 'bootstrap.kubernetes.io/token' in the 'kube-system' namespace to be used for TLS bootstrapping authentication (quotad token create makes them; on by default, unlike kube-apiserver: only an admin can create such a Secret).")
		fs.StringVar(&c.ServiceAccountIssuer, "service-account-issuer", "https://kubernetes.default.svc.cluster.local", "Identifier of the service account token issuer. The issuer will assert this identifier in \"iss\" claim of issued tokens.")
		fs.StringSliceVar(&c.APIAudiences, "api-audiences", nil, "Identifiers of the API. The service account token authenticator will validate that tokens used against the API are bound to at least one of these audiences. If not set, defaults to --service-account-issuer.")
		fs.StringVar(&c.ServiceAccountSigningKeyFile, "service-account-signing-key-file", "", "Path to the file that contains the current private key of the service account token issuer (RSA or ECDSA P-256, PEM). The issuer will sign issued ID tokens with this private key. Default: sa.key in --data-dir, created on first start.")
		fs.DurationVar(&c.ServiceAccountMaxTokenExpiration, "service-account-max-token-expiration", 0, "The maximum validity duration of a token created by the service account token issuer. If an otherwise valid TokenRequest with a validity duration larger than this value is requested, a token will be issued with a validity duration of this value.")
	})
	add("Auditing", func(fs *pflag.FlagSet) {
		fs.StringVar(&c.AuditPolicyFile, "audit-policy-file", "", "Path to the file that defines the audit policy configuration.")
		fs.StringVar(&c.AuditLogPath, "audit-log-path", "", "If set, all requests coming to the apiserver will be logged to this file.  '-' means standard out.")
		fs.IntVar(&c.AuditLogMaxAge, "audit-log-maxage", 0, "The maximum number of days to retain old audit log files based on the timestamp encoded in their filename.")
		fs.IntVar(&c.AuditLogMaxBackup, "audit-log-maxbackup", 0, "The maximum number of old audit log files to retain. Setting a value of 0 will mean there's no restriction on the number of files.")
		fs.IntVar(&c.AuditLogMaxSize, "audit-log-maxsize", 0, "The maximum size in megabytes of the audit log file before it gets rotated.")
		fs.BoolVar(&c.AuditLogCompress, "audit-log-compress", false, "If set, the rotated log files will be compressed using gzip.")
		fs.StringVar(&c.AuditLogMode, "audit-log-mode", "blocking", "Strategy for sending audit events. Blocking indicates sending events should block server responses. Batch causes the backend to buffer and write events asynchronously. Known modes are batch,blocking,blocking-strict.")
		fs.IntVar(&c.AuditLogBatchBufferSize, "audit-log-batch-buffer-size", 10000, "The size of the buffer to store events before batching and writing. Only used in batch mode.")
	})
	add("Admission", func(fs *pflag.FlagSet) {
		fs.StringVar(&c.AdmissionControlConfigFile, "admission-control-config-file", "", "File with admission control configuration (ResourceQuota limitedResources).")
		fs.StringSliceVar(&c.EnableAdmissionPlugins, "enable-admission-plugins", nil, "admission plugins that should be enabled in addition to default enabled ones ("+strings.Join(admission.PluginNames(), ", ")+"). Comma-delimited list of admission plugins: "+strings.Join(sortedPlugins(), ", ")+".")
		fs.StringSliceVar(&c.DisableAdmissionPlugins, "disable-admission-plugins", nil, "admission plugins that should be disabled although they are in the default enabled plugins list. Comma-delimited list of admission plugins: "+strings.Join(sortedPlugins(), ", ")+".")
	})
	add("Controllers", func(fs *pflag.FlagSet) {
		fs.DurationVar(&c.NodeMonitorPeriod, "node-monitor-period", 5*time.Second, "The period for syncing NodeStatus in NodeLifecycleController.")
		fs.DurationVar(&c.NodeMonitorGracePeriod, "node-monitor-grace-period", 50*time.Second, "Amount of time which we allow running Node to be unresponsive before marking it unhealthy. Must be N times more than kubelet's nodeStatusUpdateFrequency, where N means number of retries allowed for kubelet to post node status. This value should also be greater than the sum of HTTP2_PING_TIMEOUT_SECONDS and HTTP2_READ_IDLE_TIMEOUT_SECONDS")
		fs.DurationVar(&c.NodeStartupGracePeriod, "node-startup-grace-period", 60*time.Second, "Amount of time which we allow starting Node to be unresponsive before marking it unhealthy.")
		fs.Float32Var(&c.NodeEvictionRate, "node-eviction-rate", 0.1, "Number of nodes per second on which pods are deleted in case of node failure when a zone is healthy (see --unhealthy-zone-threshold for definition of healthy/unhealthy). Zone refers to entire cluster in non-multizone clusters.")
		fs.Float32Var(&c.SecondaryNodeEvictionRate, "secondary-node-eviction-rate", 0.01, "Number of nodes per second on which pods are deleted in case of node failure when a zone is unhealthy (see --unhealthy-zone-threshold for definition of healthy/unhealthy). Zone refers to entire cluster in non-multizone clusters. This value is implicitly overridden to 0 if the cluster size is smaller than --large-cluster-size-threshold.")
		fs.Int32Var(&c.LargeClusterSizeThreshold, "large-cluster-size-threshold", 50, "Number of nodes from which node-lifecycle-controller treats the cluster as large for the eviction logic purposes. --secondary-node-eviction-rate is implicitly overridden to 0 for clusters this size or smaller. Notice: If nodes reside in multiple zones, this threshold will be considered as zone node size threshold for each zone to determine node eviction rate independently.")
		fs.Float32Var(&c.UnhealthyZoneThreshold, "unhealthy-zone-threshold", 0.55, "Fraction of Nodes in a zone which needs to be not Ready (minimum 3) for zone to be treated as unhealthy. ")
		fs.IntVar(&c.MaxEndpointsPerSlice, "max-endpoints-per-slice", 100, "The maximum number of endpoints that will be added to an EndpointSlice. More endpoints per slice will result in less endpoint slices, but larger resources. Defaults to 100.")
		fs.DurationVar(&c.ResourceQuotaSyncPeriod, "resource-quota-sync-period", 5*time.Minute, "The period for verifying quota usage status in the system: every quota is recomputed from storage and any drift is repaired and reported.")
		fs.IntVar(&c.TerminatedPodGCThreshold, "terminated-pod-gc-threshold", 12500, "Number of terminated pods that can exist before the terminated pod garbage collector starts deleting terminated pods. If <= 0, the terminated pod garbage collector is disabled.")
		fs.Float32Var(&c.KubeAPIQPS, "kube-api-qps", 20, "QPS to use while talking with kubernetes apiserver: the objects a second each of kube-controller-manager's controllers writes (creates, updates, deletes, its events), but the namespace controller's deletions of a namespace's objects; reads are served from memory. As a client's: 0 is 5 a second, a negative value leaves the controllers unpaced.")
		fs.IntVar(&c.KubeAPIBurst, "kube-api-burst", 30, "Burst to use while talking with kubernetes apiserver: the writes each controller may make at once before --kube-api-qps paces it. As a client's: 0 is 10.")
		fs.BoolVar(&c.LeaderElect, "leader-elect", true, "Start a leader election client and gain leadership before executing the main loop. Enable this when running replicated components for high availability. Only the leader runs kube-controller-manager's controllers; every replica serves the API.")
		fs.DurationVar(&c.LeaderElectLeaseDuration, "leader-elect-lease-duration", 15*time.Second, "The duration that non-leader candidates will wait after observing a leadership renewal until attempting to acquire leadership of a led but unrenewed leader slot. This is effectively the maximum duration that a leader can be stopped before it is replaced by another candidate. This is only applicable if leader election is enabled.")
		fs.DurationVar(&c.LeaderElectRenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "The interval between attempts by the acting master to renew a leadership slot before it stops leading. This must be less than the lease duration. This is only applicable if leader election is enabled.")
		fs.DurationVar(&c.LeaderElectRetryPeriod, "leader-elect-retry-period", 2*time.Second, "The duration the clients should wait between attempting acquisition and renewal of a leadership. This is only applicable if leader election is enabled.")
	})
	add("Logs", func(fs *pflag.FlagSet) {
		fs.VarP((*level)(&o.verbosity), "v", "v", "number for the log level verbosity (2 logs every request, 4 and above debug detail)")
	})
	add("Global", func(fs *pflag.FlagSet) {
		fs.BoolVarP(&o.help, "help", "h", false, "help for quotad")
		o.showVersion = "false"
		fs.Var((*versionFlag)(&o.showVersion), "version", "--version, --version=raw prints version information and quit")
		fs.Lookup("version").NoOptDefVal = "true"
	})
	return o
}

// parse reads args. A parse error is returned as is; the caller prints it with the usage.
func (o *options) parse(args []string) error {
	o.all.Usage = func() {}
	if err := o.all.Parse(args); err != nil {
		return err
	}
	if rest := o.all.Args(); len(rest) > 0 {
		return fmt.Errorf("unknown command %q for \"quotad\"", rest[0])
	}
	o.cfg.LogLevel = logLevel(o.verbosity)
	o.cfg.MinRequestTimeout = time.Duration(o.minRequestTimeout) * time.Second
	o.cfg.NoPriorityAndFairness = !o.priorityAndFairness
	o.cfg.NoClusterQuotaRows = !o.clusterQuotaRows
	o.cfg.NoBootstrapTokenAuth = !o.bootstrapTokenAuth
	// As client-go's rest.Config, which kube-controller-manager's clients are made from: 0
	// is its defaults (5 a second, burst 10), a negative QPS no pacing (Config: 0).
	switch {
	case o.cfg.KubeAPIQPS == 0:
		o.cfg.KubeAPIQPS = 5
	case o.cfg.KubeAPIQPS < 0:
		o.cfg.KubeAPIQPS = 0
	}
	if o.cfg.KubeAPIBurst == 0 {
		o.cfg.KubeAPIBurst = 10
	}
	ranges, err := registry.ParseServiceRanges(o.serviceIPRange, o.nodePortRange)
	if err != nil {
		return fmt.Errorf("invalid --%v", err)
	}
	o.cfg.ServiceRanges = ranges
	if c := o.cfg; c.EtcdSnapshotScheduleCron != "" {
		// Checked before anything starts (server.Run checks it only once etcd runs).
		if _, err := validation.ParseCron(c.EtcdSnapshotScheduleCron); err != nil {
			return fmt.Errorf("invalid --etcd-snapshot-schedule-cron %q: %v", c.EtcdSnapshotScheduleCron, err)
		}
		if c.EtcdSnapshotRetention < 1 {
			return fmt.Errorf("invalid --etcd-snapshot-retention %d: must be at least 1", c.EtcdSnapshotRetention)
		}
	}
	if c := o.cfg; c.LeaderElect {
		// As given: a zero duration is refused here, as kube-controller-manager does.
		return election.Validate(c.LeaderElectLeaseDuration, c.LeaderElectRenewDeadline, c.LeaderElectRetryPeriod)
	}
	return nil
}

// level is --v's value: a non-negative verbosity, printed as kube prints its "Level".
type level int

func (l *level) String() string { return strconv.Itoa(int(*l)) }
func (l *level) Type() string   { return "Level" }
func (l *level) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return fmt.Errorf("must be a non-negative integer")
	}
	*l = level(v)
	return nil
}

// versionFlag is --version's value: false, true or raw.
type versionFlag string

func (v *versionFlag) String() string { return string(*v) }
func (v *versionFlag) Type() string   { return "version" }
func (v *versionFlag) Set(s string) error {
	switch s {
	case "false", "true", "raw":
		*v = versionFlag(s)
		return nil
	}
	return fmt.Errorf("valid values are false, true, raw")
}

// logLevel maps kube's --v to a slog level: V(n) messages are logged at slog.Level(-n),
// so --v=0 shows Info and above, --v=2 adds request lines, --v=4 adds slog's Debug.
func logLevel(v int) slog.Level { return slog.Level(-v) }

// printUsage prints "Usage:" and every section, as kube's binaries print their help.
func (o *options) printUsage(w io.Writer) {
	fmt.Fprintf(w, "Usage:\n  quotad [flags]\n")
	for _, s := range o.sections {
		fmt.Fprintf(w, "\n%s flags:\n\n%s", s.name, s.fs.FlagUsagesWrapped(100))
	}
}

// printHelp prints the description and the usage.
func (o *options) printHelp(w io.Writer) {
	fmt.Fprintf(w, "%s\n\n", description)
	o.printUsage(w)
}

// printVersion prints the version as kube's binaries do: "Kubernetes vX.Y.Z" or, raw,
// the version.Info structure.
func printVersion(w io.Writer, mode string, info version.Info) {
	if mode == "raw" {
		b, _ := json.MarshalIndent(info, "", "  ")
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	fmt.Fprintf(w, "quotad %s\n", strings.TrimSpace(info.GitVersion))
}

// sortedPlugins is every admission plugin's name in alphabetical order, as
// kube-apiserver's help lists them.
func sortedPlugins() []string {
	names := admission.PluginNames()
	sort.Strings(names)
	return names
}
