package openapi

// These tests run the real kubectl (1.32, at /usr/bin/kubectl) against a minimal API server
// that serves the documents built here (/openapi/v3 and /openapi/v2) plus legacy
// discovery, and record what kubectl sends: it must find fieldValidation support (and send
// fieldValidation=Strict instead of validating on the client), compute strategic merge
// patches from the v3 document without warnings, not fetch /openapi/v2 for single
// objects, and explain fields from the documents. kubectl_list_test.go covers kind: List,
// which kubectl validates on the client with /openapi/v2.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const kubectlPath = "/usr/bin/kubectl"

type recorded struct {
	method, path, query, contentType, accept string
	body                                     []byte
}

// fakeServer is just enough of an API server for kubectl create, apply and explain.
type fakeServer struct {
	docs      *Documents
	v2        *V2
	resources []Resource

	mu       sync.Mutex
	requests []recorded
	objects  map[string][]byte // object path → JSON
}

func newFakeServer(t *testing.T, resources []Resource) (*fakeServer, *httptest.Server) {
	t.Helper()
	docs, err := Build(resources)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := BuildV2(resources)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{docs: docs, v2: v2, resources: resources, objects: map[string][]byte{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeServer) record(r *http.Request, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, recorded{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), r.Header.Get("Accept"), body})
}

func (f *fakeServer) recorded() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.requests...)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.record(r, body)
	p := r.URL.Path
	switch {
	case p == "/openapi/v3" || strings.HasPrefix(p, "/openapi/v3/"):
		f.docs.ServeHTTP(w, r)
	case p == "/openapi/v2":
		f.v2.ServeHTTP(w, r)
	case p == "/version":
		writeJSON(w, 200, map[string]string{"major": "1", "minor": "32", "gitVersion": "v1.32.0"})
	case p == "/api":
		writeJSON(w, 200, metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"},
			ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host}}})
	case p == "/apis":
		writeJSON(w, 200, f.groups())
	case p == "/api/v1" || (strings.HasPrefix(p, "/apis/") && strings.Count(p, "/") == 3):
		list, ok := f.resourceList(strings.TrimPrefix(strings.TrimPrefix(p, "/api/"), "/apis/"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		writeJSON(w, 200, list)
	case strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/apis/"):
		f.object(w, r, body)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeServer) groups() metav1.APIGroupList {
	list := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	seen := map[string]bool{}
	for _, r := range f.resources {
		if r.GVK.Group == "" || seen[r.GVK.Group] {
			continue
		}
		seen[r.GVK.Group] = true
		gv := metav1.GroupVersionForDiscovery{GroupVersion: r.GVK.GroupVersion().String(), Version: r.GVK.Version}
		list.Groups = append(list.Groups, metav1.APIGroup{Name: r.GVK.Group, Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv})
	}
	sort.Slice(list.Groups, func(i, j int) bool { return list.Groups[i].Name < list.Groups[j].Name })
	return list
}

func (f *fakeServer) resourceList(gv string) (metav1.APIResourceList, bool) {
	list := metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv}
	for _, r := range f.resources {
		if r.GVK.GroupVersion().String() != gv {
			continue
		}
		verbs := r.Verbs
		if verbs == nil {
			verbs = allVerbs()
		}
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name: r.Plural, SingularName: strings.ToLower(r.GVK.Kind), Namespaced: r.Namespaced, Kind: r.GVK.Kind, Verbs: verbs,
		})
		for _, sub := range r.Subresources {
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name: r.Plural + "/" + sub, Namespaced: r.Namespaced, Kind: r.GVK.Kind, Verbs: []string{"get", "patch", "update"},
			})
		}
	}
	return list, len(list.APIResources) > 0
}

// object serves GET, POST and PATCH of stored objects: POST stores the body, PATCH
// returns the stored object unchanged (the tests look at what kubectl sent).
func (f *fakeServer) object(w http.ResponseWriter, r *http.Request, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.Method {
	case http.MethodGet, http.MethodPatch:
		obj, ok := f.objects[r.URL.Path]
		if !ok {
			name := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
			writeJSON(w, 404, metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: "Failure",
				Message: `"` + name + `" not found`, Reason: metav1.StatusReasonNotFound, Code: 404})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(obj)
	case http.MethodPost:
		var m struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(body, &m)
		f.objects[r.URL.Path+"/"+m.Metadata.Name] = body
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(body)
	default:
		http.Error(w, "unsupported", http.StatusMethodNotAllowed)
	}
}

// kubectl runs the real kubectl against srv with an empty home and cache.
func kubectl(t *testing.T, srv *httptest.Server, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(kubectlPath, append([]string{"--server=" + srv.URL, "--cache-dir=" + filepath.Join(dir, "cache")}, args...)...)
	cmd.Env = []string{"HOME=" + dir, "KUBECONFIG=" + filepath.Join(dir, "config"), "PATH=/usr/bin:/bin"}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

func needKubectl(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(kubectlPath); err != nil {
		t.Skipf("real kubectl not available: %v", err)
	}
}

// lastAppliedObject returns obj with kubectl's last-applied annotation set to applied.
func lastAppliedObject(t *testing.T, obj, applied string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(obj), &m); err != nil {
		t.Fatal(err)
	}
	md := m["metadata"].(map[string]any)
	md["annotations"] = map[string]any{"kubectl.kubernetes.io/last-applied-configuration": applied}
	b, _ := json.Marshal(m)
	return b
}

func TestRealKubectl(t *testing.T) {
	needKubectl(t)
	const (
		quota = `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q","namespace":"ns1"},"spec":{"hard":{"pods":"10","requests.cpu":"1"}}}`
		pod   = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns1"},"spec":{"containers":[{"name":"a","image":"a:1"},{"name":"b","image":"b:1"}]}}`
		pod2  = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns1"},"spec":{"containers":[{"name":"a","image":"a:2"},{"name":"c","image":"c:1"}]}}`
		ct    = `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"c","namespace":"ns1"},"spec":{"cronSpec":"* * * * *"}}`
		ct2   = `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"c","namespace":"ns1"},"spec":{"cronSpec":"*/5 * * * *"}}`
	)
	tests := []struct {
		name    string
		stored  map[string][]byte // objects on the server before the command
		stdin   string
		args    []string
		method  string // the write kubectl must send
		path    string
		query   url.Values
		ctype   string
		body    []string // substrings of the write's body
		openapi []string // group-version documents kubectl must fetch with their hash
		// v2 allows a GET /openapi/v2: kubectl apply tries it after the v3 document says a
		// custom resource takes no strategic merge patch (404 is fine, it then merges).
		v2 bool
	}{
		{
			name:    "create quota",
			stdin:   quota,
			args:    []string{"create", "-f", "-"},
			method:  "POST",
			path:    "/api/v1/namespaces/ns1/resourcequotas",
			query:   url.Values{"fieldManager": {"kubectl-create"}, "fieldValidation": {"Strict"}},
			ctype:   "application/json",
			body:    []string{`"requests.cpu":"1"`},
			openapi: []string{"api/v1"},
		},
		{
			name:    "apply pod computes a strategic merge patch from the v3 document",
			stored:  map[string][]byte{"/api/v1/namespaces/ns1/pods/p": lastAppliedObject(t, pod, pod)},
			stdin:   pod2,
			args:    []string{"apply", "-f", "-"},
			method:  "PATCH",
			path:    "/api/v1/namespaces/ns1/pods/p",
			query:   url.Values{"fieldManager": {"kubectl-client-side-apply"}, "fieldValidation": {"Strict"}},
			ctype:   "application/strategic-merge-patch+json",
			body:    []string{`"$setElementOrder/containers":[{"name":"a"},{"name":"c"}]`, `{"$patch":"delete","name":"b"}`},
			openapi: []string{"api/v1"},
		},
		{
			name:    "apply creates a deployment",
			stdin:   `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"ns1"},"spec":{"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"n","image":"nginx"}]}}}}`,
			args:    []string{"apply", "-f", "-"},
			method:  "POST",
			path:    "/apis/apps/v1/namespaces/ns1/deployments",
			query:   url.Values{"fieldManager": {"kubectl-client-side-apply"}, "fieldValidation": {"Strict"}},
			ctype:   "application/json",
			body:    []string{`kubectl.kubernetes.io/last-applied-configuration`},
			openapi: []string{"apis/apps/v1"},
		},
		{
			name:    "create custom resource",
			stdin:   ct,
			args:    []string{"create", "-f", "-"},
			method:  "POST",
			path:    "/apis/stable.example.com/v1/namespaces/ns1/crontabs",
			query:   url.Values{"fieldManager": {"kubectl-create"}, "fieldValidation": {"Strict"}},
			ctype:   "application/json",
			openapi: []string{"apis/stable.example.com/v1"},
		},
		{
			name:    "apply custom resource uses a merge patch",
			stored:  map[string][]byte{"/apis/stable.example.com/v1/namespaces/ns1/crontabs/c": lastAppliedObject(t, ct, ct)},
			stdin:   ct2,
			args:    []string{"apply", "-f", "-"},
			method:  "PATCH",
			path:    "/apis/stable.example.com/v1/namespaces/ns1/crontabs/c",
			query:   url.Values{"fieldManager": {"kubectl-client-side-apply"}, "fieldValidation": {"Strict"}},
			ctype:   "application/merge-patch+json",
			body:    []string{`"cronSpec":"*/5 * * * *"`},
			openapi: []string{"apis/stable.example.com/v1"},
			v2:      true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFakeServer(t, served())
			for p, obj := range tt.stored {
				f.objects[p] = obj
			}
			stdout, stderr, err := kubectl(t, srv, tt.stdin, tt.args...)
			if err != nil {
				t.Fatalf("kubectl %v: %v\nstdout: %s\nstderr: %s", tt.args, err, stdout, stderr)
			}
			if strings.Contains(stderr, "warning") || strings.Contains(stderr, "error") {
				t.Errorf("kubectl stderr: %s", stderr)
			}
			var write *recorded
			fetched := map[string]bool{}
			for _, req := range f.recorded() {
				if req.method == tt.method && req.path == tt.path {
					write = &req
				}
				if strings.HasPrefix(req.path, "/openapi/v2") && !tt.v2 {
					t.Errorf("kubectl fell back to %s", req.path)
				}
				if gv, ok := strings.CutPrefix(req.path, "/openapi/v3/"); ok {
					q, _ := url.ParseQuery(req.query)
					if q.Get("hash") == f.docs.Paths[gv].Hash {
						fetched[gv] = true
					}
				}
			}
			for _, gv := range tt.openapi {
				if !fetched[gv] {
					t.Errorf("kubectl did not fetch /openapi/v3/%s?hash=<current>", gv)
				}
			}
			if write == nil {
				t.Fatalf("no %s %s; requests: %v", tt.method, tt.path, f.recorded())
			}
			q, _ := url.ParseQuery(write.query)
			for k, v := range tt.query {
				if q.Get(k) != v[0] {
					t.Errorf("%s=%q, want %q (query %s)", k, q.Get(k), v[0], write.query)
				}
			}
			if write.contentType != tt.ctype {
				t.Errorf("Content-Type %q, want %q", write.contentType, tt.ctype)
			}
			for _, s := range tt.body {
				if !bytes.Contains(write.body, []byte(s)) {
					t.Errorf("body %s lacks %s", write.body, s)
				}
			}
		})
	}
}

func TestRealKubectlExplain(t *testing.T) {
	needKubectl(t)
	_, srv := newFakeServer(t, served())
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"explain", "resourcequotas"}, []string{
			"KIND:       ResourceQuota\nVERSION:    v1\n",
			"DESCRIPTION:\n    ResourceQuota sets aggregate quota restrictions enforced per namespace",
			"  metadata\t<ObjectMeta>\n",
			"  spec\t<ResourceQuotaSpec>\n",
		}},
		{[]string{"explain", "resourcequotas.spec.hard"}, []string{
			"FIELD: hard <map[string]Quantity>\n",
		}},
		{[]string{"explain", "pods.spec.containers"}, []string{
			"FIELD: containers <[]Container>\n",
			"  name\t<string> -required-\n",
			"  resources\t<ResourceRequirements>\n",
		}},
		{[]string{"explain", "deployments.spec.strategy.rollingUpdate.maxSurge"}, []string{
			"GROUP:      apps\n",
			"FIELD: maxSurge <IntOrString>\n",
		}},
		{[]string{"explain", "crontabs.spec"}, []string{
			"GROUP:      stable.example.com\nKIND:       CronTab\nVERSION:    v1\n",
			"  cronSpec\t<string>\n",
		}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, err := kubectl(t, srv, "", tt.args...)
			if err != nil {
				t.Fatalf("kubectl %v: %v\nstderr: %s", tt.args, err, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("output lacks %q:\n%s", w, stdout)
				}
			}
		})
	}
}
