package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quotad/quotad/internal/auth"
)

type bufCloser struct{ bytes.Buffer }

func (*bufCloser) Close() error { return nil }

// record runs one request through an Auditor whose policy is policy and returns the
// events written.
func record(t *testing.T, policy string, r *http.Request, attrs auth.Attributes, serve func(ctx context.Context, a *Request)) []Event {
	t.Helper()
	p, err := ParsePolicy([]byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	out := &bufCloser{}
	b := NewBackend(out, ModeBlocking, 0, nil)
	now := time.Now()
	a := NewAuditor(NewChecker(p), b).Start(r, "id-1", now, now.Add(time.Minute), attrs, &ObjectReference{Resource: attrs.Resource, Namespace: attrs.Namespace}, false)
	if a != nil {
		if !a.Received() {
			t.Fatal("RequestReceived not stored")
		}
		serve(WithRequest(r.Context(), a), a)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	var evs []Event
	sc := bufio.NewScanner(&out.Buffer)
	for sc.Scan() {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func TestRequestEvent(t *testing.T) {
	const policy = "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitManagedFields: true\nomitStages: [RequestReceived]\nrules:\n- level: RequestResponse\n"
	body := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  uid: u-1\n  managedFields:\n  - manager: kubectl\ndata:\n  k: v\n"
	r := httptest.NewRequest(http.MethodPut, "/api/v1/namespaces/ns/configmaps/cm?fieldManager=x", strings.NewReader(body))
	r.Header.Set("User-Agent", strings.Repeat("a", 2000))
	r.Header.Set("X-Forwarded-For", "10.0.0.1")
	attrs := auth.Attributes{User: auth.User{Name: "alice", UID: "1", Groups: []string{"team-a"}, Extra: map[string][]string{"scopes": {"x"}}},
		Verb: "update", ResourceRequest: true, Namespace: "ns", Resource: "configmaps"}
	evs := record(t, policy, r, attrs, func(ctx context.Context, a *Request) {
		if !a.CapturesRequestBody() {
			t.Error("a PUT at RequestResponse does not capture its body")
		}
		a.RequestBody([]byte(body))
		a.RequestObjectMeta("other", "cm", "u-1", "7") // the path's namespace stays
		Annotate(ctx, AnnotationDecision, "allow")
		Annotate(ctx, AnnotationDecision, "forbid") // the first value stays
		Annotate(ctx, AnnotationReason, `RBAC: allowed by RoleBinding "admin/ns"`)
		SetImpersonatedUser(ctx, auth.User{Name: "bob", Groups: []string{"team-b"}})
		a.ResponseStarted(http.StatusOK)
		a.ResponseBody([]byte(`{"kind":"ConfigMapList","items":[{"metadata":{"name":"a","managedFields":[{"manager":"m"}]}}]}`))
		a.Complete(nil)
	})
	if len(evs) != 1 || evs[0].Stage != StageResponseComplete {
		t.Fatalf("events = %+v", evs)
	}
	ev := evs[0]
	if ua := ev.UserAgent; len(ua) != 1024+len("...TRUNCATED") || !strings.HasSuffix(ua, "...TRUNCATED") {
		t.Errorf("userAgent (%d) = %q", len(ua), ua)
	}
	if len(ev.SourceIPs) != 2 || ev.SourceIPs[0] != "10.0.0.1" {
		t.Errorf("sourceIPs = %v", ev.SourceIPs)
	}
	if ev.User.Username != "alice" || ev.User.UID != "1" || ev.User.Extra["scopes"][0] != "x" {
		t.Errorf("user = %+v", ev.User)
	}
	if ev.ImpersonatedUser == nil || ev.ImpersonatedUser.Username != "bob" {
		t.Errorf("impersonatedUser = %+v", ev.ImpersonatedUser)
	}
	if ev.Annotations[AnnotationDecision] != "allow" || ev.Annotations[AnnotationReason] == "" {
		t.Errorf("annotations = %v", ev.Annotations)
	}
	if ev.ObjectRef.Name != "cm" || ev.ObjectRef.UID != "u-1" || ev.ObjectRef.Namespace != "ns" || ev.ObjectRef.ResourceVersion != "7" || ev.RequestURI != "/api/v1/namespaces/ns/configmaps/cm?fieldManager=x" {
		t.Errorf("objectRef = %+v, uri %q", ev.ObjectRef, ev.RequestURI)
	}
	if got := string(ev.RequestObject); strings.Contains(got, "managedFields") || !strings.Contains(got, `"k":"v"`) {
		t.Errorf("requestObject (YAML sent) = %s", got)
	}
	if got := string(ev.ResponseObject); strings.Contains(got, "managedFields") || !strings.Contains(got, `"name":"a"`) {
		t.Errorf("responseObject = %s", got)
	}
}

func TestRequestNone(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/healthz", nil)
	evs := record(t, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  nonResourceURLs: [/healthz]\n- level: Metadata\n",
		r, auth.Attributes{Verb: "get", Path: "/healthz"}, func(context.Context, *Request) { t.Fatal("a request at None is audited") })
	if len(evs) != 0 {
		t.Fatalf("events = %+v", evs)
	}
	if From(r.Context()) != nil {
		t.Fatal("a request's context without audit has one")
	}
	Annotate(r.Context(), "k", "v") // no audit: nothing happens
}

func TestRequestClosedEarly(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/api/v1/pods?watch=1", nil)
	p, _ := ParsePolicy([]byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"))
	out := &bufCloser{}
	b := NewBackend(out, ModeBlocking, 0, nil)
	now := time.Now()
	a := NewAuditor(NewChecker(p), b).Start(r, "w", now, now.Add(time.Minute), auth.Attributes{Verb: "watch", ResourceRequest: true, Resource: "pods"}, nil, true)
	a.Received()
	a.Complete(nil) // a watch that never wrote its header
	b.Close()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], `"stage":"ResponseStarted"`) ||
		!strings.Contains(lines[2], `"responseStatus":{"metadata":{},"status":"Success","message":"Connection closed early","code":200}`) {
		t.Fatalf("events:\n%s", out.String())
	}
}
