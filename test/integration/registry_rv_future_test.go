package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/server/servertest"
)

// getRaw sends a GET with the admin token and returns the answer's status code, headers
// and body (read whole: a watch's stream to its end).
func getRaw(t *testing.T, s *servertest.Server, path string, q url.Values) (int, http.Header, []byte) {
	t.Helper()
	transport, err := rest.TransportFor(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodGet, s.URL+path+"?"+q.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

var tooLargeMessage = regexp.MustCompile(`^Timeout: Too large resource version: (\d+), current: (\d+)$`)

// checkTooLarge checks st is upstream's Status for a read at requested, the store having
// been between lo and hi when the wait ended: every field pinned, the current revision
// read from the message.
func checkTooLarge(t *testing.T, name string, st metav1.Status, requested uint64, lo, hi int64) {
	t.Helper()
	m := tooLargeMessage.FindStringSubmatch(st.Message)
	if m == nil {
		t.Errorf("%s: message %q", name, st.Message)
		return
	}
	cur, _ := strconv.ParseInt(m[2], 10, 64)
	if cur < lo || cur > hi {
		t.Errorf("%s: current %d, the store was between %d and %d", name, cur, lo, hi)
	}
	want := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  fmt.Sprintf("Timeout: Too large resource version: %d, current: %d", requested, cur),
		Reason:   metav1.StatusReasonTimeout,
		Details: &metav1.StatusDetails{
			Causes:            []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}},
			RetryAfterSeconds: 1,
		},
		Code: http.StatusGatewayTimeout,
	}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("%s:\n got %+v %+v\nwant %+v %+v", name, st, st.Details, want, want.Details)
	}
}

// TestResourceVersionTooLarge: a read at a resourceVersion the store has not reached waits
// for it (upstream's watch cache waits 3 s), then answers upstream's 504 Status: a list
// (unset, NotOlderThan or Exact match, limited or not), a get, and a watch asking for
// initial events (its one event, of type ERROR, as upstream's cacher answers). A plain
// watch from a future resourceVersion is established at once and sends what comes after
// it. A request whose deadline comes first ends with it.
func TestResourceVersionTooLarge(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "fut")
	if _, err := s.Client.CoreV1().ConfigMaps("fut").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("c")}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	lo := revision(t, s)
	n := lo + 1000
	rv := strconv.FormatInt(n, 10)
	const cms = "/api/v1/namespaces/fut/configmaps"
	type answer struct {
		name string
		code int
		h    http.Header
		body []byte
	}
	var answers []chan answer
	ask := func(name, path string, q url.Values) {
		ch := make(chan answer, 1)
		answers = append(answers, ch)
		go func() {
			code, h, body := getRaw(t, s, path, q)
			ch <- answer{name, code, h, body}
		}()
	}
	// Every request waits; they wait together.
	for _, tc := range []struct {
		name, path string
		q          url.Values
	}{
		{"list", cms, url.Values{"resourceVersion": {rv}}},
		{"list NotOlderThan", cms, url.Values{"resourceVersion": {rv}, "resourceVersionMatch": {"NotOlderThan"}}},
		{"list NotOlderThan with limit", cms, url.Values{"resourceVersion": {rv}, "resourceVersionMatch": {"NotOlderThan"}, "limit": {"1"}}},
		{"list with limit", cms, url.Values{"resourceVersion": {rv}, "limit": {"1"}}},
		{"list Exact", cms, url.Values{"resourceVersion": {rv}, "resourceVersionMatch": {"Exact"}}},
		{"list of every namespace", "/api/v1/configmaps", url.Values{"resourceVersion": {rv}}},
		{"get", cms + "/c", url.Values{"resourceVersion": {rv}}},
		{"get of a missing object", cms + "/missing", url.Values{"resourceVersion": {rv}}},
	} {
		ask(tc.name, tc.path, tc.q)
	}
	// A watch asking for initial events from there: the stream's one event is an ERROR
	// with the same Status.
	ask("watch with initial events", cms, url.Values{"watch": {"1"}, "resourceVersion": {rv},
		"resourceVersionMatch": {"NotOlderThan"}, "sendInitialEvents": {"true"}, "allowWatchBookmarks": {"true"}})
	// A resourceVersion beyond etcd's int64 revisions is named as sent.
	const huge = "18446744073709551615"
	ask("list beyond int64", cms, url.Values{"resourceVersion": {huge}})
	// The request's deadline ends the wait: the edge's timeout.
	ask("list with timeout=1s", cms, url.Values{"resourceVersion": {rv}, "timeout": {"1s"}})
	got := map[string]answer{}
	for _, ch := range answers {
		a := <-ch
		got[a.name] = a
	}
	hi := revision(t, s)
	for name, a := range got {
		if name == "watch with initial events" || name == "list with timeout=1s" {
			continue
		}
		var st metav1.Status
		if err := json.Unmarshal(a.body, &st); err != nil || a.code != http.StatusGatewayTimeout {
			t.Errorf("%s: %d %s, want 504", name, a.code, a.body)
			continue
		}
		if ra := a.h.Get("Retry-After"); ra != "1" {
			t.Errorf("%s: Retry-After %q, want 1", name, ra)
		}
		requested := uint64(n)
		if name == "list beyond int64" {
			requested, _ = strconv.ParseUint(huge, 10, 64)
		}
		checkTooLarge(t, name, st, requested, lo, hi)
	}

	code, body := got["watch with initial events"].code, got["watch with initial events"].body
	dec := json.NewDecoder(bytes.NewReader(body))
	var ev struct {
		Type   watch.EventType `json:"type"`
		Object metav1.Status   `json:"object"`
	}
	if err := dec.Decode(&ev); code != http.StatusOK || err != nil || ev.Type != watch.Error {
		t.Errorf("watch with initial events: %d %s, want 200 and an ERROR event", code, body)
	} else {
		checkTooLarge(t, "watch with initial events", ev.Object, uint64(n), lo, hi)
		if dec.More() {
			t.Errorf("watch with initial events: more after the ERROR event: %s", body)
		}
	}

	code, body = got["list with timeout=1s"].code, got["list with timeout=1s"].body
	var st metav1.Status
	_ = json.Unmarshal(body, &st)
	if code != http.StatusGatewayTimeout || st.Message != "Timeout: request did not complete within the allotted timeout" {
		t.Errorf("list with timeout=1s: %d %s, want the request timeout's 504", code, body)
	}

	// A plain watch from a resourceVersion not reached yet is established without waiting
	// and sends the changes after it: whichever of b and d first has a resourceVersion
	// past from.
	a, err := s.Client.CoreV1().ConfigMaps("fut").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("a")}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ra, _ := strconv.ParseInt(a.ResourceVersion, 10, 64)
	from := ra + 1
	w, err := s.Client.CoreV1().ConfigMaps("fut").Watch(ctx, metav1.ListOptions{ResourceVersion: strconv.FormatInt(from, 10)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var want string
	for _, name := range []string{"b", "d"} {
		cm, err := s.Client.CoreV1().ConfigMaps("fut").Create(ctx, &corev1.ConfigMap{ObjectMeta: meta(name)}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := strconv.ParseInt(cm.ResourceVersion, 10, 64); r > from && want == "" {
			want = name
		}
	}
	first := nextEvent(t, w)
	if cm, ok := first.Object.(*corev1.ConfigMap); !ok || first.Type != watch.Added || cm.Name != want {
		t.Errorf("plain watch from %d: first event %s %+v, want ADDED %s", from, first.Type, first.Object, want)
	}
}

// TestResourceVersionReachedWhileWaiting: a list and a watch with initial events from a
// resourceVersion the store reaches while they wait are served as usual, at a revision at
// least as new.
func TestResourceVersionReachedWhileWaiting(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "soon")
	cms := s.Client.CoreV1().ConfigMaps("soon")
	n := revision(t, s) + 1
	rv := strconv.FormatInt(n, 10)

	type listed struct {
		l   *corev1.ConfigMapList
		err error
	}
	lists := make(chan listed, 2)
	for _, match := range []metav1.ResourceVersionMatch{"", metav1.ResourceVersionMatchNotOlderThan} {
		go func() {
			// No retries: a 504 must show (client-go retries 5xx answers with Retry-After).
			l := &corev1.ConfigMapList{}
			req := s.Client.CoreV1().RESTClient().Get().Namespace("soon").Resource("configmaps").Param("resourceVersion", rv).MaxRetries(0)
			if match != "" {
				req = req.Param("resourceVersionMatch", string(match))
			}
			lists <- listed{l, req.Do(ctx).Into(l)}
		}()
	}
	yes := true
	type watched struct {
		w   watch.Interface
		err error
	}
	watches := make(chan watched, 1)
	go func() {
		w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
			SendInitialEvents: &yes, AllowWatchBookmarks: true})
		watches <- watched{w, err}
	}()

	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: meta("x")}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got := <-lists
		if got.err != nil {
			t.Fatalf("list from %d: %v", n, got.err)
		}
		var names []string
		for _, cm := range got.l.Items {
			names = append(names, cm.Name)
		}
		if r, _ := strconv.ParseInt(got.l.ResourceVersion, 10, 64); r < n || !slices.Contains(names, "x") {
			t.Errorf("list from %d: resourceVersion %s, items %v", n, got.l.ResourceVersion, names)
		}
	}
	wg := <-watches
	if wg.err != nil {
		t.Fatal(wg.err)
	}
	defer wg.w.Stop()
	var initial []string
	for {
		ev := nextEvent(t, wg.w)
		cm, ok := ev.Object.(*corev1.ConfigMap)
		if !ok {
			t.Fatalf("watch from %d: %s %+v", n, ev.Type, ev.Object)
		}
		if ev.Type == watch.Bookmark {
			if r, _ := strconv.ParseInt(cm.ResourceVersion, 10, 64); r < n {
				t.Errorf("watch from %d: initial events end at %d", n, r)
			}
			break
		}
		if ev.Type != watch.Added {
			t.Errorf("watch from %d: initial event %s %s", n, ev.Type, cm.Name)
		}
		initial = append(initial, cm.Name)
	}
	if !slices.Contains(initial, "x") {
		t.Errorf("watch from %d: initial events %v, want x among them", n, initial)
	}
}
