package apiserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/storage"
)

// pageWatch records the largest storage page read under a prefix.
type pageWatch struct {
	*storage.Etcd
	prefix string
	mu     sync.Mutex
	most   int
	reads  int
}

func (p *pageWatch) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	lr, err := p.Etcd.List(ctx, prefix, opts)
	if strings.HasPrefix(prefix, p.prefix) && !opts.KeysOnly {
		p.mu.Lock()
		p.reads++
		p.most = max(p.most, len(lr.KVs))
		p.mu.Unlock()
	}
	return lr, err
}

func (p *pageWatch) reset() (most, reads int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	most, reads, p.most, p.reads = p.most, p.reads, 0, 0
	return most, reads
}

// testTable is the server's Table converter for built-in kinds (their strategies'), with upstream's null rows
// for empty tables of one kind (as the default convertor writes them).
func testTable(res *registry.Resource, objs []runtime.Object, now time.Time, include metav1.IncludeObjectPolicy) (*metav1.Table, error) {
	t, err := res.Strategy.(registry.TableConvertor).ConvertToTable(objs, now, include)
	if err == nil && len(objs) == 0 && res.GVR.Resource == "secrets" {
		t.Rows = nil
	}
	return t, err
}

// listServer is the HTTP edge on an embedded etcd, its storage's list pages watched.
func listServer(tb testing.TB) (*Server, *registry.Store, *pageWatch) {
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	etcd, err := storage.StartEmbedded(ctx, tb.TempDir(), logger, storage.WithUnsafeNoFsync(), storage.WithFastElection())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { etcd.Close() })
	pages := &pageWatch{Etcd: etcd.Store(), prefix: "/registry/configmaps/"}
	store := registry.NewStore(registry.Config{
		Storage: pages, Catalogue: registry.NewCatalogue(), Logger: logger,
	})
	clk := clocktesting.NewFakePassiveClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	s := New(Config{Store: store, Logger: logger, Table: testTable, Clock: clk})
	return s, store, pages
}

// mkConfigMaps creates n config maps in ns, every third labelled.
func mkConfigMaps(tb testing.TB, store *registry.Store, ns string, n int) {
	res := store.Catalogue().Get(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i), Namespace: ns},
				Data: map[string]string{"i": strconv.Itoa(i), "html": "<b>&</b>"}}
			if i%3 == 0 {
				cm.Labels = map[string]string{"third": "yes"}
			}
			if _, err := store.Create(ctx, res, ns, cm, registry.WriteOptions{}); err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
}

// unstreamedList is how lists were answered before streaming: the whole list read, then
// encoded at once (as pages of limited lists still are). It is the reference the streamed
// answers must equal byte for byte.
func unstreamedList(s *Server, w http.ResponseWriter, r *http.Request, res *registry.Resource, ns string) {
	acc, sel, ok := s.readQuery(w, r, res, requestInfo{})
	if !ok {
		return
	}
	lr, err := s.cfg.Store.List(r.Context(), res, ns, registry.ListOptions{Selector: sel})
	if err != nil {
		writeError(w, err)
		return
	}
	s.writeListResult(w, r, res, acc, lr)
}

// TestListStreamedAsBefore: unlimited lists are read from storage a page at a time, and
// their answers (JSON, Table, PartialObjectMetadataList; with selectors; empty) are byte
// for byte those of encoding the whole list at once.
func TestListStreamedAsBefore(t *testing.T) {
	s, store, pages := listServer(t)
	const n = 2*ListPageSize + 37
	mkConfigMaps(t, store, "a", n)
	mkConfigMaps(t, store, "b", 4)
	const tableV1 = "application/json;as=Table;v=v1;g=meta.k8s.io"
	cases := []struct {
		name, path, accept string
		resource           string
		ns                 string
	}{
		{"json", "/api/v1/namespaces/a/configmaps", "", "configmaps", "a"},
		{"json all namespaces", "/api/v1/configmaps", "application/json", "configmaps", ""},
		{"json selector", "/api/v1/namespaces/a/configmaps?labelSelector=third%3Dyes", "", "configmaps", "a"},
		{"json field selector none", "/api/v1/namespaces/a/configmaps?fieldSelector=metadata.name%3Dnone", "", "configmaps", "a"},
		{"json empty", "/api/v1/namespaces/empty/configmaps", "", "configmaps", "empty"},
		{"table", "/api/v1/namespaces/a/configmaps", tableV1, "configmaps", "a"},
		{"table v1beta1 object", "/api/v1/configmaps?includeObject=Object", "application/json;as=Table;v=v1beta1;g=meta.k8s.io", "configmaps", ""},
		{"table none", "/api/v1/namespaces/b/configmaps?includeObject=None", tableV1, "configmaps", "b"},
		{"table empty", "/api/v1/namespaces/empty/configmaps", tableV1, "configmaps", "empty"},
		{"table empty null rows", "/api/v1/namespaces/empty/secrets", tableV1, "secrets", "empty"},
		{"partial", "/api/v1/namespaces/a/configmaps", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", "configmaps", "a"},
		{"partial empty", "/api/v1/namespaces/empty/configmaps", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", "configmaps", "empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := func() *http.Request {
				r := httptest.NewRequest(http.MethodGet, tc.path, nil)
				if tc.accept != "" {
					r.Header.Set("Accept", tc.accept)
				}
				return r
			}
			pages.reset()
			got := httptest.NewRecorder()
			s.ServeHTTP(got, req())
			most, reads := pages.reset()
			res := store.Catalogue().Get(schema.GroupVersionResource{Version: "v1", Resource: tc.resource})
			want := httptest.NewRecorder()
			unstreamedList(s, want, req(), res, tc.ns)
			if got.Code != http.StatusOK || got.Code != want.Code {
				t.Fatalf("status %d, want %d: %s", got.Code, want.Code, got.Body.String())
			}
			if g, w := got.Header().Get("Content-Type"), want.Header().Get("Content-Type"); g != w {
				t.Errorf("Content-Type %q, want %q", g, w)
			}
			if g, w := got.Body.String(), want.Body.String(); g != w {
				i := 0
				for i < len(g) && i < len(w) && g[i] == w[i] {
					i++
				}
				t.Errorf("streamed answer differs at byte %d of %d (want %d):\n got %.200q\nwant %.200q", i, len(g), len(w), g[i:], w[i:])
			}
			if most > ListPageSize {
				t.Errorf("a storage read returned %d objects, want at most a page (%d)", most, ListPageSize)
			}
			if tc.ns == "a" && reads < 3 {
				t.Errorf("%d storage reads for %d objects, want one per page", reads, n)
			}
		})
	}
}

// discard is a ResponseWriter that keeps nothing; it samples the heap in use above base at
// its largest write into *peak.
type discard struct {
	h       http.Header
	peak    *uint64
	base    uint64
	largest int
}

func (d *discard) Header() http.Header { return d.h }
func (d *discard) WriteHeader(int)     {}
func (d *discard) Write(p []byte) (int, error) {
	if d.peak != nil && len(p) >= d.largest {
		d.largest = len(p)
		var m goruntime.MemStats
		goruntime.ReadMemStats(&m)
		if m.HeapAlloc > d.base {
			*d.peak = max(*d.peak, m.HeapAlloc-d.base)
		}
	}
	return len(p), nil
}

// BenchmarkUnlimitedList lists 5,000 config maps as JSON and as a Table, streamed and, for
// comparison, as they were answered before (the whole list read, then encoded at once).
// It reports the heap a list holds when it writes its largest piece (peak-heap-B/op): a
// page's worth when streamed, the whole list's (and its encoding) when not.
func BenchmarkUnlimitedList(b *testing.B) {
	s, store, _ := listServer(b)
	mkConfigMaps(b, store, "a", 5000)
	res := store.Catalogue().Get(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"})
	for _, accept := range []string{"json", "table"} {
		for _, streamed := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s/streamed=%v", accept, streamed), func(b *testing.B) {
				b.ReportAllocs()
				var peak uint64
				for i := 0; i < b.N; i++ {
					r := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/a/configmaps", nil)
					if accept == "table" {
						r.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
					}
					goruntime.GC()
					var m goruntime.MemStats
					goruntime.ReadMemStats(&m)
					w := &discard{h: http.Header{}, peak: &peak, base: m.HeapAlloc}
					if streamed {
						s.ServeHTTP(w, r)
					} else {
						unstreamedList(s, w, r, res, "a")
					}
				}
				b.ReportMetric(float64(peak), "peak-heap-B/op")
			})
		}
	}
}

// TestWatchInitialEventsStored: a JSON watch's initial events, written from the stored
// bytes, are byte for byte those of a watch whose selector makes it decode and encode
// every object (the selector matches them all), for more objects than a page.
func TestWatchInitialEventsStored(t *testing.T) {
	s, store, _ := listServer(t)
	const n = 2*ListPageSize + 37
	mkConfigMaps(t, store, "a", n)
	srv := httptest.NewServer(s)
	defer srv.Close()
	initial := func(query string) []string {
		t.Helper()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/namespaces/a/configmaps?watch=true"+query, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var lines []string
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for len(lines) < n && sc.Scan() {
			lines = append(lines, sc.Text())
		}
		if len(lines) != n {
			t.Fatalf("watch%s: %d initial events, want %d (%v)", query, len(lines), n, sc.Err())
		}
		return lines
	}
	stored := initial("")
	decoded := initial("&labelSelector=" + url.QueryEscape("absent!=x"))
	for i := range stored {
		if stored[i] != decoded[i] {
			t.Fatalf("initial event %d from the stored bytes:\n%s\nwant (decoded and encoded):\n%s", i, stored[i], decoded[i])
		}
	}
	if !strings.HasPrefix(stored[0], `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":`) {
		t.Errorf("first initial event: %.120s", stored[0])
	}
}
