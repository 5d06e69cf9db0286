package openapi

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
)

// TestRealKubectlList runs kubectl create -f on kind: List documents. kubectl cannot ask
// the server to validate a List (it has no fieldValidation support for v1/List), so it
// validates every item on the client against /openapi/v2 (fetched as protobuf), refuses
// the whole file on an unknown field or a missing required one, and otherwise POSTs each
// item.
func TestRealKubectlList(t *testing.T) {
	needKubectl(t)
	const (
		priorityClasses = `apiVersion: v1
kind: List
items:
- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, value: 1000000}
- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: medium}, value: 1000}
- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: low}, value: 10}
`
		quotaItem = `- apiVersion: v1
  kind: ResourceQuota
  metadata:
    name: pods-%s
  spec:
    hard:
      cpu: "1000"
      memory: 200Gi
      pods: "10"
    scopeSelector:
      matchExpressions:
      - operator : In
        scopeName: PriorityClass
        values: ["%s"]
`
	)
	quotas := "apiVersion: v1\nkind: List\nitems:\n" +
		strings.NewReplacer("%s", "high").Replace(quotaItem) +
		strings.NewReplacer("%s", "medium").Replace(quotaItem) +
		strings.NewReplacer("%s", "low").Replace(quotaItem)
	const pcPath = "/apis/scheduling.k8s.io/v1/priorityclasses"
	tests := []struct {
		name   string
		stdin  string
		args   []string
		stdout string
		stderr string // exact; empty means none
		posts  []string
		v2     bool // kubectl must fetch /openapi/v2 as protobuf
	}{
		{
			name:  "priority classes",
			stdin: priorityClasses,
			stdout: "priorityclass.scheduling.k8s.io/high created\n" +
				"priorityclass.scheduling.k8s.io/medium created\n" +
				"priorityclass.scheduling.k8s.io/low created\n",
			posts: []string{pcPath, pcPath, pcPath},
			v2:    true,
		},
		{
			name:   "resource quotas in the default namespace",
			stdin:  quotas,
			stdout: "resourcequota/pods-high created\nresourcequota/pods-medium created\nresourcequota/pods-low created\n",
			posts: []string{"/api/v1/namespaces/default/resourcequotas", "/api/v1/namespaces/default/resourcequotas",
				"/api/v1/namespaces/default/resourcequotas"},
			v2: true,
		},
		{
			name:   "resource quotas in a namespace",
			stdin:  quotas,
			args:   []string{"-n", "ns1"},
			stdout: "resourcequota/pods-high created\nresourcequota/pods-medium created\nresourcequota/pods-low created\n",
			posts: []string{"/api/v1/namespaces/ns1/resourcequotas", "/api/v1/namespaces/ns1/resourcequotas",
				"/api/v1/namespaces/ns1/resourcequotas"},
			v2: true,
		},
		{
			name: "mixed kinds with a custom resource",
			stdin: `apiVersion: v1
kind: List
items:
- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, value: 1000000, preemptionPolicy: Never}
- {apiVersion: v1, kind: LimitRange, metadata: {name: l, namespace: ns1}, spec: {limits: [{type: Container, default: {cpu: 1}}]}}
- {apiVersion: stable.example.com/v1, kind: CronTab, metadata: {name: c, namespace: ns1}, spec: {cronSpec: "* * * * *", size: 3}}
`,
			stdout: "priorityclass.scheduling.k8s.io/high created\nlimitrange/l created\ncrontab.stable.example.com/c created\n",
			posts:  []string{pcPath, "/api/v1/namespaces/ns1/limitranges", "/apis/stable.example.com/v1/namespaces/ns1/crontabs"},
			v2:     true,
		},
		{
			name: "unknown field is refused on the client",
			stdin: `apiVersion: v1
kind: List
items:
- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, value: 1000000}
- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: medium}, valeu: 1000}
`,
			stderr: `error: error validating "STDIN": error validating data: ValidationError(PriorityClass): unknown field "valeu" in io.k8s.api.scheduling.v1.PriorityClass; if you choose to ignore these errors, turn validation off with --validate=false` + "\n",
			v2:     true,
		},
		{
			name: "every error of every item",
			stdin: `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: ResourceQuota, metadata: {name: q}, spec: {hrad: {pods: "1"}}}
- {apiVersion: v1, kind: ResourceQuota, metadata: {name: r}, spec: {scopeSelector: {matchExpressions: [{scopeName: PriorityClass}]}}}
- {apiVersion: stable.example.com/v1, kind: CronTab, metadata: {name: c}, spec: {image: x}}
`,
			stderr: `error: error validating "STDIN": error validating data: [ValidationError(ResourceQuota.spec): unknown field "hrad" in io.k8s.api.core.v1.ResourceQuotaSpec, ` +
				`ValidationError(ResourceQuota.spec.scopeSelector.matchExpressions[0]): missing required field "operator" in io.k8s.api.core.v1.ScopedResourceSelectorRequirement, ` +
				`ValidationError(CronTab.spec): unknown field "image" in com.example.stable.v1.CronTab.spec]; if you choose to ignore these errors, turn validation off with --validate=false` + "\n",
			v2: true,
		},
		{
			name: "validation off",
			stdin: `apiVersion: v1
kind: List
items:
- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: medium}, valeu: 1000}
`,
			args:   []string{"--validate=false"},
			stdout: "priorityclass.scheduling.k8s.io/medium created\n",
			posts:  []string{pcPath},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFakeServer(t, served())
			stdout, stderr, err := kubectl(t, srv, tt.stdin, append([]string{"create", "-f", "-"}, tt.args...)...)
			if (err != nil) != (tt.stderr != "") {
				t.Fatalf("kubectl: %v\nstdout: %s\nstderr: %s", err, stdout, stderr)
			}
			if stdout != tt.stdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, tt.stdout)
			}
			if stderr != tt.stderr {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr, tt.stderr)
			}
			var posts []string
			fetchedV2 := false
			for _, req := range f.recorded() {
				switch {
				case req.method == "POST":
					posts = append(posts, req.path)
					q, _ := url.ParseQuery(req.query)
					want := "Strict"
					if strings.Contains(strings.Join(tt.args, " "), "--validate=false") {
						want = "Ignore"
					}
					if got := q.Get("fieldValidation"); got != want {
						t.Errorf("POST %s: fieldValidation=%q, want %q", req.path, got, want)
					}
					if !bytes.HasPrefix(req.body, []byte("{")) {
						t.Errorf("POST %s: body %s", req.path, req.body)
					}
				case req.path == "/openapi/v2":
					fetchedV2 = true
					if req.accept != ProtoV2MediaType {
						t.Errorf("GET /openapi/v2 with Accept %q", req.accept)
					}
				}
			}
			if strings.Join(posts, ",") != strings.Join(tt.posts, ",") {
				t.Errorf("POSTs %v, want %v", posts, tt.posts)
			}
			if fetchedV2 != tt.v2 {
				t.Errorf("fetched /openapi/v2: %t, want %t", fetchedV2, tt.v2)
			}
		})
	}
}
