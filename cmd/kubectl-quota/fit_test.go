package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/quotad/quotad/internal/quota/fit"
)

// cannedReview answers QuotaReviews with canned statuses per object kind, and serves just
// enough discovery for the plugin to find quota.quotad.io/v1 quotareviews. It records the
// reviews it was sent.
type cannedReview struct {
	mu       sync.Mutex
	received []map[string]any
	statuses map[string]fit.QuotaReviewStatus
}

func (c *cannedReview) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/api":
		io.WriteString(w, `{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[]}`)
	case r.Method == http.MethodGet && r.URL.Path == "/api/v1":
		io.WriteString(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[]}`)
	case r.Method == http.MethodGet && r.URL.Path == "/apis":
		io.WriteString(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"quota.quotad.io","versions":[{"groupVersion":"quota.quotad.io/v1","version":"v1"}],"preferredVersion":{"groupVersion":"quota.quotad.io/v1","version":"v1"}}]}`)
	case r.Method == http.MethodGet && r.URL.Path == "/apis/quota.quotad.io/v1":
		io.WriteString(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"quota.quotad.io/v1","resources":[{"name":"quotareviews","singularName":"quotareview","namespaced":true,"kind":"QuotaReview","verbs":["create"]}]}`)
	case r.Method == http.MethodPost && r.URL.Path == "/apis/quota.quotad.io/v1/namespaces/team-a/quotareviews":
		var review map[string]any
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		c.received = append(c.received, review)
		c.mu.Unlock()
		kind, _ := review["spec"].(map[string]any)["object"].(map[string]any)["kind"].(string)
		review["status"] = c.statuses[kind]
		json.NewEncoder(w).Encode(review)
	default:
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
	}
}

func q(s string) resource.Quantity { return resource.MustParse(s) }

func qp(s string) *resource.Quantity { v := resource.MustParse(s); return &v }

func i32(v int32) *int32 { return &v }

// deployNotFitting is what quotad answers for testdata/deploy.yaml's Deployment with 10
// replicas of 50m/32Mi against testdata/fixture.yaml (as testdata/fit.golden, taken against
// the server, shows).
var deployNotFitting = fit.QuotaReviewStatus{
	Operation: "CREATE", Allowed: true, Fits: false, Replicas: 10, ReplicasFit: 2,
	Warnings: []string{"only 2 of 10 replicas fit quota compute: pods: 1 per replica, used 2, limited 4"},
	Quotas: []fit.QuotaFit{
		{Kind: "ResourceQuota", Name: "compute", Enforcement: "Enforce", WarnAt: "80%,requests.memory=50%", Fits: false, ReplicasFit: i32(2), Resources: []fit.ResourceFit{
			{Name: "pods", Used: q("2"), Requested: q("10"), PerReplica: qp("1"), Hard: q("4"), Remaining: q("2"), Fits: false},
			{Name: "requests.cpu", Used: q("850m"), Requested: q("500m"), PerReplica: qp("50m"), Hard: q("1"), Remaining: q("150m"), Fits: false},
			{Name: "requests.memory", Used: q("664Mi"), Requested: q("320Mi"), PerReplica: qp("32Mi"), Hard: q("1Gi"), Remaining: q("360Mi"), Fits: true},
		}},
		{Kind: "ClusterResourceQuota", Name: "team-a", Enforcement: "Audit", Fits: false, ReplicasFit: i32(3), Resources: []fit.ResourceFit{
			{Name: "pods", Used: q("2"), Requested: q("10"), PerReplica: qp("1"), Hard: q("5"), Remaining: q("3"), Fits: false},
			{Name: "requests.cpu", Used: q("850m"), Requested: q("500m"), PerReplica: qp("50m"), Hard: q("2"), Remaining: q("1150m"), Fits: true},
		}},
	},
}

var configMapFits = fit.QuotaReviewStatus{
	Operation: "CREATE", Allowed: true, Fits: true,
	Quotas: []fit.QuotaFit{
		{Kind: "ResourceQuota", Name: "objects", Enforcement: "Enforce", Fits: true, Resources: []fit.ResourceFit{
			{Name: "count/configmaps", Used: q("2"), Requested: q("1"), Hard: q("5"), Remaining: q("3"), Fits: true},
		}},
	},
}

// TestFitCanned drives fit through kubectl's flags against a server answering canned
// reviews: the request it sends, the table and summary, -o yaml, and the exit code.
func TestFitCanned(t *testing.T) {
	c := &cannedReview{statuses: map[string]fit.QuotaReviewStatus{"Deployment": deployNotFitting, "ConfigMap": configMapFits}}
	srv := httptest.NewServer(c)
	defer srv.Close()

	so, se, code := runArgs("fit", "-f", "testdata/deploy.yaml", "--replicas", "10", "-s", srv.URL, "-n", "team-a")
	if code != 1 || se != "" {
		t.Errorf("fit --replicas 10: exit %d, stderr %q", code, se)
	}
	golden(t, "fit_canned.golden", so)

	if len(c.received) != 2 {
		t.Fatalf("%d reviews sent, want 2", len(c.received))
	}
	for i, want := range []string{"Deployment", "ConfigMap"} {
		r := c.received[i]
		spec := r["spec"].(map[string]any)
		obj := spec["object"].(map[string]any)
		if r["apiVersion"] != "quota.quotad.io/v1" || r["kind"] != "QuotaReview" || obj["kind"] != want || spec["replicas"] != float64(10) {
			t.Errorf("review %d: %v", i, r)
		}
	}

	// A namespace other than the objects' is refused before anything is sent, as kubectl's.
	so, se, code = runArgs("fit", "-f", "testdata/deploy.yaml", "-s", srv.URL, "-n", "team-b")
	want := "error: the namespace from the provided object \"team-a\" does not match the namespace \"team-b\". You must pass '--namespace=team-a' to perform this operation.\n"
	if code != 1 || so != "" || se != want {
		t.Errorf("other namespace: exit %d, stdout %q, stderr %q", code, so, se)
	}

	// -o yaml prints the answers; a fitting object exits 0.
	cm := t.TempDir() + "/cm.yaml"
	writeFile(t, cm, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: {}\n")
	so, se, code = runArgs("fit", "-f", cm, "-s", srv.URL, "-n", "team-a", "-o", "yaml")
	if code != 0 || se != "" {
		t.Errorf("fit -o yaml: exit %d, stderr %q", code, se)
	}
	golden(t, "fit_canned_yaml.golden", so)

	// Without a replica count none is sent.
	if spec := c.received[len(c.received)-1]["spec"].(map[string]any); spec["replicas"] != nil {
		t.Errorf("replicas sent without --replicas: %v", spec)
	}
}

// TestFitNotServed: against a server without quota.quotad.io, fit says so.
func TestFitNotServed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api":
			io.WriteString(w, `{"kind":"APIVersions","versions":["v1"]}`)
		case "/api/v1":
			io.WriteString(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[]}`)
		case "/apis":
			io.WriteString(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	so, se, code := runArgs("fit", "-f", "testdata/deploy.yaml", "-s", srv.URL)
	if code != 1 || so != "" || !strings.HasPrefix(se, "error: the server does not serve quota.quotad.io/v1 QuotaReview") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, so, se)
	}
}

func TestSummary(t *testing.T) {
	pod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod"}}
	deploy := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}
	over := fit.ResourceFit{Name: "requests.cpu", Requested: q("2"), Remaining: q("1"), Fits: false}
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		st   fit.QuotaReviewStatus
		want string
	}{
		{"fits", deploy, fit.QuotaReviewStatus{Fits: true, Replicas: 3, ReplicasFit: 3}, "fits"},
		{"a pod over a quota", pod, fit.QuotaReviewStatus{Replicas: 1, Quotas: []fit.QuotaFit{
			{Kind: "ResourceQuota", Name: "compute", Enforcement: "Enforce", Resources: []fit.ResourceFit{over}},
		}}, "does not fit; refused by quota compute: requests.cpu (requested 2, remaining 1)"},
		{"replicas over a Warn quota", deploy, fit.QuotaReviewStatus{Allowed: true, Replicas: 10, ReplicasFit: 10, Quotas: []fit.QuotaFit{
			{Kind: "ResourceQuota", Name: "soft", Enforcement: "Warn", Resources: []fit.ResourceFit{over}},
		}}, "does not fit; over quota soft (Warn: admitted): requests.cpu (requested 2, remaining 1)"},
		{"refused by a constraint", pod, fit.QuotaReviewStatus{Reason: "failed quota: compute: must specify limits.cpu for: a", Replicas: 1, Quotas: []fit.QuotaFit{
			{Kind: "ResourceQuota", Name: "compute", Enforcement: "Enforce", Fits: true},
		}}, "does not fit; refused: failed quota: compute: must specify limits.cpu for: a"},
		{"replicas over a cluster quota", deploy, fit.QuotaReviewStatus{Allowed: true, Replicas: 5, ReplicasFit: 0, Quotas: []fit.QuotaFit{
			{Kind: "ClusterResourceQuota", Name: "team-a", Enforcement: "Enforce", Resources: []fit.ResourceFit{over}},
		}}, "only 0 of 5 replicas fit; refused by cluster quota team-a: requests.cpu (requested 2, remaining 1)"},
	} {
		if got := summary(tc.obj, tc.st); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
