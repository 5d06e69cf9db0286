package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/audit"
	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
)

// startAudited starts quotad auditing with policy into a log file; it returns the server
// and the log's path. The test reads the log after stopping the server (which writes
// every buffered event), so it never waits on the writer.
func startAudited(t *testing.T, policy string, opts ...servertest.Option) (*servertest.Server, string) {
	t.Helper()
	dir := t.TempDir()
	policyFile := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policyFile, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "audit", "audit.log")
	opts = append([]servertest.Option{func(c *server.Config) {
		c.AuditPolicyFile, c.AuditLogPath = policyFile, logPath
	}}, opts...)
	return servertest.Start(t, opts...), logPath
}

// stopAndRead checks the quota invariant, stops the server and returns the events of
// the audit log (and of its rotated files), in the order written.
func stopAndRead(t *testing.T, s *servertest.Server, logPath string) []audit.Event {
	t.Helper()
	s.CheckInvariant()
	s.Stop()
	return readAudit(t, logPath)
}

// readAudit reads the audit events logged so far, backups first.
func readAudit(t *testing.T, logPath string) []audit.Event {
	t.Helper()
	files, _ := filepath.Glob(strings.TrimSuffix(logPath, ".log") + "-*.log")
	slices.Sort(files) // backups are named by time
	files = append(files, logPath)
	var evs []audit.Event
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var ev audit.Event
			dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&ev); err != nil {
				t.Fatalf("%s: %v: %s", f, err, sc.Text())
			}
			evs = append(evs, ev)
		}
	}
	return evs
}

// eventsOf returns the events of the requests matching pred, in order.
func eventsOf(evs []audit.Event, pred func(ev *audit.Event) bool) []audit.Event {
	var out []audit.Event
	for i := range evs {
		if pred(&evs[i]) {
			out = append(out, evs[i])
		}
	}
	return out
}

func stages(evs []audit.Event) []audit.Stage {
	var out []audit.Stage
	for _, ev := range evs {
		out = append(out, ev.Stage)
	}
	return out
}

// requestEvents returns the events of the request (by audit ID) that had verb on the
// named object; the name of a created object is known from its last event on (as
// upstream, RequestReceived precedes decoding the body).
func requestEvents(evs []audit.Event, verb, resource, name string) []audit.Event {
	for _, ev := range evs {
		if ev.Verb == verb && ev.ObjectRef != nil && ev.ObjectRef.Resource == resource && ev.ObjectRef.Name == name {
			return eventsOf(evs, func(e *audit.Event) bool { return e.AuditID == ev.AuditID })
		}
	}
	return nil
}

const auditLevelsPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  resources:
  - group: ""
    resources: ["events"]
- level: RequestResponse
  resources:
  - group: ""
    resources: ["configmaps"]
- level: Request
  resources:
  - group: ""
    resources: ["secrets"]
  omitStages: ["RequestReceived"]
- level: None
  users: ["admin"]
  verbs: ["list"]
- level: Metadata
`

func TestAuditLevels(t *testing.T) {
	t.Parallel()
	s, logPath := startAudited(t, auditLevelsPolicy)
	ctx := t.Context()
	c := s.Client
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "audit-a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm, err := c.CoreV1().ConfigMaps("audit-a").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Secrets("audit-a").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = c.CoreV1().ConfigMaps("audit-a").Get(ctx, "missing", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("get missing: %v", err)
	}
	if _, err := c.CoreV1().ConfigMaps("audit-a").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Pods("audit-a").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}

	// Raw requests: the Audit-Id header, a request that fails authentication, a health
	// check (anonymous) and a client's own audit ID.
	tr, err := rest.TransportFor(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: tr}
	resp, err := hc.Get(s.URL + "/api/v1/namespaces/audit-a/configmaps/cm")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	headerID := resp.Header.Get("Audit-Id")
	if headerID == "" {
		t.Fatal("no Audit-Id header")
	}
	anonTr, err := rest.TransportFor(&rest.Config{TLSClientConfig: rest.TLSClientConfig{CAData: s.CAPEM}})
	if err != nil {
		t.Fatal(err)
	}
	anon := &http.Client{Transport: anonTr}
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/v1/namespaces", nil)
	req.Header.Set("Authorization", "Bearer wrong")
	resp, err = anon.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Audit-Id") == "" {
		t.Fatalf("bad token: %d, Audit-Id %q", resp.StatusCode, resp.Header.Get("Audit-Id"))
	}
	req, _ = http.NewRequest(http.MethodGet, s.URL+"/healthz", nil)
	req.Header.Set("Audit-ID", "client-chosen-id")
	resp, err = anon.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Audit-Id"); got != "client-chosen-id" {
		t.Fatalf("healthz Audit-Id = %q", got)
	}

	evs := stopAndRead(t, s, logPath)
	for _, ev := range evs {
		if ev.Kind != "Event" || ev.APIVersion != "audit.k8s.io/v1" || ev.AuditID == "" || ev.RequestReceivedTimestamp.IsZero() || ev.StageTimestamp.IsZero() {
			t.Errorf("event without its envelope: %+v", ev)
		}
		if ev.ObjectRef != nil && (ev.ObjectRef.Resource == "events" || (ev.Verb == "list" && ev.ObjectRef.Resource == "pods")) {
			t.Errorf("event for a request the policy puts at None: %+v", ev)
		}
	}

	// 1. Metadata: both stages, no objects; the object's name from the body.
	ns := requestEvents(evs, "create", "namespaces", "audit-a")
	if got := stages(ns); !slices.Equal(got, []audit.Stage{audit.StageRequestReceived, audit.StageResponseComplete}) {
		t.Fatalf("namespace create stages = %v", got)
	}
	for _, ev := range ns {
		if ev.AuditID != ns[0].AuditID || ev.Level != audit.LevelMetadata || ev.RequestObject != nil || ev.ResponseObject != nil {
			t.Errorf("namespace create event: %+v", ev)
		}
	}
	done := ns[1]
	if done.User.Username != "admin" || !slices.Contains(done.User.Groups, "system:masters") {
		t.Errorf("user = %+v", done.User)
	}
	if !slices.Equal(done.SourceIPs, []string{"127.0.0.1"}) || done.UserAgent == "" || done.RequestURI != "/api/v1/namespaces" {
		t.Errorf("request: ips %v, agent %q, uri %q", done.SourceIPs, done.UserAgent, done.RequestURI)
	}
	if want := (audit.ObjectReference{Resource: "namespaces", Name: "audit-a", APIVersion: "v1"}); *done.ObjectRef != want {
		t.Errorf("objectRef = %+v, want %+v", *done.ObjectRef, want)
	}
	if done.ResponseStatus == nil || done.ResponseStatus.Code != http.StatusCreated || done.ResponseStatus.Message != "" {
		t.Errorf("responseStatus = %+v", done.ResponseStatus)
	}
	if ns[0].ResponseStatus != nil || !ns[0].StageTimestamp.Equal(&ns[0].RequestReceivedTimestamp) || ns[0].ObjectRef.Name != "" {
		t.Errorf("RequestReceived event: %+v", ns[0])
	}
	if done.StageTimestamp.Before(&done.RequestReceivedTimestamp) {
		t.Errorf("ResponseComplete before RequestReceived: %+v", done)
	}

	// 2. RequestResponse: the object sent and the object stored.
	cms := requestEvents(evs, "create", "configmaps", "cm")
	if got := stages(cms); !slices.Equal(got, []audit.Stage{audit.StageRequestReceived, audit.StageResponseComplete}) {
		t.Fatalf("configmap create stages = %v", got)
	}
	var sent, stored corev1.ConfigMap
	if err := json.Unmarshal(cms[1].RequestObject, &sent); err != nil || sent.Data["k"] != "v" || sent.Name != "cm" {
		t.Errorf("requestObject = %s (%v)", cms[1].RequestObject, err)
	}
	if err := json.Unmarshal(cms[1].ResponseObject, &stored); err != nil || stored.UID != cm.UID || stored.ResourceVersion != cm.ResourceVersion {
		t.Errorf("responseObject = %s (%v)", cms[1].ResponseObject, err)
	}
	if cms[0].RequestObject != nil || cms[0].ResponseObject != nil {
		t.Errorf("RequestReceived carries objects: %+v", cms[0])
	}
	if ref := cms[1].ObjectRef; ref.Namespace != "audit-a" || ref.APIVersion != "v1" || ref.APIGroup != "" {
		t.Errorf("objectRef = %+v", ref)
	}

	// 3. Request, RequestReceived omitted: one event, the object sent, no response.
	sec := requestEvents(evs, "create", "secrets", "s")
	if len(sec) != 1 || sec[0].Stage != audit.StageResponseComplete || sec[0].Level != audit.LevelRequest {
		t.Fatalf("secret create events = %+v", sec)
	}
	if sec[0].RequestObject == nil || sec[0].ResponseObject != nil {
		t.Errorf("secret create objects: request %s, response %s", sec[0].RequestObject, sec[0].ResponseObject)
	}

	// 4. A failure: its Status, and the Status answered as the response object.
	miss := requestEvents(evs, "get", "configmaps", "missing")
	if len(miss) != 2 {
		t.Fatalf("get missing events = %+v", miss)
	}
	st := miss[1].ResponseStatus
	if st == nil || st.Code != 404 || st.Status != metav1.StatusFailure || st.Reason != metav1.StatusReasonNotFound || st.Message != `configmaps "missing" not found` {
		t.Errorf("responseStatus = %+v", st)
	}
	var body metav1.Status
	if err := json.Unmarshal(miss[1].ResponseObject, &body); err != nil || body.Kind != "Status" || body.Code != 404 {
		t.Errorf("responseObject = %s (%v)", miss[1].ResponseObject, err)
	}

	// 5. A list at RequestResponse (the first rule for configmaps wins over "None for
	// admin's lists").
	if l := eventsOf(evs, func(ev *audit.Event) bool {
		return ev.Verb == "list" && ev.ObjectRef != nil && ev.ObjectRef.Resource == "configmaps"
	}); len(l) != 2 || l[1].ResponseObject == nil {
		t.Errorf("configmap list events = %+v", l)
	}

	// 6. The Audit-Id header names the request's events.
	if h := eventsOf(evs, func(ev *audit.Event) bool { return string(ev.AuditID) == headerID }); len(h) != 2 || h[1].Verb != "get" || h[1].ObjectRef.Name != "cm" {
		t.Errorf("events of Audit-Id %s = %+v", headerID, h)
	}

	// 7. Failed authentication: one ResponseStarted event, no user, the credentials tried.
	unauth := eventsOf(evs, func(ev *audit.Event) bool { return ev.ResponseStatus != nil && ev.ResponseStatus.Code == 401 })
	if len(unauth) != 1 {
		t.Fatalf("401 events = %+v", unauth)
	}
	if u := unauth[0]; u.Stage != audit.StageResponseStarted || u.User.Username != "" || u.ResponseStatus.Message != "Authentication failed, attempted: bearer" || u.Verb != "list" {
		t.Errorf("401 event = %+v", u)
	}

	// 8. A health check: anonymous, non-resource, the client's audit ID.
	hz := eventsOf(evs, func(ev *audit.Event) bool { return ev.AuditID == "client-chosen-id" })
	if len(hz) != 2 || hz[1].Verb != "get" || hz[1].RequestURI != "/healthz" || hz[1].ObjectRef != nil ||
		hz[1].User.Username != "system:anonymous" || !slices.Equal(hz[1].User.Groups, []string{"system:unauthenticated"}) || hz[1].ResponseStatus.Code != 200 {
		t.Errorf("healthz events = %+v", hz)
	}
}

func TestAuditQuotaRefusal(t *testing.T) {
	t.Parallel()
	s, logPath := startAudited(t, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources:\n  - group: \"\"\n    resources: [pods]\n")
	ctx := t.Context()
	c := s.Client
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "audit-q"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().ResourceQuotas("audit-q").Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	}
	if _, err := c.CoreV1().Pods("audit-q").Create(ctx, pod("p1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := c.CoreV1().Pods("audit-q").Create(ctx, pod("p2"), metav1.CreateOptions{})
	const msg = `pods "p2" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1`
	expectForbidden(t, err, msg)

	evs := stopAndRead(t, s, logPath)
	ok := requestEvents(evs, "create", "pods", "p1")
	if len(ok) != 2 || ok[1].ResponseStatus.Code != 201 {
		t.Errorf("admitted pod events = %+v", ok)
	}
	refused := requestEvents(evs, "create", "pods", "p2")
	if got := stages(refused); !slices.Equal(got, []audit.Stage{audit.StageRequestReceived, audit.StageResponseComplete}) {
		t.Fatalf("refused pod stages = %v", got)
	}
	st := refused[1].ResponseStatus
	if st.Code != http.StatusForbidden || st.Status != metav1.StatusFailure || st.Reason != metav1.StatusReasonForbidden || st.Message != msg {
		t.Errorf("refused pod responseStatus = %+v", st)
	}
	if st.Details == nil || st.Details.Name != "p2" || st.Details.Kind != "pods" {
		t.Errorf("refused pod details = %+v", st.Details)
	}
	if ref := refused[1].ObjectRef; ref.Namespace != "audit-q" || ref.Resource != "pods" {
		t.Errorf("objectRef = %+v", ref)
	}
	if n := len(eventsOf(evs, func(ev *audit.Event) bool { return ev.ObjectRef == nil || ev.ObjectRef.Resource != "pods" })); n != 0 {
		t.Errorf("%d events for requests the policy does not select", n)
	}
}

func TestAuditWatchResponseStarted(t *testing.T) {
	t.Parallel()
	s, logPath := startAudited(t, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n  verbs: [watch]\n")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c := s.Client
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "audit-w"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := c.CoreV1().ConfigMaps("audit-w").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().ConfigMaps("audit-w").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "w"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		if ev.Object.(*corev1.ConfigMap).Name != "w" {
			t.Fatalf("watch event %+v", ev)
		}
	case <-ctx.Done():
		t.Fatal("no watch event")
	}
	w.Stop()
	// The watch's end is logged when the server sees the client go, not at its shutdown.
	isWatch := func(ev *audit.Event) bool { return ev.Verb == "watch" }
	waitFor(t, func() bool {
		return slices.Contains(stages(eventsOf(readAudit(t, logPath), isWatch)), audit.StageResponseComplete)
	})

	evs := stopAndRead(t, s, logPath)
	watch := eventsOf(evs, isWatch)
	if got := stages(watch); !slices.Equal(got, []audit.Stage{audit.StageRequestReceived, audit.StageResponseStarted, audit.StageResponseComplete}) {
		t.Fatalf("watch stages = %v", got)
	}
	for _, ev := range watch {
		if ev.AuditID != watch[0].AuditID || ev.ObjectRef.Resource != "configmaps" || ev.ObjectRef.Namespace != "audit-w" || ev.ResponseObject != nil {
			t.Errorf("watch event %+v", ev)
		}
	}
	if st := watch[1].ResponseStatus; st == nil || st.Code != 200 {
		t.Errorf("ResponseStarted status = %+v", st)
	}
	if len(evs) != 3 {
		t.Errorf("%d events, want only the watch's 3", len(evs))
	}
}

func TestAuditRotatesBySize(t *testing.T) {
	t.Parallel()
	s, logPath := startAudited(t, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n  verbs: [create]\n  resources:\n  - group: \"\"\n    resources: [configmaps]\n",
		func(c *server.Config) { c.AuditLogMaxSize, c.AuditLogMaxBackup = 1, 5 })
	ctx := t.Context()
	big := strings.Repeat("x", 200<<10)
	// Each create is recorded with its object twice (request and response) in one event:
	// about 400 KB, so 6 of them take three files of 1 MB.
	const n = 6
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "big-"}, Data: map[string]string{"k": big}}
		if _, err := s.Client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
	}
	evs := stopAndRead(t, s, logPath)
	backups, _ := filepath.Glob(strings.TrimSuffix(logPath, ".log") + "-*.log")
	if len(backups) < 2 {
		t.Errorf("backups = %v, want at least 2 after %d events of ~400 KB with --audit-log-maxsize=1", backups, n)
	}
	for _, f := range append(backups, logPath) {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 1<<20 || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %d bytes, mode %v", f, fi.Size(), fi.Mode().Perm())
		}
	}
	if got := len(eventsOf(evs, func(ev *audit.Event) bool { return ev.Stage == audit.StageResponseComplete })); got != n {
		t.Errorf("%d ResponseComplete events across the files, want %d", got, n)
	}
}

func TestAuditBadPolicyRefusesToStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	started := false
	err := server.Run(ctx, server.Config{
		DataDir: filepath.Join(dir, "data"), BindAddress: "127.0.0.1", EtcdUnsafeNoFsync: true,
		AuditPolicyFile: policy, AuditLogPath: filepath.Join(dir, "audit.log"),
		Ready: func(*server.Running) { started = true; cancel() },
	})
	want := `rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse": from file ` + policy
	if err == nil || started || err.Error() != want {
		t.Fatalf("Run = %v (started %v), want %q", err, started, want)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal("Run did not return")
	}
}

// TestAuditPanic: a handler's panic ends its request's audit with the Panic stage and
// upstream's status, and the audit metrics are served.
func TestAuditPanic(t *testing.T) {
	t.Parallel()
	s, logPath := startAudited(t, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources:\n  - group: \"\"\n    resources: [configmaps]\n",
		withGetHook(func(ctx context.Context, key string) (bool, storage.KV, error) {
			if strings.HasSuffix(key, "/boom") {
				panic("boom")
			}
			return false, storage.KV{}, nil
		}))
	ctx := edgeCtx(t)
	resp, _ := edgeDo(t, ctx, s, http.MethodGet, "/api/v1/namespaces/default/configmaps/boom", "", "")
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("panicking read: %d", resp.StatusCode)
	}
	resp, metrics := edgeDo(t, ctx, s, http.MethodGet, "/metrics", "", "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(metrics, "\napiserver_audit_event_total ") || !strings.Contains(metrics, "\napiserver_audit_error_total{plugin=\"log\"} 0\n") {
		t.Errorf("metrics: %d, no audit counters:\n%s", resp.StatusCode, metrics)
	}
	evs := stopAndRead(t, s, logPath)
	boom := requestEvents(evs, "get", "configmaps", "boom")
	if got := stages(boom); !slices.Equal(got, []audit.Stage{audit.StageRequestReceived, audit.StagePanic}) {
		t.Fatalf("panicking request stages = %v", got)
	}
	st := boom[1].ResponseStatus
	if st.Code != 500 || st.Status != metav1.StatusFailure || st.Reason != metav1.StatusReasonInternalError || st.Message != "APIServer panic'd: boom" {
		t.Errorf("Panic responseStatus = %+v", st)
	}
}

// TestAuditTimeout: a request answered with the edge's 504 is recorded with it, though
// its handler was still waiting.
func TestAuditTimeout(t *testing.T) {
	t.Parallel()
	s, logPath := startAudited(t, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources:\n  - group: \"\"\n    resources: [configmaps]\n",
		withGetHook(func(ctx context.Context, key string) (bool, storage.KV, error) {
			if strings.HasSuffix(key, "/slow") {
				<-ctx.Done()
				return true, storage.KV{}, ctx.Err()
			}
			return false, storage.KV{}, nil
		}))
	ctx := edgeCtx(t)
	resp, _ := edgeDo(t, ctx, s, http.MethodGet, "/api/v1/namespaces/default/configmaps/slow?timeout=100ms", "", "")
	if resp.StatusCode != http.StatusGatewayTimeout {
		t.Fatalf("slow read: %d", resp.StatusCode)
	}
	evs := stopAndRead(t, s, logPath)
	slow := requestEvents(evs, "get", "configmaps", "slow")
	if got := stages(slow); !slices.Equal(got, []audit.Stage{audit.StageRequestReceived, audit.StageResponseComplete}) {
		t.Fatalf("slow request stages = %v", got)
	}
	st := slow[1].ResponseStatus
	if st.Code != 504 || st.Reason != metav1.StatusReasonTimeout || st.Message != "Timeout: request did not complete within the allotted timeout" {
		t.Errorf("504 responseStatus = %+v", st)
	}
}

// TestAuditWithoutPolicyRecordsNothing: as kube-apiserver, a log path without a policy
// makes the file and records nothing; requests still get their Audit-Id.
func TestAuditWithoutPolicyRecordsNothing(t *testing.T) {
	t.Parallel()
	logPath := filepath.Join(t.TempDir(), "audit.log")
	s := servertest.Start(t, func(c *server.Config) { c.AuditLogPath = logPath })
	ctx := edgeCtx(t)
	resp, _ := edgeDo(t, ctx, s, http.MethodGet, "/api/v1/namespaces", "", "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Audit-Id") == "" {
		t.Fatalf("list: %d, Audit-Id %q", resp.StatusCode, resp.Header.Get("Audit-Id"))
	}
	if evs := stopAndRead(t, s, logPath); len(evs) != 0 {
		t.Fatalf("events without a policy: %+v", evs)
	}
}
