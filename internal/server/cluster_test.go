package server

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quotad/quotad/internal/storage"
	"github.com/quotad/quotad/internal/storage/storagetest"
)

func TestClusterAdvertiseAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		bind, advertise, want string
	}{
		{"127.0.0.1", "", "127.0.0.1"},
		{"0.0.0.0", "", "127.0.0.1"},
		{"::", "", "127.0.0.1"},
		{"10.0.0.2", "", "10.0.0.2"},
		{"0.0.0.0", "10.0.0.3", "10.0.0.3"},
	}
	for _, tc := range tests {
		if got := clusterAdvertiseAddress(Config{BindAddress: tc.bind, AdvertiseAddress: tc.advertise}); got != tc.want {
			t.Errorf("bind %q advertise %q: %q, want %q", tc.bind, tc.advertise, got, tc.want)
		}
	}
}

func TestCheckClusterFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		want string // "" for no error
	}{
		{"none", Config{}, ""},
		{"init", Config{ClusterInit: true}, ""},
		{"join", Config{Join: "https://a:6443", JoinToken: "t"}, ""},
		{"join with file", Config{Join: "https://a:6443", JoinTokenFile: "f"}, ""},
		{"join without token", Config{Join: "https://a:6443"}, "--join needs --join-token"},
		{"init and join", Config{ClusterInit: true, Join: "https://a:6443", JoinToken: "t"}, "cannot be used together"},
		{"init with external etcd", Config{ClusterInit: true, EtcdServers: []string{"https://e:2379"}}, "--etcd-servers"},
		{"advertise not an IP", Config{AdvertiseAddress: "host.example"}, "not an IP address"},
	}
	for _, tc := range tests {
		err := checkClusterFlags(tc.cfg)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestJoinRefusesOwnEtcd: --join on a data dir holding an etcd of its own (not a cluster
// member's) is refused before anything is asked of the cluster.
func TestJoinRefusesOwnEtcd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wal := filepath.Join(dir, "etcd", "member", "wal")
	if err := os.MkdirAll(wal, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wal, "0000000000000000-0000000000000000.wal"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := Config{DataDir: dir, Join: "https://127.0.0.1:1", JoinToken: "t"}
	if _, err := clusterMember(t.Context(), cfg, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "holds an etcd of its own") {
		t.Fatalf("join on a data dir with its own etcd: %v", err)
	}
}

// TestKeptMemberConflicts: on a data dir with etcd data and a kept member, the kept
// address and ports are used where no flag says, the same values as flags are accepted,
// and other values are refused, naming the flag and the kept value.
func TestKeptMemberConflicts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wal := filepath.Join(dir, "etcd", "member", "wal")
	if err := os.MkdirAll(wal, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wal, "0000000000000000-0000000000000000.wal"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, joinTokenFile), []byte("t\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ports := storagetest.FreePorts(t, 2)
	if err := keepMember(dir, storage.ClusterConfig{AdvertiseHost: "127.0.0.1", PeerPort: ports[0], ClientPort: ports[1]}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, keptMemberFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v, %v", keptMemberFile, fi, err)
	}
	log := slog.New(slog.DiscardHandler)
	for _, cfg := range []Config{
		{DataDir: dir, BindAddress: "127.0.0.1"},
		{DataDir: dir, BindAddress: "127.0.0.1", AdvertiseAddress: "127.0.0.1", EtcdPeerPort: ports[0], EtcdClientPort: ports[1]},
	} {
		m, err := clusterMember(t.Context(), cfg, log)
		if err != nil || m.AdvertiseHost != "127.0.0.1" || m.PeerPort != ports[0] || m.ClientPort != ports[1] {
			t.Fatalf("%+v: member %+v, %v; want the kept ports %v", cfg, m, err, ports)
		}
	}
	refused := []struct {
		cfg  Config
		want string
	}{
		{Config{EtcdPeerPort: ports[0] + 1}, fmt.Sprintf("--etcd-peer-port %d (kept: %d)", ports[0]+1, ports[0])},
		{Config{EtcdClientPort: ports[1] + 1}, fmt.Sprintf("--etcd-client-port %d (kept: %d)", ports[1]+1, ports[1])},
		{Config{AdvertiseAddress: "10.0.0.9"}, "--advertise-address 10.0.0.9 (kept: 127.0.0.1)"},
	}
	for _, tc := range refused {
		tc.cfg.DataDir, tc.cfg.BindAddress = dir, "127.0.0.1"
		if _, err := clusterMember(t.Context(), tc.cfg, log); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "quotad etcd remove") {
			t.Errorf("%+v: %v, want an error with %q", tc.cfg, err, tc.want)
		}
	}
}

// TestCheckMemberPortsDefault: a default etcd port in use is named with its flag, as the
// default.
func TestCheckMemberPortsDefault(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	free := storagetest.FreePorts(t, 1)[0]
	m := storage.ClusterConfig{Name: "m", AdvertiseHost: "127.0.0.1", PeerPort: taken, ClientPort: free}
	err = checkMemberPorts(Config{DataDir: t.TempDir()}, m, false)
	want := fmt.Sprintf("--etcd-peer-port not given: the default, %d", taken)
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--etcd-client-port and --etcd-peer-port") {
		t.Fatalf("default peer port in use: %v, want %q", err, want)
	}
}
