package server_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/fileutil"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
	"github.com/quotad/quotad/internal/storage/storagetest"
)

// waitTimeout bounds every wait of these tests: a failure guard, not a timing assertion.
const waitTimeout = 60 * time.Second

// syncBuffer is a log sink read while a server writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// running is a server.Run in the background.
type running struct {
	ready  chan *server.Running
	done   chan error
	cancel context.CancelFunc
	logs   *syncBuffer
}

// runServer runs quotad on cfg (its logger writing to the returned buffer) until stopped.
func runServer(t *testing.T, cfg server.Config) *running {
	t.Helper()
	r := &running{ready: make(chan *server.Running, 1), done: make(chan error, 1), logs: &syncBuffer{}}
	cfg.BindAddress, cfg.EtcdUnsafeNoFsync, cfg.EtcdFastElection, cfg.ResourceQuotaSyncPeriod = "127.0.0.1", true, true, -1
	cfg.Logger = slog.New(slog.NewTextHandler(r.logs, nil))
	cfg.Ready = func(run *server.Running) { r.ready <- run }
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- server.Run(ctx, cfg) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// waitReady waits until the server is ready.
func (r *running) waitReady(t *testing.T) *server.Running {
	t.Helper()
	select {
	case run := <-r.ready:
		return run
	case err := <-r.done:
		r.done <- err
		t.Fatalf("quotad stopped before it was ready: %v; logs:\n%s", err, r.logs)
	case <-time.After(waitTimeout):
		t.Fatalf("quotad was not ready within %v; logs:\n%s", waitTimeout, r.logs)
	}
	return nil
}

// stop cancels the server and returns what Run returned.
func (r *running) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(waitTimeout):
		t.Fatalf("quotad did not return within %v of its context's end; logs:\n%s", waitTimeout, r.logs)
		return nil
	}
}

// readTrimmed is a data dir file's content without surrounding space.
func readTrimmed(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestClusterRestartWithoutFlags: two members (--cluster-init, --join) stopped, then one
// restarted alone without any port flag:
//   - it logs what it waits for: a quorum, naming the other member and its peer URL, and
//     its own kept peer and client URLs;
//   - cancelled while it waits, Run returns and the data dir is released;
//   - both restarted without port flags come back on the ports they started with (kept in
//     etcd-member.json, 0600), and only the first start of --cluster-init made the token.
func TestClusterRestartWithoutFlags(t *testing.T) {
	t.Parallel()
	ports := storagetest.FreePorts(t, 4)
	a := servertest.Start(t, func(c *server.Config) {
		c.ClusterInit, c.EtcdPeerPort, c.EtcdClientPort = true, ports[0], ports[1]
	})
	if !a.JoinTokenCreated {
		t.Fatal("the first --cluster-init start did not report making the join token")
	}
	b := servertest.Start(t, func(c *server.Config) {
		c.Join, c.JoinToken, c.EtcdPeerPort, c.EtcdClientPort = a.JoinURL, a.JoinToken, ports[2], ports[3]
	})
	if b.JoinTokenCreated {
		t.Fatal("a joiner reported making the join token")
	}
	for _, dir := range []string{a.DataDir, b.DataDir} {
		if fi, err := os.Stat(filepath.Join(dir, "etcd-member.json")); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("etcd-member.json: %v, %v", fi, err)
		}
	}
	aName, bName := readTrimmed(t, a.DataDir, "etcd-name"), readTrimmed(t, b.DataDir, "etcd-name")
	peerURL := func(p int) string { return "https://127.0.0.1:" + strconv.Itoa(p) }
	b.Stop()
	a.Stop()

	// 1. b alone, without flags, waits and says for what.
	alone := runServer(t, server.Config{DataDir: b.DataDir})
	want := []string{"waiting for a quorum", "member=" + bName, "peerURL=" + peerURL(ports[2]), "clientURL=" + peerURL(ports[3]),
		aName + "=" + peerURL(ports[0]) + " (unreachable"}
	deadline := time.After(waitTimeout)
	for !containsAll(alone.logs.String(), want) {
		select {
		case err := <-alone.done:
			t.Fatalf("b alone stopped: %v; logs:\n%s", err, alone.logs)
		case <-alone.ready:
			t.Fatalf("b alone became ready; logs:\n%s", alone.logs)
		case <-deadline:
			t.Fatalf("no waiting line with %q within %v; logs:\n%s", want, waitTimeout, alone.logs)
		case <-time.After(50 * time.Millisecond):
		}
	}
	// 2. Cancelled, it returns, and releases the data dir.
	if err := alone.stop(t); !errors.Is(err, context.Canceled) {
		t.Fatalf("b alone, cancelled: %v, want context.Canceled", err)
	}
	for _, f := range []string{"quotad.lock", "etcd.lock"} {
		l, err := fileutil.TryLockFile(filepath.Join(b.DataDir, f), os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatalf("%s still locked: %v", f, err)
		}
		l.Close()
	}

	// 3. Both without flags: the kept ports, the same membership, the token not made again.
	ra, rb := runServer(t, server.Config{DataDir: a.DataDir}), runServer(t, server.Config{DataDir: b.DataDir})
	runA, runB := ra.waitReady(t), rb.waitReady(t)
	if runA.JoinTokenCreated || runA.JoinToken != a.JoinToken || runB.JoinToken != a.JoinToken {
		t.Fatalf("join token after the restart: created %v, %q and %q, want %q", runA.JoinTokenCreated, runA.JoinToken, runB.JoinToken, a.JoinToken)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	c, err := storage.ConnectLocal(ctx, a.DataDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	members, err := storage.ListMembers(ctx, c)
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range members {
		got[m.Name] = strings.Join(m.PeerURLs, ",") + " " + strings.Join(m.ClientURLs, ",")
	}
	wantMembers := map[string]string{
		aName: peerURL(ports[0]) + " " + peerURL(ports[1]),
		bName: peerURL(ports[2]) + " " + peerURL(ports[3]),
	}
	if len(got) != 2 || got[aName] != wantMembers[aName] || got[bName] != wantMembers[bName] {
		t.Fatalf("members after the restart without flags = %v, want %v", got, wantMembers)
	}
	for _, r := range []*running{rb, ra} {
		if err := r.stop(t); err != nil {
			t.Fatalf("stop: %v", err)
		}
	}

	// 4. A port flag that differs from the kept one is refused, naming both.
	err = server.Run(context.Background(), server.Config{DataDir: b.DataDir, BindAddress: "127.0.0.1", EtcdPeerPort: ports[0], Logger: slog.New(slog.DiscardHandler)})
	if err == nil || !strings.Contains(err.Error(), "--etcd-peer-port "+strconv.Itoa(ports[0])+" (kept: "+strconv.Itoa(ports[2])+")") {
		t.Fatalf("restart with another --etcd-peer-port: %v", err)
	}
}

// TestClusterSecondReplicaPortsInUse: a second quotad on one machine whose etcd or secure
// ports are the first one's (as with the defaults) is refused before it joins, naming the
// flags to set; the membership is unchanged.
func TestClusterSecondReplicaPortsInUse(t *testing.T) {
	t.Parallel()
	ports := storagetest.FreePorts(t, 2)
	a := servertest.Start(t, func(c *server.Config) {
		c.ClusterInit, c.EtcdPeerPort, c.EtcdClientPort = true, ports[0], ports[1]
	})
	securePort, err := strconv.Atoi(a.URL[strings.LastIndex(a.URL, ":")+1:])
	if err != nil {
		t.Fatal(err)
	}
	free := storagetest.FreePorts(t, 2)
	cases := []struct {
		name                 string
		secure, peer, client int
		want                 []string
	}{
		{"secure port", securePort, free[0], free[1], []string{"127.0.0.1:" + strconv.Itoa(securePort), "in use", "--secure-port", "--bind-address"}},
		{"etcd ports", 0, ports[0], ports[1], []string{"127.0.0.1:" + strconv.Itoa(ports[0]), "in use", "--etcd-peer-port", "--etcd-client-port"}},
	}
	for _, tc := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		err := server.Run(ctx, server.Config{
			DataDir: t.TempDir(), BindAddress: "127.0.0.1", SecurePort: tc.secure, EtcdUnsafeNoFsync: true,
			Join: a.JoinURL, JoinToken: a.JoinToken, EtcdPeerPort: tc.peer, EtcdClientPort: tc.client,
			Logger: slog.New(slog.DiscardHandler),
		})
		cancel()
		if err == nil || !containsAll(err.Error(), tc.want) {
			t.Fatalf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	c, err := storage.ConnectLocal(ctx, a.DataDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if members, err := storage.ListMembers(ctx, c); err != nil || len(members) != 1 {
		t.Fatalf("members after the refused replicas: %+v, %v", members, err)
	}
}

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
