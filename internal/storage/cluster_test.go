package storage_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/fileutil"

	"github.com/quotad/quotad/internal/storage"
	"github.com/quotad/quotad/internal/storage/storagetest"
)

// clusterConfig is a member on loopback at free ports.
func clusterConfig(t *testing.T, name string) storage.ClusterConfig {
	p := storagetest.FreePorts(t, 2)
	return storage.ClusterConfig{Name: name, AdvertiseHost: "127.0.0.1", PeerPort: p[0], ClientPort: p[1]}
}

// join adds a member named name to the cluster of first as a learner and starts it; it
// returns once the member is promoted.
func join(t *testing.T, first *storage.Embedded, firstDir, name string) (*storage.Embedded, string) {
	t.Helper()
	dir := t.TempDir()
	caCert, caKey, err := storage.ReadClusterCA(firstDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := storage.WriteClusterCA(dir, caCert, caKey); err != nil {
		t.Fatal(err)
	}
	cc := clusterConfig(t, name)
	members, err := first.AddLearner(t.Context(), name, []string{cc.PeerURL()})
	if err != nil {
		t.Fatal(err)
	}
	cc.Join = members
	return startEmbedded(t, dir, storage.WithCluster(cc), storage.WithUnsafeNoFsync()), dir
}

// memberSummary is "name:learner/voter" of each member, sorted by name, and the leader count.
func memberSummary(t *testing.T, e *storage.Embedded) (string, int) {
	t.Helper()
	members, err := e.Members(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	leaders := 0
	for _, m := range members {
		role := "voter"
		if m.Learner {
			role = "learner"
		}
		parts = append(parts, m.Name+":"+role)
		if m.Leader {
			leaders++
		}
	}
	return strings.Join(parts, ","), leaders
}

// TestClusterStart: a cluster's first member listens for peers on https at its advertise
// address (refusing a client without a certificate of its CA), records endpoints
// ConnectLocal reaches, and keeps its etcd CA key, like every file, private.
func TestClusterStart(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	cc := clusterConfig(t, "a")
	e := startEmbedded(t, dir, storage.WithCluster(cc), storage.WithUnsafeNoFsync())
	members, err := e.Members(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(members) != 1 || members[0].Name != "a" || !members[0].Leader || members[0].Learner ||
		strings.Join(members[0].PeerURLs, ",") != cc.PeerURL() || strings.Join(members[0].ClientURLs, ",") != cc.ClientURL() {
		t.Fatalf("members = %+v", members)
	}
	c, err := storage.ConnectLocal(t.Context(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	listed, err := storage.ListMembers(t.Context(), c)
	if err != nil || len(listed) != 1 || !listed[0].Leader {
		t.Fatalf("members through ConnectLocal = %+v, %v", listed, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "etcd-pki", "ca.key")); err != nil {
		t.Fatalf("etcd CA key: %v", err)
	}
	checkPrivate(t, dir)
	// The peer listener is https and refuses a client without a certificate of the CA.
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := hc.Get(cc.PeerURL() + "/members")
	if err == nil {
		resp.Body.Close()
		t.Fatalf("peer listener answered a client without a certificate: %s", resp.Status)
	}
	pd := filepath.Join(dir, "etcd-pki")
	peerTLS, err := storage.ExternalTLS(filepath.Join(pd, "ca.crt"), filepath.Join(pd, "peer.crt"), filepath.Join(pd, "peer.key"))
	if err != nil {
		t.Fatal(err)
	}
	hc = &http.Client{Transport: &http.Transport{TLSClientConfig: peerTLS}}
	resp, err = hc.Get(cc.PeerURL() + "/members")
	if err != nil {
		t.Fatalf("peer listener with a peer certificate: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("peer listener with a peer certificate: %s", resp.Status)
	}
}

// TestClusterLearnerPromoted: a member added as a learner starts from the cluster's
// membership, is promoted once it has caught up, and serves the cluster's data; a write
// through either member is read through the other.
func TestClusterLearnerPromoted(t *testing.T) {
	t.Parallel()
	aDir := t.TempDir()
	a := startEmbedded(t, aDir, storage.WithCluster(clusterConfig(t, "a")), storage.WithUnsafeNoFsync())
	ctx := t.Context()
	if _, err := a.Client().Put(ctx, "/registry/before", "1"); err != nil {
		t.Fatal(err)
	}
	b, _ := join(t, a, aDir, "b")
	if got, leaders := memberSummary(t, a); got != "a:voter,b:voter" || leaders != 1 {
		t.Fatalf("members after the join = %s with %d leaders", got, leaders)
	}
	got, err := b.Client().Get(ctx, "/registry/before")
	if err != nil || len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "1" {
		t.Fatalf("read through the joiner: %v, %v", got, err)
	}
	if _, err := b.Client().Put(ctx, "/registry/after", "2"); err != nil {
		t.Fatal(err)
	}
	got, err = a.Client().Get(ctx, "/registry/after")
	if err != nil || len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "2" {
		t.Fatalf("read through the first member: %v, %v", got, err)
	}
	// Adding the same member again is refused; nothing changes.
	if _, err := a.AddLearner(ctx, "b", []string{"https://127.0.0.1:1"}); !errors.Is(err, storage.ErrMemberExists) {
		t.Fatalf("adding a second b: %v, want ErrMemberExists", err)
	}
}

// TestClusterMemberRemove: removing a member of three leaves two that still write, and a
// name no member has gives ErrMemberNotFound.
func TestClusterMemberRemove(t *testing.T) {
	t.Parallel()
	aDir := t.TempDir()
	a := startEmbedded(t, aDir, storage.WithCluster(clusterConfig(t, "a")), storage.WithUnsafeNoFsync())
	join(t, a, aDir, "b")
	c, _ := join(t, a, aDir, "c")
	ctx := t.Context()
	if got, leaders := memberSummary(t, a); got != "a:voter,b:voter,c:voter" || leaders != 1 {
		t.Fatalf("members = %s with %d leaders", got, leaders)
	}
	c.Close()
	if _, err := a.RemoveMember(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if got, _ := memberSummary(t, a); got != "a:voter,b:voter" {
		t.Fatalf("members after removing c = %s", got)
	}
	if _, err := a.Client().Put(ctx, "/registry/k", "v"); err != nil {
		t.Fatalf("write after the removal: %v", err)
	}
	if _, err := a.RemoveMember(ctx, "nobody"); !errors.Is(err, storage.ErrMemberNotFound) {
		t.Fatalf("removing nobody: %v, want ErrMemberNotFound", err)
	}
}

// TestClusterInitKeepsSingleMemberData: a single member's data dir started as a cluster's
// first member keeps its keys; its peer URL becomes the https one.
func TestClusterInitKeepsSingleMemberData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	single, err := storage.StartEmbedded(ctx, dir, nil, storage.WithUnsafeNoFsync(), storage.WithFastElection())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := single.Client().Put(ctx, "/registry/kept", "v"); err != nil {
		t.Fatal(err)
	}
	single.Close()
	cc := clusterConfig(t, "a")
	e := startEmbedded(t, dir, storage.WithCluster(cc), storage.WithUnsafeNoFsync())
	got, err := e.Client().Get(ctx, "/registry/kept")
	if err != nil || len(got.Kvs) != 1 {
		t.Fatalf("key after the conversion: %v, %v", got, err)
	}
	members, err := e.Members(ctx)
	if err != nil || len(members) != 1 || strings.Join(members[0].PeerURLs, ",") != cc.PeerURL() {
		t.Fatalf("members = %+v, %v", members, err)
	}
}

// TestClusterRemovedMemberStops: a running member removed from its cluster stops, and says
// so on Stopped.
func TestClusterRemovedMemberStops(t *testing.T) {
	t.Parallel()
	aDir := t.TempDir()
	a := startEmbedded(t, aDir, storage.WithCluster(clusterConfig(t, "a")), storage.WithUnsafeNoFsync())
	b, _ := join(t, a, aDir, "b")
	if _, err := a.RemoveMember(t.Context(), "b"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.Stopped():
	case <-time.After(waitTimeout):
		t.Fatal("the removed member did not stop")
	}
	if got, _ := memberSummary(t, a); got != "a:voter" {
		t.Fatalf("members = %s", got)
	}
}

// syncBuffer is a log sink tests read while the code under test writes to it.
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

// TestClusterRestartAloneWaitsAndStops: a member of two restarted while the other is down
// cannot serve (no quorum). Until it can, it logs what it waits for, naming the other member
// and its peer URL; cancelled, it returns at once and releases its data dir.
func TestClusterRestartAloneWaitsAndStops(t *testing.T) {
	t.Parallel()
	aDir := t.TempDir()
	aConf := clusterConfig(t, "a")
	a, err := storage.StartEmbedded(t.Context(), aDir, nil, storage.WithCluster(aConf), storage.WithUnsafeNoFsync())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// b joins a, as join does, with its own ports.
	bDir := t.TempDir()
	caCert, caKey, err := storage.ReadClusterCA(aDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := storage.WriteClusterCA(bDir, caCert, caKey); err != nil {
		t.Fatal(err)
	}
	bConf := clusterConfig(t, "b")
	members, err := a.AddLearner(t.Context(), "b", []string{bConf.PeerURL()})
	if err != nil {
		t.Fatal(err)
	}
	joined := bConf
	joined.Join = members
	b, err := storage.StartEmbedded(t.Context(), bDir, nil, storage.WithCluster(joined), storage.WithUnsafeNoFsync())
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	a.Close()

	// b alone: it waits, and says so.
	var logs syncBuffer
	bConf.WaitLogInterval = 50 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		e   *storage.Embedded
		err error
	}
	done := make(chan result, 1)
	go func() {
		e, err := storage.StartEmbedded(ctx, bDir, slog.New(slog.NewTextHandler(&logs, nil)), storage.WithCluster(bConf), storage.WithUnsafeNoFsync())
		done <- result{e, err}
	}()
	want := []string{"waiting for a quorum", "member=b", "peerURL=" + bConf.PeerURL(), "a=" + aConf.PeerURL() + " (unreachable", "voters=2", "quorum=2"}
	deadline := time.After(waitTimeout)
	for !containsAll(logs.String(), want) {
		select {
		case r := <-done:
			if r.e != nil {
				r.e.Close()
			}
			t.Fatalf("b started alone: %v; logs:\n%s", r.err, logs.String())
		case <-deadline:
			t.Fatalf("no waiting line with %q within %v; logs:\n%s", want, waitTimeout, logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	select {
	case r := <-done:
		if !errors.Is(r.err, context.Canceled) {
			t.Fatalf("cancelled start: %v, want context.Canceled", r.err)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("StartEmbedded did not return within %v of its context's end", waitTimeout)
	}
	lock, err := fileutil.TryLockFile(filepath.Join(bDir, "etcd.lock"), os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatalf("b's data dir is still locked: %v", err)
	}
	lock.Close()
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
