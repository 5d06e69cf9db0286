package main

import (
	"bytes"
	"context"
	"flag"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/quotad/quotad/internal/quota/quotatest"
	"github.com/quotad/quotad/internal/server/servertest"
)

// update is the -update flag quotatest.GoldenFile reads.
var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	quotatest.GoldenFile(t, name, got)
}

// applyFixture creates every object of testdata/fixture.yaml, then lowers the hard of
// quota best-effort below its usage (allowed, as upstream), so top shows a quota over 100%.
func applyFixture(t *testing.T, s *servertest.Server) {
	t.Helper()
	ctx := context.Background()
	objs, err := readObjects("testdata/fixture.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := restmapper.GetAPIGroupResources(s.Client.Discovery())
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s: %v", objectRef(o), err)
		}
		if _, err := s.Dynamic.Resource(m.Resource).Namespace(o.GetNamespace()).Create(ctx, o, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating %s: %v", objectRef(o), err)
		}
	}
	rq, err := s.Client.CoreV1().ResourceQuotas("team-a").Get(ctx, "best-effort", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q := rq.Spec.Hard["pods"]
	q.Set(1)
	rq.Spec.Hard["pods"] = q
	if _, err := s.Client.CoreV1().ResourceQuotas("team-a").Update(ctx, rq, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// kubeconfig writes a kubeconfig for s, as quotad's admin kubeconfig, into a temp dir.
func kubeconfig(t *testing.T, s *servertest.Server) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["quotad"] = &clientcmdapi.Cluster{Server: s.Config.Host, CertificateAuthorityData: s.Config.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: s.Config.BearerToken}
	cfg.Contexts["quotad"] = &clientcmdapi.Context{Cluster: "quotad", AuthInfo: "admin", Namespace: "default"}
	cfg.CurrentContext = "quotad"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// squeeze collapses runs of spaces, so tables compare independently of column widths.
func squeeze(s string) string { return spacesRE.ReplaceAllString(s, " ") }

var spacesRE = regexp.MustCompile(` +`)

// runArgs runs the plugin as kubectl would, returning stdout, stderr and the exit code.
func runArgs(args ...string) (string, string, int) {
	var out, errOut bytes.Buffer
	code := run(args, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return out.String(), errOut.String(), code
}

// TestAgainstServer runs every command against a real quotad (in process, on embedded
// etcd) holding testdata/fixture.yaml, and pins their output.
func TestAgainstServer(t *testing.T) {
	s := servertest.Start(t)
	applyFixture(t, s)
	ctx := context.Background()
	kc := kubeconfig(t, s)

	t.Run("top", func(t *testing.T) {
		var out, errOut bytes.Buffer
		if err := runTop(ctx, s.Config, "team-a", &out, &errOut); err != nil {
			t.Fatal(err)
		}
		if errOut.Len() != 0 {
			t.Errorf("stderr: %q", errOut.String())
		}
		golden(t, "top.golden", out.String())

		// The same through kubectl's flags and a kubeconfig.
		so, se, code := runArgs("top", "--kubeconfig", kc, "-n", "team-a")
		if code != 0 || se != "" || so != out.String() {
			t.Errorf("kubectl quota top -n team-a: exit %d, stderr %q, stdout:\n%s", code, se, so)
		}
	})

	t.Run("top -A", func(t *testing.T) {
		so, se, code := runArgs("top", "-A", "--kubeconfig", kc)
		if code != 0 || se != "" {
			t.Fatalf("exit %d, stderr %q", code, se)
		}
		golden(t, "top_all.golden", so)
	})

	t.Run("top without quotas", func(t *testing.T) {
		so, se, code := runArgs("top", "--kubeconfig", kc)
		if code != 0 || so != "" || se != "No resources found in default namespace.\n" {
			t.Errorf("exit %d, stdout %q, stderr %q", code, so, se)
		}
	})

	t.Run("top for a tenant who may not read cluster quotas", func(t *testing.T) {
		// alice may read the namespace's pods and quotas only: the cluster quota's applied
		// view is left out, without an error.
		role := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "quota-reader", Namespace: "team-a"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods", "resourcequotas"}, Verbs: []string{"get", "list"}}},
		}
		if _, err := s.Client.RbacV1().Roles("team-a").Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "quota-reader", Namespace: "team-a"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "quota-reader"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
		}
		if _, err := s.Client.RbacV1().RoleBindings("team-a").Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		admin, _, _ := runArgs("top", "--kubeconfig", kc, "-n", "team-a")
		var want []string
		for _, l := range strings.SplitAfter(admin, "\n") {
			if !strings.Contains(l, "clusterresourcequota/") {
				want = append(want, l)
			}
		}
		so, se, code := runArgs("top", "--kubeconfig", kc, "-n", "team-a", "--as", "alice")
		// The columns narrow without the cluster quota's longer name.
		if code != 0 || se != "" || squeeze(so) != squeeze(strings.Join(want, "")) {
			t.Errorf("top as alice: exit %d, stderr %q, stdout:\n%s", code, se, so)
		}
		so, se, code = runArgs("explain", "pod/web", "--kubeconfig", kc, "-n", "team-a", "--as", "alice")
		if code != 0 || se != "" || strings.Contains(so, "clusterresourcequota/") || !strings.Contains(so, "resourcequota/compute: matches") {
			t.Errorf("explain as alice: exit %d, stderr %q, stdout:\n%s", code, se, so)
		}
	})

	t.Run("explain", func(t *testing.T) {
		var all strings.Builder
		for _, args := range [][]string{
			{"pod/web"}, {"pod", "batch"}, {"po/be1"}, {"pvc/data"}, {"svc/web"}, {"resourceclaims", "gpus"}, {"configmap/settings"},
		} {
			var out bytes.Buffer
			resArg, name, err := splitTypeName(args)
			if err != nil {
				t.Fatal(err)
			}
			if err := runExplain(ctx, s.Config, "team-a", resArg, name, &out); err != nil {
				t.Fatalf("explain %v: %v", args, err)
			}
			all.WriteString("$ kubectl quota explain " + strings.Join(args, " ") + " -n team-a\n" + out.String() + "\n")

			so, se, code := runArgs(append(append([]string{"explain"}, args...), "--kubeconfig", kc, "--namespace", "team-a")...)
			if code != 0 || se != "" || so != out.String() {
				t.Errorf("kubectl quota explain %v: exit %d, stderr %q, stdout:\n%s", args, code, se, so)
			}
		}
		golden(t, "explain.golden", all.String())
	})

	t.Run("explain errors and ignored kinds", func(t *testing.T) {
		for _, tc := range []struct {
			args           []string
			code           int
			stdout, stderr string
		}{
			{[]string{"explain", "pod/nope", "-n", "team-a"}, 1, "", "error: pods \"nope\" not found\n"},
			{[]string{"explain", "widgets/x"}, 1, "", "error: the server doesn't have a resource type \"widgets\"\n"},
			{[]string{"explain", "nodes/x"}, 1, "", "error: nodes are cluster-scoped: quotas charge only namespaced objects\n"},
			{[]string{"explain", "pod"}, 1, "", "error: arguments in resource/name form must have a single resource and name, got \"pod\"\n"},
			{[]string{"explain", "events/x"}, 0, "events are never charged to quotas\n", ""},
		} {
			so, se, code := runArgs(append(tc.args, "--kubeconfig", kc)...)
			if code != tc.code || so != tc.stdout || se != tc.stderr {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr %q", tc.args, code, so, se, tc.code, tc.stdout, tc.stderr)
			}
		}
	})

	t.Run("fit", func(t *testing.T) {
		c, err := newClients(s.Config)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.serves(reviewGV, "QuotaReview")
		if err != nil {
			t.Fatal(err)
		}
		if res == "" {
			// Until the server serves QuotaReview, fit says so and exits 1.
			so, se, code := runArgs("fit", "-f", "testdata/deploy.yaml", "--kubeconfig", kc)
			if code != 1 || so != "" || se != "error: "+errNotServed.Error()+"\n" {
				t.Errorf("fit without QuotaReview: exit %d, stdout %q, stderr %q", code, so, se)
			}
			return
		}
		so, se, code := runArgs("fit", "-f", "testdata/deploy.yaml", "--kubeconfig", kc)
		if code != 0 || se != "" {
			t.Errorf("fit: exit %d, stderr %q", code, se)
		}
		out := "$ kubectl quota fit -f deploy.yaml\n" + so
		so, se, code = runArgs("fit", "-f", "testdata/deploy.yaml", "--replicas", "10", "--kubeconfig", kc)
		if code != 1 || se != "" {
			t.Errorf("fit --replicas 10: exit %d, stderr %q", code, se)
		}
		out += "\n$ kubectl quota fit -f deploy.yaml --replicas 10\n" + so
		if !strings.Contains(out, "\nfits\n") || !strings.Contains(out, "only 2 of 10 replicas fit; refused by quota compute: ") {
			t.Errorf("fit verdicts:\n%s", out)
		}
		golden(t, "fit.golden", out)
		// Nothing was created.
		if _, err := s.Client.AppsV1().Deployments("team-a").Get(ctx, "api", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("fit created the deployment: %v", err)
		}
	})
}
