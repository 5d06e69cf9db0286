package e2e

import (
	"bufio"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

const appConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  labels:
    tier: web
data:
  color: blue
`

const configMapList = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: first
  data:
    n: "1"
- apiVersion: v1
  kind: Secret
  metadata:
    name: second
  stringData:
    token: abc
`

// expectOut runs kubectl with stdin and compares its stdout with want exactly.
func (c *cluster) expectOut(stdin, want string, args ...string) {
	c.t.Helper()
	r := c.kubectlIn(stdin, args...)
	if r.code != 0 || r.stdout != want {
		c.t.Errorf("kubectl %s: exit %d\n got %q\nwant %q\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, want, r.stderr)
	}
}

// TestAPICreateApplyGetPatchDelete drives the object verbs through kubectl.
func TestAPICreateApplyGetPatchDelete(t *testing.T) {
	t.Parallel()
	c := start(t)
	c.expectOut("", "namespace/shop created\n", "create", "namespace", "shop")

	// create -f: one object, then a kind: List.
	c.expectOut(appConfigMap, "configmap/app created\n", "create", "-n", "shop", "-f", "-")
	r := c.kubectlIn(appConfigMap, "create", "-n", "shop", "-f", "-")
	if want := "Error from server (AlreadyExists): error when creating \"STDIN\": configmaps \"app\" already exists\n"; r.code == 0 || r.stderr != want {
		t.Errorf("second create: exit %d\n got %q\nwant %q", r.code, r.stderr, want)
	}
	c.expectOut(configMapList, "configmap/first created\nsecret/second created\n", "create", "-n", "shop", "-f", "-")

	// apply twice: created, then unchanged; a change is configured.
	applied := strings.Replace(appConfigMap, "name: app", "name: applied", 1)
	c.expectOut(applied, "configmap/applied created\n", "apply", "-n", "shop", "-f", "-")
	c.expectOut(applied, "configmap/applied unchanged\n", "apply", "-n", "shop", "-f", "-")
	c.expectOut(strings.Replace(applied, "color: blue", "color: red", 1), "configmap/applied configured\n", "apply", "-n", "shop", "-f", "-")
	c.expectOut(configMapList, "configmap/first configured\nsecret/second configured\n", "apply", "-n", "shop", "-f", "-")
	// A Secret written with stringData is "configured" at every apply, as upstream
	// (kubernetes/kubernetes#87736): stringData is folded into data and never returned, so
	// kubectl's three-way patch always adds it back.
	c.expectOut(configMapList, "configmap/first unchanged\nsecret/second configured\n", "apply", "-n", "shop", "-f", "-")
	// Server-side apply of the values client-side apply last set (no field conflict upstream).
	c.expectOut(strings.Replace(applied, "color: blue", "color: red", 1), "configmap/applied serverside-applied\n", "apply", "--server-side", "-n", "shop", "-f", "-")

	// get: table, wide, -o yaml, -o json, -A, a label selector, a missing name.
	golden(t, "api-get-configmaps.txt", normalizeTable(c.must("get", "configmaps", "-n", "shop")))
	golden(t, "api-get-configmap-yaml.txt", normalizeObject(c.must("get", "configmap", "applied", "-n", "shop", "-o", "yaml")))
	golden(t, "api-get-configmap-json.txt", normalizeObject(c.must("get", "configmap", "app", "-n", "shop", "-o", "json")))
	golden(t, "api-get-configmaps-all.txt", normalizeTable(c.must("get", "configmaps", "-A", "--field-selector", "metadata.name!=kube-root-ca.crt")))
	golden(t, "api-get-selector.txt", normalizeTable(c.must("get", "configmaps", "-n", "shop", "-l", "tier=web", "--show-labels")))
	golden(t, "api-get-namespaces.txt", normalizeTable(c.must("get", "namespaces")))
	r = c.kubectl("get", "configmap", "missing", "-n", "shop")
	if want := "Error from server (NotFound): configmaps \"missing\" not found\n"; r.code == 0 || r.stderr != want {
		t.Errorf("get missing: exit %d %q", r.code, r.stderr)
	}
	r = c.kubectl("get", "configmaps", "-n", "nowhere")
	if r.code != 0 || r.stderr != "No resources found in nowhere namespace.\n" {
		t.Errorf("get in a missing namespace: exit %d %q %q", r.code, r.stdout, r.stderr)
	}

	// describe.
	golden(t, "api-describe-configmap.txt", c.must("describe", "configmap", "app", "-n", "shop"))
	golden(t, "api-describe-namespace.txt", c.must("describe", "namespace", "shop"))

	// patch: merge, JSON, strategic, then no change.
	c.expectOut("", "configmap/app patched\n", "patch", "configmap", "app", "-n", "shop", "--type=merge", "-p", `{"data":{"size":"L"}}`)
	c.expectOut("", "configmap/app patched\n", "patch", "configmap", "app", "-n", "shop", "--type=json", "-p", `[{"op":"remove","path":"/data/color"}]`)
	c.expectOut("", "configmap/app patched\n", "patch", "configmap", "app", "-n", "shop", "-p", `{"metadata":{"labels":{"patched":"yes"}}}`)
	c.expectOut("", "configmap/app patched (no change)\n", "patch", "configmap", "app", "-n", "shop", "-p", `{"metadata":{"labels":{"patched":"yes"}}}`)
	c.expectOut("", "size: L\n", "get", "configmap", "app", "-n", "shop", "-o", "go-template={{range $k, $v := .data}}{{$k}}: {{$v}}{{\"\\n\"}}{{end}}")
	r = c.kubectl("patch", "configmap", "app", "-n", "shop", "--type=json", "-p", `[{"op":"test","path":"/data/size","value":"S"}]`)
	if r.code == 0 || r.stderr != "The request is invalid: the server rejected our request due to an error in our request\n" {
		t.Errorf("failing JSON patch: exit %d %q", r.code, r.stderr)
	}

	// delete: one object, by label, a missing one.
	c.expectOut("", "configmap \"app\" deleted\n", "delete", "configmap", "app", "-n", "shop")
	c.expectOut("", "configmap \"applied\" deleted\n", "delete", "configmaps", "-n", "shop", "-l", "tier=web")
	r = c.kubectl("delete", "configmap", "app", "-n", "shop")
	if want := "Error from server (NotFound): configmaps \"app\" not found\n"; r.code == 0 || r.stderr != want {
		t.Errorf("delete missing: exit %d %q", r.code, r.stderr)
	}
	c.expectOut(configMapList, "configmap \"first\" deleted\nsecret \"second\" deleted\n", "delete", "-n", "shop", "-f", "-")
}

// TestAPIGetWatch runs kubectl get quota -A -w in the background and reads its rows as
// quotas are created.
func TestAPIGetWatch(t *testing.T) {
	t.Parallel()
	c := start(t)
	c.must("create", "namespace", "watched")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlPath, "get", "quota", "-A", "-w")
	cmd.Env = c.env()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	readUntil := func(substr string) []string {
		t.Helper()
		var seen []string
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("kubectl get -w ended before %q: %v\nstderr: %s", substr, seen, stderr.String())
				}
				seen = append(seen, l)
				if strings.Contains(l, substr) {
					return seen
				}
			case <-ctx.Done():
				t.Fatalf("no line with %q within the deadline: %v", substr, seen)
			}
		}
	}
	// An empty list prints nothing on stdout; the first quota prints the header and its row.
	c.must("create", "quota", "first", "-n", "watched", "--hard=pods=10,services=5")
	seen := readUntil("first")
	c.must("create", "quota", "second", "-n", "default", "--hard=pods=2")
	seen = append(seen, readUntil("second")...)
	c.must("delete", "quota", "first", "-n", "watched")
	seen = append(seen, readUntil("first")...)
	golden(t, "api-get-watch.txt", normalizeTable(strings.Join(seen, "\n")+"\n"))
}

// TestAPINamespaceLifecycle creates a namespace with contents and deletes it.
func TestAPINamespaceLifecycle(t *testing.T) {
	t.Parallel()
	c := start(t)
	c.expectOut("", "namespace/tmp created\n", "create", "namespace", "tmp")
	c.expectOut(appConfigMap, "configmap/app created\n", "create", "-n", "tmp", "-f", "-")
	c.expectOut("", "resourcequota/q created\n", "create", "quota", "q", "-n", "tmp", "--hard=configmaps=10")
	c.expectOut("", "namespace \"tmp\" deleted\n", "delete", "namespace", "tmp")
	r := c.kubectl("get", "namespace", "tmp")
	if want := "Error from server (NotFound): namespaces \"tmp\" not found\n"; r.code == 0 || r.stderr != want {
		t.Errorf("namespace after delete: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = c.kubectl("get", "configmaps,quota", "-n", "tmp")
	if r.code != 0 || r.stdout != "" || r.stderr != "No resources found in tmp namespace.\n" {
		t.Errorf("contents after namespace delete: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	// A re-created namespace starts empty.
	c.must("create", "namespace", "tmp")
	r = c.kubectl("get", "configmaps", "-n", "tmp", "--field-selector", "metadata.name!=kube-root-ca.crt")
	if r.code != 0 || r.stdout != "" {
		t.Errorf("re-created namespace: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = c.kubectl("delete", "namespace", "default")
	if want := "Error from server (Forbidden): namespaces \"default\" is forbidden: this namespace may not be deleted\n"; r.code == 0 || r.stderr != want {
		t.Errorf("delete default: exit %d %q", r.code, r.stderr)
	}
}

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names:
    kind: Widget
    listKind: WidgetList
    plural: widgets
    singular: widget
    shortNames: [wd]
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - name: Size
      type: integer
      jsonPath: .spec.size
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              color: {type: string}
          status:
            type: object
            properties:
              phase: {type: string}
    subresources:
      status: {}
`

const widget = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
spec:
  size: 3
  color: red
`

// TestAPICustomResources creates a CRD with kubectl, uses its resources, and deletes both.
func TestAPICustomResources(t *testing.T) {
	t.Parallel()
	c := start(t)
	c.expectOut(widgetCRD, "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created\n", "create", "-f", "-")
	c.expectOut(widget, "widget.example.com/w1 created\n", "create", "-f", "-")
	c.expectOut(strings.Replace(widget, "w1", "w2", 1), "widget.example.com/w2 created\n", "apply", "-f", "-")
	c.expectOut(strings.Replace(widget, "w1", "w2", 1), "widget.example.com/w2 unchanged\n", "apply", "-f", "-")
	golden(t, "api-get-widgets.txt", normalizeTable(c.must("get", "widgets")))
	golden(t, "api-get-wd-yaml.txt", normalizeObject(c.must("get", "wd", "w1", "-o", "yaml")))
	golden(t, "api-get-crd.txt", normalizeObject(normalizeTable(c.must("get", "crd"))))
	c.expectOut("", "widget.example.com/w1 patched\n", "patch", "widget", "w1", "--type=merge", "-p", `{"spec":{"size":5}}`)
	c.expectOut("", "5\n", "get", "widget", "w1", "-o", "jsonpath={.spec.size}{\"\\n\"}")
	c.expectOut("", "widget.example.com \"w1\" deleted\n", "delete", "widget", "w1")
	c.expectOut("", "customresourcedefinition.apiextensions.k8s.io \"widgets.example.com\" deleted\n", "delete", "crd", "widgets.example.com")
	// A fresh discovery cache: kubectl's cached one still lists widgets.
	r := c.kubectl("get", "widgets", "--cache-dir", t.TempDir())
	if want := "error: the server doesn't have a resource type \"widgets\"\n"; r.code == 0 || r.stderr != want {
		t.Errorf("get widgets after the CRD is gone: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	// Re-created, the CRD serves no old objects.
	r = c.kubectlIn(widgetCRD, "create", "-f", "-")
	if r.code != 0 {
		t.Fatalf("re-create CRD: %s", r.stderr)
	}
	r = c.kubectl("get", "widgets", "-A")
	if r.code != 0 || r.stdout != "" || r.stderr != "No resources found\n" {
		t.Errorf("widgets after re-creating the CRD: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}
