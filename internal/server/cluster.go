package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/quotad/quotad/internal/storage"
)

// Default ports of a clustered embedded etcd (etcd's own).
const (
	DefaultEtcdClientPort = 2379
	DefaultEtcdPeerPort   = 2380
)

// memberNameFile records, under the data dir, this quotad's etcd member name.
const memberNameFile = "etcd-name"

// keptMemberFile records, under the data dir (0600 JSON), the advertise address and ports
// this quotad's etcd member initialized or joined its cluster with: a restart uses them
// where the flags do not say, and refuses flags that would change them.
const keptMemberFile = "etcd-member.json"

// keptMember is keptMemberFile's content.
type keptMember struct {
	AdvertiseAddress string `json:"advertiseAddress"`
	PeerPort         int    `json:"peerPort"`
	ClientPort       int    `json:"clientPort"`
}

// readKeptMember reads the data dir's keptMemberFile; found is false when there is none.
func readKeptMember(dir string) (k keptMember, found bool, err error) {
	p := filepath.Join(dir, keptMemberFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return k, false, nil
	}
	if err != nil {
		return k, false, err
	}
	if err := json.Unmarshal(b, &k); err != nil {
		return k, false, fmt.Errorf("%s: %w", p, err)
	}
	if net.ParseIP(k.AdvertiseAddress) == nil || k.PeerPort <= 0 || k.ClientPort <= 0 {
		return k, false, fmt.Errorf("%s: want an advertiseAddress IP, a peerPort and a clientPort, got %s", p, bytes.TrimSpace(b))
	}
	return k, true, nil
}

// keepMember writes m's advertise address and ports to the data dir's keptMemberFile,
// unless it holds them already.
func keepMember(dir string, m storage.ClusterConfig) error {
	k := keptMember{AdvertiseAddress: m.AdvertiseHost, PeerPort: m.PeerPort, ClientPort: m.ClientPort}
	if old, found, err := readKeptMember(dir); err == nil && found && old == k {
		return nil
	}
	b, _ := json.MarshalIndent(k, "", "  ")
	return writeFileAtomic(filepath.Join(dir, keptMemberFile), append(b, '\n'), 0o600)
}

// conflicts reports the flags of cfg that would change the kept member of data dir dir,
// named name.
func (k keptMember) conflicts(cfg Config, name string) error {
	var changed, flags []string
	if cfg.AdvertiseAddress != "" && net.ParseIP(cfg.AdvertiseAddress).String() != k.AdvertiseAddress {
		changed = append(changed, fmt.Sprintf("--advertise-address %s (kept: %s)", cfg.AdvertiseAddress, k.AdvertiseAddress))
		flags = append(flags, "--advertise-address")
	}
	if cfg.EtcdPeerPort != 0 && cfg.EtcdPeerPort != k.PeerPort {
		changed = append(changed, fmt.Sprintf("--etcd-peer-port %d (kept: %d)", cfg.EtcdPeerPort, k.PeerPort))
		flags = append(flags, "--etcd-peer-port")
	}
	if cfg.EtcdClientPort != 0 && cfg.EtcdClientPort != k.ClientPort {
		changed = append(changed, fmt.Sprintf("--etcd-client-port %d (kept: %d)", cfg.EtcdClientPort, k.ClientPort))
		flags = append(flags, "--etcd-client-port")
	}
	if len(changed) == 0 {
		return nil
	}
	return fmt.Errorf("%s would change etcd member %s of data dir %s, which is in its cluster with peer URL https://%s and client URL https://%s (kept in %s): "+
		"a member's URLs are part of the cluster's membership and are not changed by a restart. Start it without %s, "+
		"or retire the member (quotad etcd remove %s, on another member) and join the cluster anew from an empty data dir",
		strings.Join(changed, ", "), name, cfg.DataDir,
		net.JoinHostPort(k.AdvertiseAddress, strconv.Itoa(k.PeerPort)), net.JoinHostPort(k.AdvertiseAddress, strconv.Itoa(k.ClientPort)),
		filepath.Join(cfg.DataDir, keptMemberFile), strings.Join(flags, " and "), name)
}

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
	hasData := storage.HasEmbeddedData(cfg.DataDir)
	kept, found, err := readKeptMember(cfg.DataDir)
	if err != nil {
		return m, err
	}
	if hasData && found {
		// A restart: the member is in its cluster at the kept URLs.
		if err := kept.conflicts(cfg, name); err != nil {
			return m, err
		}
		m.AdvertiseHost, m.PeerPort, m.ClientPort = kept.AdvertiseAddress, kept.PeerPort, kept.ClientPort
	}
	if hasData && cfg.Join != "" && !hasJoinToken(cfg.DataDir) {
		return m, fmt.Errorf("--join: data dir %s holds an etcd of its own (join with a data dir without etcd data, or run it with --cluster-init to make it a cluster's first member)", cfg.DataDir)
	}
	if err := checkMemberPorts(cfg, m, hasData && found); err != nil {
		return m, err
	}
	if hasData {
		// A data dir of before keptMemberFile is kept once its member runs (Run).
		return m, nil
	}
	if cfg.Join == "" {
		if !cfg.ClusterInit {
			// A joiner's files without its etcd data: it stopped before its member started.
			return m, fmt.Errorf("data dir %s was joining a cluster but has no etcd data: start it with --join and --join-token again", cfg.DataDir)
		}
	} else {
		members, err := joinCluster(ctx, cfg, m, log)
		if err != nil {
			return m, err
		}
		m.Join = members
	}
	// Kept before the member starts: a joiner is in the cluster at these URLs from now on,
	// even if it stops before it has caught up.
	if err := keepMember(cfg.DataDir, m); err != nil {
		return m, fmt.Errorf("keeping the member's ports: %w", err)
	}
	return m, nil
}

// checkMemberPorts reports, naming the flags that choose them, a port of member m that
// another process listens on: quotads on one machine each need their own. kept says
// that the ports are the member's kept ones.
func checkMemberPorts(cfg Config, m storage.ClusterConfig, kept bool) error {
	type listener struct {
		what, flag string
		host       string
		port       int
		given      bool
	}
	ls := []listener{
		{"peer", "--etcd-peer-port", m.AdvertiseHost, m.PeerPort, cfg.EtcdPeerPort != 0},
		{"client", "--etcd-client-port", m.AdvertiseHost, m.ClientPort, cfg.EtcdClientPort != 0},
	}
	if ip := net.ParseIP(m.AdvertiseHost); !ip.IsLoopback() {
		ls = append(ls, listener{"client", "--etcd-client-port", "127.0.0.1", m.ClientPort, cfg.EtcdClientPort != 0})
	}
	for _, l := range ls {
		addr := net.JoinHostPort(l.host, strconv.Itoa(l.port))
		err := probeListen(addr)
		switch {
		case err == nil:
		case errors.Is(err, syscall.EADDRINUSE) && kept:
			return fmt.Errorf("the embedded etcd's %s address %s, which etcd member %s is in its cluster with (kept in %s), is in use by another process: stop it (a member's URLs do not change on a restart)",
				l.what, addr, m.Name, filepath.Join(cfg.DataDir, keptMemberFile))
		case errors.Is(err, syscall.EADDRINUSE):
			how := fmt.Sprintf("%s %d", l.flag, l.port)
			if !l.given {
				how = fmt.Sprintf("%s not given: the default, %d", l.flag, l.port)
			}
			return fmt.Errorf("the embedded etcd's %s address %s (%s) is in use, by another quotad on this machine? "+
				"Give each quotad on one machine its own --etcd-client-port and --etcd-peer-port (and --secure-port, or --bind-address, and --data-dir)",
				l.what, addr, how)
		default:
			return fmt.Errorf("the embedded etcd's %s address %s (--advertise-address or --bind-address, %s): %w", l.what, addr, l.flag, err)
		}
	}
	return nil
}

// probeListen listens on the TCP address addr and closes the listener at once.
func probeListen(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return l.Close()
}

// securePortError explains an error listening on the secure port, naming the flags.
func securePortError(cfg Config, err error) error {
	addr := net.JoinHostPort(cfg.BindAddress, strconv.Itoa(cfg.SecurePort))
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("the secure port's address %s (--bind-address, --secure-port) is in use, by another quotad on this machine? "+
			"Give each quotad on one machine its own --secure-port, or --bind-address (and, with --cluster-init or --join, --etcd-client-port and --etcd-peer-port): %w", addr, err)
	}
	return fmt.Errorf("the secure port's address %s (--bind-address, --secure-port): %w", addr, err)
}
