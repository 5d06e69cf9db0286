package server

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestClusterAdvertiseAddress(t *testing.T) {
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
