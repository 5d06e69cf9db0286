package storage

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/client/pkg/v3/fileutil"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3rpc"
	"go.etcd.io/etcd/server/v3/etcdserver/txn"
	"go.etcd.io/etcd/server/v3/proxy/grpcproxy/adapter"
	"go.uber.org/zap"
)

// Defaults of the embedded etcd.
const (
	// EmbeddedQuotaBackendBytes is the backend size quota (etcd's --quota-backend-bytes).
	EmbeddedQuotaBackendBytes = 8 << 30
	// DefaultCompactionRetention is how much history the embedded etcd keeps: it runs
	// etcd's periodic compactor ("periodic" mode), which every retention period compacts
	// away the revisions older than one retention period. Time-based (rather than
	// revision-count) retention gives watchers that fall behind or reconnect the same
	// window as kube-apiserver's 5-minute compaction, whatever the write rate.
	DefaultCompactionRetention = 5 * time.Minute
	// DefaultProgressNotifyInterval is how often the embedded etcd sends a progress
	// notification to each idle watcher, so that an idle watch's Revision advances.
	DefaultProgressNotifyInterval = 5 * time.Second
	// DefaultDefragInterval is how often the embedded etcd checks whether to defragment.
	DefaultDefragInterval = 10 * time.Minute
	// DefragMinFreeBytes and DefragMinFreeFraction are the defragmentation policy: the
	// backend is defragmented when its free space (file size minus size in use, which
	// compaction frees but never returns to the file system) is at least DefragMinFreeBytes
	// and at least DefragMinFreeFraction of the file. Defragmenting a single member blocks
	// its reads and writes for the duration, roughly proportional to the size in use, so
	// it is done only when it gives back a lot.
	DefragMinFreeBytes    = 64 << 20
	DefragMinFreeFraction = 0.5
)

// startAttempts bounds the retries when a chosen free port is taken before etcd binds it.
const startAttempts = 5

// Embedded is an etcd server running in this process, a single member or (WithCluster) a
// cluster member, with an in-process client (no gRPC over the network), a background
// defragmentation loop and, for a cluster member, a learner promotion loop.
type Embedded struct {
	etcd      *embed.Etcd
	client    *clientv3.Client
	logger    *slog.Logger
	endpoints []string
	pki       embeddedPKI
	lock      *fileutil.LockedFile
	quota     int64
	// stopping demotes etcd's log lines to debug during Close.
	stopping *atomic.Bool

	// cluster is set in cluster mode.
	cluster *ClusterConfig

	defrag      defragPolicy
	stopDefrag  context.CancelFunc
	defragDone  chan struct{}
	promoteDone chan struct{}

	closeOnce sync.Once

	// listed is its stores' ListedBytes; pagedAt and listPagedAt what it was at the last
	// page-out of PageOutIfListed and of pageOutListing, which pageMu serializes; paging is
	// set while a list's page-out runs.
	listed      atomic.Int64
	pageMu      sync.Mutex
	pagedAt     atomic.Int64
	listPagedAt atomic.Int64
	paging      atomic.Bool
	// resident is the database size in use up to which it is never paged out
	// (WithResidentDatabase).
	resident int64
}

// EmbeddedOption adjusts StartEmbedded.
type EmbeddedOption func(*embeddedConfig)

type embeddedConfig struct {
	logLevel          slog.Level
	compaction        time.Duration
	progressNotify    time.Duration
	defragInterval    time.Duration
	unsafeNoFsync     bool
	fastElection      bool
	quotaBackendBytes int64
	residentDatabase  int64
	cluster           *ClusterConfig
}

// WithEtcdLogLevel sets the lowest level of etcd's own log lines passed to the logger
// (default slog.LevelError: etcd is quiet unless something is wrong; use slog.LevelDebug
// or slog.LevelInfo with a debug flag).
func WithEtcdLogLevel(l slog.Level) EmbeddedOption {
	return func(c *embeddedConfig) { c.logLevel = l }
}

// WithResidentDatabase sets the database size in use up to which lists leave its pages
// resident (default ResidentDatabaseBytes; 0 pages out whatever its size).
func WithResidentDatabase(bytes int64) EmbeddedOption {
	return func(c *embeddedConfig) { c.residentDatabase = bytes }
}

// WithCompactionRetention sets the periodic compaction retention (default
// DefaultCompactionRetention).
func WithCompactionRetention(d time.Duration) EmbeddedOption {
	return func(c *embeddedConfig) { c.compaction = d }
}

// WithProgressNotifyInterval sets the watch progress notification interval (default
// DefaultProgressNotifyInterval; etcd's minimum is 100ms). etcd keeps this interval in
// process-wide state: the last embedded etcd started in a process sets it for all.
func WithProgressNotifyInterval(d time.Duration) EmbeddedOption {
	return func(c *embeddedConfig) { c.progressNotify = d }
}

// WithDefragInterval sets how often the defragmentation policy is checked (default
// DefaultDefragInterval; 0 disables the loop).
func WithDefragInterval(d time.Duration) EmbeddedOption {
	return func(c *embeddedConfig) { c.defragInterval = d }
}

// WithUnsafeNoFsync disables fsync. Data is lost on a machine crash: for tests only.
func WithUnsafeNoFsync() EmbeddedOption {
	return func(c *embeddedConfig) { c.unsafeNoFsync = true }
}

// WithFastElection makes a single member elect itself within 100ms of starting instead of
// within 1s: its raft ticks are 10ms instead of etcd's 100ms (--heartbeat-interval, with
// --election-timeout ten ticks). A single member has no peers to send heartbeats to or hold
// elections with, so only the wait for its first election changes: for tests, which start
// many.
func WithFastElection() EmbeddedOption {
	return func(c *embeddedConfig) { c.fastElection = true }
}

// StartEmbedded starts a single-member etcd with its data in dir/etcd and waits until it
// serves. Restarting on the same dir serves the same keys, values and revisions. A second
// StartEmbedded on a dir in use fails at once (the error wraps fileutil.ErrLocked).
//
// Access: only this process and holders of ClientTLS's files reach it. The one client
// listener is https on 127.0.0.1 at a free port chosen at start (it may differ across
// restarts; the data does not depend on it) and requires a client certificate signed by
// the etcd's own CA in dir/etcd-pki (mode 0700, keys 0600; see loadOrCreatePKI). There is
// no peer listener: a single member has no peers (it advertises a unix socket URL in its
// private data dir that nothing listens on). dir/etcd and dir/etcd-pki are made 0700.
// WithCluster makes it a cluster member instead (ClusterConfig: https peer and client
// listeners on its advertise address, certificates of a kept etcd CA); it returns once the
// member votes.
//
// Configuration: periodic auto-compaction keeping DefaultCompactionRetention of history,
// EmbeddedQuotaBackendBytes quota, MaxTxnOps and the default 1.5 MiB request limit, etcd
// logs at error level through logger (nil: discarded), a defragmentation check every
// DefaultDefragInterval (policy: DefragMinFreeBytes and DefragMinFreeFraction).
func StartEmbedded(ctx context.Context, dir string, logger *slog.Logger, opts ...EmbeddedOption) (*Embedded, error) {
	conf := embeddedConfig{
		logLevel:          slog.LevelError,
		compaction:        DefaultCompactionRetention,
		progressNotify:    DefaultProgressNotifyInterval,
		defragInterval:    DefaultDefragInterval,
		quotaBackendBytes: EmbeddedQuotaBackendBytes,
		residentDatabase:  ResidentDatabaseBytes,
	}
	for _, o := range opts {
		o(&conf)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	dataDir := filepath.Join(dir, "etcd")

	// 1. Take the data dir, so that a second quotad on it fails instead of blocking.
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("embedded etcd: %w", err)
	}
	if err := os.Chmod(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("embedded etcd: %w", err)
	}
	lock, err := TryLock(filepath.Join(dir, "etcd.lock"))
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: data dir %s is in use: %w", dir, err)
	}

	// 2. The certificates of the listeners.
	var pki embeddedPKI
	if conf.cluster != nil {
		if err = conf.cluster.check(); err == nil {
			pki, err = loadOrCreateClusterPKI(dir, []string{conf.cluster.AdvertiseHost}, time.Now())
		}
	} else {
		pki, err = loadOrCreatePKI(dir, time.Now())
	}
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("embedded etcd: certificates: %w", err)
	}

	// 3. Start etcd: a single member on a free loopback port, retrying when it is taken in
	// between; a cluster member on its configured ports.
	stopping := new(atomic.Bool)
	zl := newZapLogger(logger, conf.logLevel, stopping)
	var e *embed.Etcd
	if conf.cluster != nil {
		for attempt := 1; ; attempt++ {
			e, err = startEtcd(dataDir, clusterMember(dataDir, pki, *conf.cluster), zl, conf)
			if err == nil || !membershipBehind(err) || attempt == joinStartAttempts {
				break
			}
			// A joining member checks its cluster against a peer's membership; a peer
			// that has not applied this member's addition yet (one that joined just
			// before) answers without it. It will have shortly: start again, unless
			// the server is stopping.
			select {
			case <-ctx.Done():
				err = fmt.Errorf("%w (stopped while waiting to start again: %w)", err, ctx.Err())
			case <-time.After(joinStartBackoff):
				continue
			}
			break
		}
		if err != nil {
			lock.Close()
			return nil, fmt.Errorf("embedded etcd: start in %s: %w", dataDir, err)
		}
	}
	for attempt := 1; e == nil; attempt++ {
		var ports []int
		if ports, err = FreeLoopbackPorts(1); err == nil {
			e, err = startEtcd(dataDir, singleMember(dataDir, pki, ports[0]), zl, conf)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EADDRINUSE) || attempt == startAttempts {
			lock.Close()
			return nil, fmt.Errorf("embedded etcd: start in %s: %w", dataDir, err)
		}
	}

	// 4. Wait until it serves; a cluster member then also until its peer URL is the
	// configured one and it votes (a joiner starts as a learner).
	fail := func(err error) (*Embedded, error) {
		stopping.Store(true)
		closeEtcd(e)
		lock.Close()
		return nil, err
	}
	if conf.cluster != nil {
		stopWaitLog := logWaiting(e, *conf.cluster, logger)
		defer stopWaitLog()
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		return fail(fmt.Errorf("embedded etcd: %w", err))
	case <-ctx.Done():
		return fail(fmt.Errorf("embedded etcd: waiting to serve: %w", ctx.Err()))
	}
	client := v3client.New(e.Server)
	if conf.cluster != nil {
		if err := settleMember(ctx, e, client, *conf.cluster, logger); err != nil {
			_ = client.Close()
			return fail(fmt.Errorf("embedded etcd: %w", err))
		}
	}

	endpoints := make([]string, 0, len(e.Clients))
	for _, l := range e.Clients {
		endpoints = append(endpoints, "https://"+l.Addr().String())
	}
	if err := writeEndpoints(dir, endpoints); err != nil {
		_ = client.Close()
		return fail(fmt.Errorf("embedded etcd: recording endpoints: %w", err))
	}
	loopCtx, stop := context.WithCancel(context.Background())
	emb := &Embedded{
		etcd:        e,
		client:      client,
		cluster:     conf.cluster,
		logger:      logger,
		endpoints:   endpoints,
		pki:         pki,
		lock:        lock,
		quota:       conf.quotaBackendBytes,
		resident:    conf.residentDatabase,
		stopping:    stopping,
		defrag:      defragPolicy{minFree: DefragMinFreeBytes, minFraction: DefragMinFreeFraction},
		stopDefrag:  stop,
		defragDone:  make(chan struct{}),
		promoteDone: make(chan struct{}),
	}
	go emb.defragLoop(loopCtx, conf.defragInterval)
	go emb.promoteLoop(loopCtx)
	logger.Info("embedded etcd serving", "dir", dataDir, "endpoints", endpoints)
	return emb, nil
}

// closeEtcd stops e, also when it has not become ready (a cluster member waiting for a
// quorum): embed.Etcd.Close waits for its client servers, which start only once the server
// is ready or stopping, and stops the server only after them, so it would wait forever.
// Stopping the server first lets Close go through at once.
func closeEtcd(e *embed.Etcd) {
	select {
	case <-e.Server.ReadyNotify():
	default:
		e.Server.HardStop()
	}
	e.Close()
}

// joinStartAttempts and joinStartBackoff bound how often, and how far apart, a joining
// member starts again while a peer's membership lags behind its addition.
const (
	joinStartAttempts = 10
	joinStartBackoff  = 300 * time.Millisecond
)

// membershipBehind reports whether etcd refused to start because a peer's membership has
// fewer or more members than the member was given (etcd's ValidateClusterAndAssignIDs):
// what a peer that has not applied the member's addition yet answers.
func membershipBehind(err error) bool {
	return strings.Contains(err.Error(), "member count is unequal")
}

// embeddedCatchUpEntries is how many applied raft entries the single embedded member keeps
// in memory after each of etcd's in-memory snapshots (taken every 100 entries; etcd's
// default is 5,000). They are for followers catching up, and a single member has none: a
// group-committed entry carries up to a megabyte (a cluster quota's round rewrites its
// status, an entry per namespace), and 500 of them held 37 MB of a 113 MB heap
// (docs/benchmarks.md).
const embeddedCatchUpEntries = 10

// etcdMember is where a member listens and what it advertises.
type etcdMember struct {
	name                          string
	listenClient, advertiseClient []url.URL
	// listenPeer is empty for a single member, whose advertised peer URL nobody serves.
	listenPeer    []url.URL
	advertisePeer url.URL
	pki           embeddedPKI
	// initialCluster is etcd's --initial-cluster, used only when the data dir has no data;
	// existing is --initial-cluster-state=existing (a joiner).
	initialCluster string
	existing       bool
}

// singleMember is a single member with its client listener on the given loopback port.
func singleMember(dataDir string, pki embeddedPKI, clientPort int) etcdMember {
	clientURL := url.URL{Scheme: "https", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(clientPort))}
	peerURL := embeddedPeerURL(dataDir)
	return etcdMember{
		name: embeddedMemberName, listenClient: []url.URL{clientURL}, advertiseClient: []url.URL{clientURL},
		advertisePeer: peerURL, pki: pki, initialCluster: embeddedMemberName + "=" + peerURL.String(),
	}
}

// startEtcd configures and starts etcd once as member m. A port in use gives an error
// wrapping syscall.EADDRINUSE.
func startEtcd(dataDir string, m etcdMember, logger *zap.Logger, conf embeddedConfig) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Name = m.name
	cfg.Dir = dataDir
	cfg.ListenClientUrls = m.listenClient
	cfg.AdvertiseClientUrls = m.advertiseClient
	cfg.ClientTLSInfo = transport.TLSInfo{
		CertFile: m.pki.server.CertFile, KeyFile: m.pki.server.KeyFile, TrustedCAFile: m.pki.server.CAFile,
		ClientCertAuth: true,
	}
	cfg.ListenPeerUrls = m.listenPeer
	cfg.AdvertisePeerUrls = []url.URL{m.advertisePeer}
	if len(m.listenPeer) > 0 {
		cfg.PeerTLSInfo = transport.TLSInfo{
			CertFile: m.pki.peer.CertFile, KeyFile: m.pki.peer.KeyFile, TrustedCAFile: m.pki.peer.CAFile,
			ClientCertAuth: true,
		}
	}
	cfg.InitialCluster = m.initialCluster
	if m.existing {
		cfg.ClusterState = embed.ClusterStateFlagExisting
	}
	cfg.AutoCompactionMode = embed.CompactorModePeriodic
	cfg.AutoCompactionRetention = conf.compaction.String()
	cfg.QuotaBackendBytes = conf.quotaBackendBytes
	cfg.MaxTxnOps = MaxTxnOps
	if len(m.listenPeer) == 0 {
		// The raft log entries etcd keeps in memory for slow followers: a single member
		// has none, and at high write rates 5,000 batched transactions hold tens of
		// megabytes.
		cfg.SnapshotCatchUpEntries = embeddedCatchUpEntries
	}
	if conf.fastElection && len(m.listenPeer) == 0 {
		cfg.TickMs, cfg.ElectionMs = 10, 100
	}
	cfg.WatchProgressNotifyInterval = conf.progressNotify
	cfg.UnsafeNoFsync = conf.unsafeNoFsync
	cfg.EnableGRPCGateway = false
	cfg.Logger = "zap"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(logger)
	return embed.StartEtcd(cfg)
}

// embeddedMemberName is the embedded member's name (a restored snapshot's member has it too).
const embeddedMemberName = "quotad"

// embeddedPeerURL is the embedded member's peer URL for its etcd data dir: advertised (raft
// needs a member URL) but never listened on, as a single member has no peers. A socket path
// in the private data dir, so nobody else could serve it either.
func embeddedPeerURL(dataDir string) url.URL {
	return url.URL{Scheme: "unix", Path: filepath.Join(dataDir, "peer.sock")}
}

// FreeLoopbackPorts returns n distinct TCP ports free on 127.0.0.1 a moment ago.
func FreeLoopbackPorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("choosing a free port: %w", err)
		}
		// Held open until all are chosen, so that the ports differ.
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Client returns the in-process client of the server. It stays valid until Close.
func (e *Embedded) Client() *clientv3.Client { return e.client }

// Store returns a new Store over the in-process client; its transactions call the
// server's key-value service directly, as the client does. Close it before the server.
func (e *Embedded) Store() *Etcd {
	st := newEtcd(e.client, adapter.KvServerToKvClient(v3rpc.NewQuotaKVServer(e.etcd.Server)), nil)
	server := e.etcd.Server
	st.local = func(ctx context.Context, r *etcdserverpb.RangeRequest) (*etcdserverpb.RangeResponse, error) {
		resp, _, err := txn.Range(ctx, server.Logger(), server.KV(), r, false)
		return resp, err
	}
	st.listed, st.afterList = &e.listed, e.pageOutListing
	return st
}

// Endpoints returns the client URLs the server listens on (https://127.0.0.1:<port>), for
// tools such as etcdctl or a second process; they present ClientTLS's files.
func (e *Embedded) Endpoints() []string { return append([]string(nil), e.endpoints...) }

// ClientTLS names the CA, client certificate and key a client of Endpoints presents (as
// --etcd-cafile, --etcd-certfile and --etcd-keyfile). They stay valid across restarts on
// the same dir.
func (e *Embedded) ClientTLS() TLSFiles { return e.pki.client }

// Err delivers a fatal error of the running server; it is closed when the server stops.
func (e *Embedded) Err() <-chan error { return e.etcd.Err() }

// Stopped is closed when the server has stopped: by Close, or by itself (a cluster member
// removed from its cluster stops at once, and Err may say nothing).
func (e *Embedded) Stopped() <-chan struct{} { return e.etcd.Server.StopNotify() }

// Close stops the defragmentation loop, closes the client and stops the server, releasing
// the data dir. Stores built on Client must be closed first. Safe to call more than once.
func (e *Embedded) Close() error {
	e.closeOnce.Do(func() {
		e.stopDefrag()
		<-e.defragDone
		<-e.promoteDone
		// The in-process client's Close reports its own cancellation: not an error.
		_ = e.client.Close()
		e.stopping.Store(true)
		closeEtcd(e.etcd)
		e.lock.Close()
		e.logger.Info("embedded etcd stopped")
	})
	return nil
}

// defragLoop applies the defragmentation policy every interval until ctx ends.
func (e *Embedded) defragLoop(ctx context.Context, interval time.Duration) {
	defer close(e.defragDone)
	if interval <= 0 {
		return
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			if _, err := e.maybeDefrag(ctx); err != nil && ctx.Err() == nil {
				e.logger.Warn("embedded etcd defragmentation failed", "err", err)
			}
		}
	}
}

// maybeDefrag defragments the backend when the policy says so and reports whether it did.
//  1. Read the backend's file size and size in use.
//  2. Stop unless the free space reaches both thresholds.
//  3. Defragment, then disarm a NOSPACE alarm if the file is now well under the quota
//     (etcd refuses writes while that alarm is raised, and never lowers it by itself).
func (e *Embedded) maybeDefrag(ctx context.Context) (bool, error) {
	ep := e.endpoints[0] // ignored by the in-process client
	st, err := e.client.Status(ctx, ep)
	if err != nil {
		return false, fmt.Errorf("status: %w", err)
	}
	if !e.defrag.due(st.DbSize, st.DbSizeInUse) {
		return false, nil
	}
	// Directly on the server: the in-process client's Defragment dereferences a health
	// notifier that v3client leaves nil (etcd v3.7.3).
	if err := e.etcd.Server.Defragment(); err != nil {
		return false, fmt.Errorf("defragment: %w", err)
	}
	after, err := e.client.Status(ctx, ep)
	if err != nil {
		return true, fmt.Errorf("status after defragment: %w", err)
	}
	e.logger.Info("embedded etcd defragmented", "sizeBefore", st.DbSize, "sizeAfter", after.DbSize, "inUse", after.DbSizeInUse)
	if after.DbSize < e.quota*9/10 {
		if err := e.disarmNoSpace(ctx); err != nil {
			return true, err
		}
	}
	return true, nil
}

// defragPolicy says when defragmenting is worth its pause (see DefragMinFreeBytes).
type defragPolicy struct {
	minFree     int64
	minFraction float64
}

// due reports whether a backend file of size bytes, of which inUse are in use, should be
// defragmented.
func (p defragPolicy) due(size, inUse int64) bool {
	free := size - inUse
	return free >= p.minFree && float64(free) >= p.minFraction*float64(size)
}

// disarmNoSpace lowers any NOSPACE alarm.
func (e *Embedded) disarmNoSpace(ctx context.Context) error {
	alarms, err := e.client.AlarmList(ctx)
	if err != nil {
		return fmt.Errorf("alarm list: %w", err)
	}
	for _, a := range alarms.Alarms {
		if a.Alarm != etcdserverpb.AlarmType_NOSPACE {
			continue
		}
		if _, err := e.client.AlarmDisarm(ctx, (*clientv3.AlarmMember)(a)); err != nil {
			return fmt.Errorf("alarm disarm: %w", err)
		}
		e.logger.Warn("embedded etcd NOSPACE alarm disarmed after defragmentation")
	}
	return nil
}

// ExternalTLS builds the client TLS configuration for an external etcd from PEM files
// (kube-apiserver's --etcd-cafile, --etcd-certfile, --etcd-keyfile); empty names are
// omitted.
func ExternalTLS(caFile, certFile, keyFile string) (*tls.Config, error) {
	info := transport.TLSInfo{TrustedCAFile: caFile, CertFile: certFile, KeyFile: keyFile}
	cfg, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("etcd client TLS: %w", err)
	}
	return cfg, nil
}

// ConnectExternal connects to an external etcd cluster (--etcd-servers: URLs such as
// https://10.0.0.1:2379) and checks that it answers before ctx ends. tlsConfig may be nil
// for plain http endpoints; logger may be nil. The caller owns the returned client: it
// closes it after the stores built on it.
func ConnectExternal(ctx context.Context, endpoints []string, tlsConfig *tls.Config, logger *slog.Logger) (*clientv3.Client, error) {
	if len(endpoints) == 0 {
		return nil, errors.New("etcd: no endpoints")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	client, err := clientv3.New(clientv3.Config{
		Endpoints:            endpoints,
		TLS:                  tlsConfig,
		DialTimeout:          20 * time.Second,
		DialKeepAliveTime:    30 * time.Second,
		DialKeepAliveTimeout: 10 * time.Second,
		Logger:               newZapLogger(logger, slog.LevelError, nil),
	})
	if err != nil {
		return nil, fmt.Errorf("etcd %v: %w", endpoints, err)
	}
	if _, err := client.Get(ctx, revisionProbeKey, clientv3.WithCountOnly()); err != nil {
		client.Close()
		return nil, fmt.Errorf("etcd %v: %w", endpoints, mapError(err))
	}
	return client, nil
}
