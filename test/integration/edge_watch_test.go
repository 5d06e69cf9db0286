package integration

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/quotad/quotad/internal/server/servertest"
)

// bigConfigMaps creates n config maps of 900 KiB each in ns, named prefix-0, prefix-1, …
func bigConfigMaps(t *testing.T, ctx context.Context, s *servertest.Server, ns, prefix string, n int) {
	t.Helper()
	data := map[string]string{"k": strings.Repeat("x", 900<<10)}
	for i := 0; i < n; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: meta(fmt.Sprintf("%s-%d", prefix, i)), Data: data}
		if _, err := s.Client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// drainWatch reads a raw watch answer to its end (with a receive buffer large enough to be
// quick): the events read and how it ended.
func drainWatch(t *testing.T, conn *tls.Conn) (events int, end error) {
	t.Helper()
	if err := conn.NetConn().(*net.TCPConn).SetReadBuffer(4 << 20); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("watch answered %d", resp.StatusCode)
	}
	dec := json.NewDecoder(resp.Body)
	for {
		var ev metav1.WatchEvent
		if err := dec.Decode(&ev); err != nil {
			return events, err
		}
		if ev.Type == string(watch.Error) {
			t.Errorf("watch sent an ERROR event: %s", ev.Object.Raw)
		}
		events++
	}
}

// TestWatchFallenBehindIsClosed: a watcher whose client reads nothing is closed once the
// changes it has not taken pass the backlog bound (its client re-lists, as upstream's),
// while a watcher of the same objects that reads gets every change and stays open.
func TestWatchFallenBehindIsClosed(t *testing.T) {
	t.Parallel()
	logs := newEdgeLogs()
	s := servertest.Start(t, logs.option())
	ctx := edgeCtx(t)
	const ns, n = "behind", 40
	mkNamespace(t, s, ns)
	cms := s.Client.CoreV1().ConfigMaps(ns)
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rv := list.ResourceVersion
	good, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		t.Fatal(err)
	}
	defer good.Stop()
	// The reading watcher takes its events as they come.
	seen := make(chan string, n+1)
	go func() {
		defer close(seen)
		for ev := range good.ResultChan() {
			name := fmt.Sprintf("%s %v", ev.Type, ev.Object)
			if cm, ok := ev.Object.(*corev1.ConfigMap); ok {
				name = string(ev.Type) + " " + cm.Name
			}
			seen <- name
		}
	}()
	slow := edgeConn(t, ctx, s, true)
	sendHead(t, slow, s, http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps?watch=1&resourceVersion="+rv, nil, "")

	// 1. More changes than the slow watcher's backlog and connection can hold.
	bigConfigMaps(t, ctx, s, ns, "big", n)
	logs.wait(t, ctx, "closing the slow watcher", func(l edgeLine) bool {
		return l.msg == "closing a watch that fell behind" && l.attrs["path"] == "/api/v1/namespaces/"+ns+"/configmaps"
	})

	// 2. The reading watcher has every change, and more.
	next := func() string {
		select {
		case name := <-seen:
			return name
		case <-ctx.Done():
			t.Fatal("no event for the reading watcher")
			return ""
		}
	}
	for i := 0; i < n; i++ {
		if got, want := next(), fmt.Sprintf("ADDED big-%d", i); got != want {
			t.Fatalf("good watcher event %d: %s, want %s", i, got, want)
		}
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("after")}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := next(); got != "ADDED after" {
		t.Errorf("good watcher after the slow one was closed: %s", got)
	}

	// 3. The slow watcher's answer was cut off: what it can still read ends short.
	events, end := drainWatch(t, slow)
	if end == io.EOF || events >= n {
		t.Errorf("slow watcher read %d of %d events, ending with %v: want it cut off", events, n, end)
	}
}

// TestWatchTimeoutSecondsWithoutReading: a watch's timeoutSeconds ends it even when its
// client reads nothing and the server is blocked writing to it.
func TestWatchTimeoutSecondsWithoutReading(t *testing.T) {
	t.Parallel()
	logs := newEdgeLogs()
	s := servertest.Start(t, logs.option())
	ctx := edgeCtx(t)
	const ns, n = "stalled", 20
	mkNamespace(t, s, ns)
	bigConfigMaps(t, ctx, s, ns, "big", n)
	slow := edgeConn(t, ctx, s, true)
	path := "/api/v1/namespaces/" + ns + "/configmaps?watch=1&timeoutSeconds=2"
	sendHead(t, slow, s, http.MethodGet, path, nil, "")
	// The watch's initial events are more than the connection holds: the server is blocked
	// writing until the watch's end.
	logs.wait(t, ctx, "for the watch's end", func(l edgeLine) bool { return l.msg == "HTTP" && l.attrs["URI"] == path })
	events, end := drainWatch(t, slow)
	if end == io.EOF || events >= n {
		t.Errorf("watcher read %d of %d events, ending with %v: want it cut off", events, n, end)
	}
}
