package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
)

// pageCounter counts the pages of initial events (reads of 500 keys) under one prefix.
type pageCounter struct {
	storage.Store
	prefix string
	pages  atomic.Int64
}

func (p *pageCounter) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if prefix == p.prefix && opts.Limit == 500 && !opts.KeysOnly {
		p.pages.Add(1)
	}
	return p.Store.List(ctx, prefix, opts)
}

// TestFairWatcherThatNeverReads: a watch whose client reads nothing holds about one
// storage page of its initial events: the server reads the next page only when the
// client has taken the previous ones (apart from what the sockets hold), waits for it
// (quotad_apiserver_watches_waiting_for_client), and, once the client reads, sends every
// object.
func TestFairWatcherThatNeverReads(t *testing.T) {
	t.Parallel()
	const (
		ns      = "fair"
		objects = 6000 // 12 pages of 500, about 4 MiB encoded each
		size    = 8 << 10
	)
	pc := &pageCounter{prefix: "/registry/configmaps/" + ns + "/"}
	s := servertest.Start(t, func(c *server.Config) {
		c.WrapStorage = func(st storage.Store) storage.Store { pc.Store = st; return pc }
	})
	ctx := edgeCtx(t)
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// 1. The objects, written straight to storage 100 at a time.
	data := strings.Repeat("x", size)
	for i := 0; i < objects; i += 100 {
		var txn storage.Txn
		for j := i; j < i+100; j++ {
			name := fmt.Sprintf("cm-%05d", j)
			v := fmt.Sprintf(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":%q,"namespace":%q,"uid":"uid-%d","creationTimestamp":"2026-01-01T00:00:00Z"},"data":{"k":%q}}`, name, ns, j, data)
			txn.Ops = append(txn.Ops, storage.Op{Type: storage.OpPut, Key: pc.prefix + name, Value: []byte(v)})
		}
		if _, err := pc.Store.Txn(ctx, txn); err != nil {
			t.Fatal(err)
		}
	}
	// 2. A watch of them all whose client reads nothing.
	conn := edgeConn(t, ctx, s, false)
	sendHead(t, conn, s, http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps?watch=1", nil, "")
	// 3. The server waits for the client after a bounded number of pages: the one being
	// sent and what the sockets and the watch (256 KiB queued, as much being written, 64
	// decoded objects) hold.
	held := socketBytes(t) + 512<<10 + 64*size
	page := 500 * size
	maxPages := int64(1 + (held+page-1)/page)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !watchWaiting(t, ctx, s) {
		if n := pc.pages.Load(); n > maxPages {
			t.Fatalf("%d pages of initial events read while the client reads nothing, want at most %d", n, maxPages)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatal("the watch never waited for its client")
		}
	}
	if n := pc.pages.Load(); n > maxPages {
		t.Fatalf("%d pages of initial events read while the client reads nothing, want at most %d", n, maxPages)
	}
	t.Logf("waiting at %d pages", pc.pages.Load())
	// 4. The client reads: every object comes, each once.
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	seen := map[string]bool{}
	for len(seen) < objects {
		var ev struct {
			Type   string
			Object struct {
				Metadata struct{ Name string }
			}
		}
		if err := dec.Decode(&ev); err != nil {
			t.Fatalf("after %d events: %v", len(seen), err)
		}
		if ev.Type != "ADDED" || seen[ev.Object.Metadata.Name] {
			t.Fatalf("event %s %s", ev.Type, ev.Object.Metadata.Name)
		}
		seen[ev.Object.Metadata.Name] = true
	}
	t.Logf("pages read: %d", pc.pages.Load())
	conn.Close()
}

// watchWaiting reports whether the server counts a watch waiting for its client.
func watchWaiting(t *testing.T, ctx context.Context, s *servertest.Server) bool {
	t.Helper()
	resp, body := edgeDo(t, ctx, s, http.MethodGet, "/metrics", "", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("metrics: %d", resp.StatusCode)
	}
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, "quotad_apiserver_watches_waiting_for_client "); ok {
			return v != "0"
		}
	}
	return false
}

// socketBytes is the most a TCP connection on this machine buffers one way while its
// receiver reads nothing: the sender's largest send buffer and the receiver's default
// receive buffer (it grows only as its application reads).
func socketBytes(t *testing.T) int {
	field := func(path string, i int, def int) int {
		b, err := os.ReadFile(path)
		if err != nil {
			return def
		}
		f := strings.Fields(string(b))
		if len(f) != 3 {
			return def
		}
		n, err := strconv.Atoi(f[i])
		if err != nil {
			return def
		}
		return n
	}
	return field("/proc/sys/net/ipv4/tcp_wmem", 2, 4<<20) + 2*field("/proc/sys/net/ipv4/tcp_rmem", 1, 128<<10)
}
