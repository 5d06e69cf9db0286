package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/quotad/quotad/internal/storage"
)

// Default ports of a clustered embedded etcd (etcd's own).
const (
	DefaultEtcdClientPort = 2379
	DefaultEtcdPeerPort   = 2380
)

// memberNameFile records, under the data dir, this quotad's etcd member name.
const memberNameFile = "etcd-name"

// clustered reports whether the embedded etcd runs as a cluster member: with --cluster-init
// or --join, or on a data dir that was a cluster member's before (it has a join token).
func clustered(cfg Config) bool {
	return len(cfg.EtcdServers) == 0 && (cfg.ClusterInit || cfg.Join != "" || hasJoinToken(cfg.DataDir))
}

// checkClusterFlags reports flags that do not go together.
func checkClusterFlags(cfg Config) error {
	switch {
	case (cfg.ClusterInit || cfg.Join != "") && len(cfg.EtcdServers) > 0:
		return errors.New("--cluster-init and --join are for the embedded etcd; they cannot be used with --etcd-servers")
	case cfg.ClusterInit && cfg.Join != "":
		return errors.New("--cluster-init and --join cannot be used together: --cluster-init starts a cluster, --join joins one")
	case cfg.Join != "" && cfg.JoinToken == "" && cfg.JoinTokenFile == "":
		return errors.New("--join needs --join-token or --join-token-file")
	case cfg.AdvertiseAddress != "" && net.ParseIP(cfg.AdvertiseAddress) == nil:
		return fmt.Errorf("--advertise-address %q is not an IP address", cfg.AdvertiseAddress)
	}
	return nil
}

// clusterAdvertiseAddress is where peers and clients reach this quotad's etcd member:
// --advertise-address, else the bind address, else (a wildcard or loopback bind) 127.0.0.1.
func clusterAdvertiseAddress(cfg Config) string {
	if cfg.AdvertiseAddress != "" {
		return cfg.AdvertiseAddress
	}
	if ip := net.ParseIP(cfg.BindAddress); ip != nil && !ip.IsUnspecified() && !ip.IsLoopback() {
		return ip.String()
	}
	return "127.0.0.1"
}

// memberName returns the data dir's etcd member name, making one (the host name and a
// random suffix, so that members on one host differ) on first use.
func memberName(dir string) (string, error) {
	p := filepath.Join(dir, memberNameFile)
	if b, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b)), nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "quotad"
	}
	host, _, _ = strings.Cut(strings.ToLower(host), ".")
	suffix := make([]byte, 4)
	if _, err := rand.Read(suffix); err != nil {
		return "", err
	}
	name := host + "-" + hex.EncodeToString(suffix)
	return name, writeFileAtomic(p, []byte(name+"\n"), 0o600)
}

// clusterMember returns this quotad's etcd cluster member configuration. With --join on a
// data dir without etcd data it first joins the cluster (join.go): the member then starts
// as the learner the cluster added. Otherwise the member starts from its data dir (a
// cluster's first member, or a restart).
func clusterMember(ctx context.Context, cfg Config, log *slog.Logger) (storage.ClusterConfig, error) {
	name, err := memberName(cfg.DataDir)
	if err != nil {
		return storage.ClusterConfig{}, fmt.Errorf("etcd member name: %w", err)
	}
	m := storage.ClusterConfig{
		Name: name, AdvertiseHost: clusterAdvertiseAddress(cfg),
		PeerPort: cfg.EtcdPeerPort, ClientPort: cfg.EtcdClientPort,
	}
	if m.PeerPort == 0 {
		m.PeerPort = DefaultEtcdPeerPort
	}
	if m.ClientPort == 0 {
		m.ClientPort = DefaultEtcdClientPort
	}
	if storage.HasEmbeddedData(cfg.DataDir) {
		if cfg.Join != "" && !hasJoinToken(cfg.DataDir) {
			return m, fmt.Errorf("--join: data dir %s holds an etcd of its own (join with a data dir without etcd data, or run it with --cluster-init to make it a cluster's first member)", cfg.DataDir)
		}
		return m, nil
	}
	if cfg.Join == "" {
		if !cfg.ClusterInit {
			// A joiner's files without its etcd data: it stopped before its member started.
			return m, fmt.Errorf("data dir %s was joining a cluster but has no etcd data: start it with --join and --join-token again", cfg.DataDir)
		}
		return m, nil
	}
	members, err := joinCluster(ctx, cfg, m, log)
	if err != nil {
		return m, err
	}
	m.Join = members
	return m, nil
}
