package integration

import (
	"net/url"
	"os"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage/storagetest"
)

// TestSecurityKubeconfigKeepsUserEdits: a restart keeps what the user changed in the admin
// kubeconfig (the context's namespace, an added context): on the same port the file is not
// rewritten at all; on another port only the server URL changes, and the file still works.
func TestSecurityKubeconfigKeepsUserEdits(t *testing.T) {
	t.Parallel()
	// The first start's port is one FreePorts chose (below the kernel's ephemeral range),
	// so that no connection of a test running alongside takes it before the restart on it.
	s := servertest.Start(t, func(c *server.Config) { c.SecurePort = storagetest.FreePorts(t, 1)[0] })
	dir, path := s.DataDir, s.Kubeconfig
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}

	// 1. What `kubectl config set-context --current --namespace=team` and
	//    `kubectl config set-context other ...` do.
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Contexts[cfg.CurrentContext].Namespace = "team"
	cfg.Contexts["other"] = &clientcmdapi.Context{Cluster: "quotad", AuthInfo: "admin", Namespace: "elsewhere"}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	edited, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}

	// 2. Restart on the same port: the file is left alone.
	s.Stop()
	s = servertest.Start(t, servertest.WithDataDir(dir), func(c *server.Config) { c.SecurePort = port })
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !os.SameFile(before, after) || string(got) != string(edited) {
		t.Fatalf("restart on the same port rewrote the kubeconfig:\n%s\nwas\n%s", got, edited)
	}

	// 3. Restart on another port: only the server URL changes.
	s.Stop()
	s = servertest.Start(t, servertest.WithDataDir(dir))
	got, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := cfg.DeepCopy()
	want.Clusters["quotad"].Server = s.URL
	gb, err := clientcmd.Write(*got)
	if err != nil {
		t.Fatal(err)
	}
	wb, err := clientcmd.Write(*want)
	if err != nil {
		t.Fatal(err)
	}
	if string(gb) != string(wb) {
		t.Fatalf("kubeconfig after a restart on another port:\n%s\nwant\n%s", gb, wb)
	}

	// 4. The file reaches the restarted server, in the user's namespace.
	rc, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Namespaces().Get(ctxT(t), "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("the kubeconfig does not reach the restarted server: %v", err)
	}
	ns, _, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: path}, &clientcmd.ConfigOverrides{}).Namespace()
	if err != nil || ns != "team" {
		t.Fatalf("namespace of the current context = %q, %v; want team", ns, err)
	}
}
