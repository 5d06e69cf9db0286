package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// examples are the manifests of the ResourceQuota documentation walkthroughs.
var examples = filepath.Join("testdata", "examples")

func example(name string) string { return filepath.Join(examples, name) }

// TestComputeAndObjectCountQuotas is walkthrough 1 of the documentation.
func TestComputeAndObjectCountQuotas(t *testing.T) {
	t.Parallel()
	c := start(t)
	if got := c.must("create", "namespace", "myspace"); got != "namespace/myspace created\n" {
		t.Errorf("create namespace printed %q", got)
	}
	if got := c.must("create", "-f", example("compute-resources.yaml"), "--namespace=myspace"); got != "resourcequota/compute-resources created\n" {
		t.Errorf("create -f printed %q", got)
	}
	c.must("create", "-f", example("object-counts.yaml"), "--namespace=myspace")
	golden(t, "walkthrough1-get-quota.txt", normalizeTable(c.must("get", "quota", "--namespace=myspace")))
	golden(t, "walkthrough1-describe-compute.txt", c.must("describe", "quota", "compute-resources", "--namespace=myspace"))
	golden(t, "walkthrough1-describe-object-counts.txt", c.must("describe", "quota", "object-counts", "--namespace=myspace"))
}

// TestPriorityClassQuotas is walkthrough 2: quotas per priority class.
func TestPriorityClassQuotas(t *testing.T) {
	t.Parallel()
	c := start(t)
	c.must("create", "-f", example("priority-classes.yaml"))
	c.must("create", "-f", example("priority-quotas.yaml"))
	c.must("create", "-f", example("high-priority-pod.yaml"))
	golden(t, "walkthrough2-describe-quota.txt", c.must("describe", "quota"))
}

// TestCrossNamespaceAffinityQuota is walkthrough 4 with a quota in the namespace.
func TestCrossNamespaceAffinityQuota(t *testing.T) {
	t.Parallel()
	c := start(t)
	c.must("create", "-f", example("disable-cross-namespace-affinity.yaml"))
	affinityPod := `apiVersion: v1
kind: Pod
metadata:
  name: affinity
spec:
  affinity:
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: web}}
        namespaces: ["other"]
        topologyKey: kubernetes.io/hostname
  containers:
  - name: c
    image: nginx
`
	r := c.kubectlIn(affinityPod, "create", "-f", "-")
	want := `Error from server (Forbidden): error when creating "STDIN": pods "affinity" is forbidden: exceeded quota: disable-cross-namespace-affinity, requested: pods=1, used: pods=0, limited: pods=0` + "\n"
	if r.code == 0 || r.stderr != want {
		t.Errorf("cross-namespace pod: exit %d\n got %q\nwant %q", r.code, r.stderr, want)
	}
	plain := strings.Replace(affinityPod, "        namespaces: [\"other\"]\n", "", 1)
	plain = strings.Replace(plain, "name: affinity", "name: plain", 1)
	if r := c.kubectlIn(plain, "create", "-f", "-"); r.code != 0 || r.stdout != "pod/plain created\n" {
		t.Errorf("plain pod: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// TestCrossNamespaceAffinityLimitedByDefault is walkthrough 4 with the admission configuration.
func TestCrossNamespaceAffinityLimitedByDefault(t *testing.T) {
	t.Parallel()
	cfg, err := filepath.Abs(example("admission-config-cross-namespace.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c := start(t, "--admission-control-config-file", cfg)
	pod := `apiVersion: v1
kind: Pod
metadata:
  name: affinity
spec:
  affinity:
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 1
        podAffinityTerm:
          labelSelector: {matchLabels: {app: web}}
          namespaceSelector: {}
          topologyKey: kubernetes.io/hostname
  containers:
  - name: c
    image: nginx
`
	r := c.kubectlIn(pod, "create", "-f", "-")
	want := `Error from server: error when creating "STDIN": insufficient quota to match these scopes: [{CrossNamespacePodAffinity Exists []}]` + "\n"
	if r.code == 0 || r.stderr != want {
		t.Errorf("exit %d\n got %q\nwant %q", r.code, r.stderr, want)
	}
}

// TestClusterServicesPriorityLimited is walkthrough 5.
func TestClusterServicesPriorityLimited(t *testing.T) {
	t.Parallel()
	cfg, err := filepath.Abs(example("admission-config-cluster-services.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c := start(t, "--admission-control-config-file", cfg)
	c.must("create", "priorityclass", "cluster-services", "--value=1000")
	c.must("create", "-f", example("pods-cluster-services-quota.yaml"), "-n", "kube-system")
	pod := `apiVersion: v1
kind: Pod
metadata:
  name: critical
spec:
  priorityClassName: cluster-services
  containers:
  - name: c
    image: nginx
`
	if r := c.kubectlIn(pod, "create", "-n", "kube-system", "-f", "-"); r.code != 0 {
		t.Errorf("kube-system: exit %d %s", r.code, r.stderr)
	}
	r := c.kubectlIn(pod, "create", "-n", "default", "-f", "-")
	want := `Error from server: error when creating "STDIN": insufficient quota to match these scopes: [{PriorityClass In [cluster-services]}]` + "\n"
	if r.code == 0 || r.stderr != want {
		t.Errorf("default: exit %d\n got %q\nwant %q", r.code, r.stderr, want)
	}
	golden(t, "walkthrough5-describe-quota.txt", c.must("describe", "quota", "-n", "kube-system"))
}

// TestSeedCrossNamespaceAffinityManifestRefused: the seed's misspelt scope is refused as upstream.
func TestSeedCrossNamespaceAffinityManifestRefused(t *testing.T) {
	t.Parallel()
	c := start(t)
	seed := `apiVersion: v1
kind: ResourceQuota
metadata:
  name: disable-cross-namespace-affinity
  namespace: foo-ns
spec:
  hard:
    pods: "0"
  scopeSelector:
    matchExpressions:
    - scopeName: CrossNamespaceAffinity
`
	c.must("create", "namespace", "foo-ns")
	r := c.kubectlIn(seed, "create", "-f", "-")
	golden(t, "seed-cross-namespace-refused.txt", r.stderr)
	if r.code == 0 {
		t.Error("the seed's manifest was accepted")
	}
}
