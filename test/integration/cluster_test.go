package integration

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
	"github.com/quotad/quotad/internal/storage/storagetest"
)

// etcdPorts sets a clustered embedded etcd's peer and client ports.
func etcdPorts(peer, client int) servertest.Option {
	return func(c *server.Config) { c.EtcdPeerPort, c.EtcdClientPort = peer, client }
}

// joinWith makes the server join the cluster of first with token.
func joinWith(first *servertest.Server, token string) servertest.Option {
	return func(c *server.Config) { c.Join, c.JoinToken = first.JoinURL, token }
}

// clusterMembers lists the etcd members through the embedded etcd of dataDir, as
// `quotad etcd members` does.
func clusterMembers(t *testing.T, dataDir string) []storage.Member {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := storage.ConnectLocal(ctx, dataDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	members, err := storage.ListMembers(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	return members
}

// memberNames is the members' names, and how many lead and how many are learners.
func memberNames(members []storage.Member) (names string, leaders, learners int) {
	var n []string
	for _, m := range members {
		n = append(n, m.Name)
		if m.Leader {
			leaders++
		}
		if m.Learner {
			learners++
		}
	}
	return strings.Join(n, ","), leaders, learners
}

// TestCluster: three quotads on one embedded etcd cluster, one --cluster-init and two
// --join. Every replica's admin kubeconfig, and a client certificate of the shared CA,
// work against every replica; objects and quota usage written through one are the same
// through the others; a join with a wrong token is refused and changes no membership; a
// joined replica restarts without the join flags; after one member is removed the other
// two still write.
func TestCluster(t *testing.T) {
	t.Parallel()
	ports := storagetest.FreePorts(t, 6)
	a := servertest.Start(t, func(c *server.Config) { c.ClusterInit = true }, etcdPorts(ports[0], ports[1]))
	if a.JoinToken == "" || !strings.HasPrefix(a.JoinToken, "K10") {
		t.Fatalf("join token = %q", a.JoinToken)
	}
	if fi, err := os.Stat(filepath.Join(a.DataDir, "join-token")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("join-token file: %v, %v", fi, err)
	}

	// 1. Joins with a wrong secret, or a token naming another CA, are refused with a
	// clear error, and the membership stays as it was.
	before, _, _ := memberNames(clusterMembers(t, a.DataDir))
	hash, _, _ := strings.Cut(a.JoinToken, "::")
	bad := []struct {
		name, token string
		want        error
	}{
		{"wrong secret", hash + "::server:not-the-secret", server.ErrJoinTokenRefused},
		{"another CA", "K10" + strings.Repeat("0", 64) + "::server:whatever", server.ErrJoinCAMismatch},
		{"not a token", "secret", server.ErrBadJoinToken},
	}
	for _, tc := range bad {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		p := storagetest.FreePorts(t, 2)
		err := server.Run(ctx, server.Config{
			DataDir: t.TempDir(), BindAddress: "127.0.0.1", EtcdUnsafeNoFsync: true,
			Join: a.JoinURL, JoinToken: tc.token, EtcdPeerPort: p[0], EtcdClientPort: p[1],
			Logger: slog.New(slog.DiscardHandler),
		})
		cancel()
		if !errors.Is(err, tc.want) {
			t.Fatalf("join with %s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	if after, _, _ := memberNames(clusterMembers(t, a.DataDir)); after != before {
		t.Fatalf("members after the refused joins = %s, want %s", after, before)
	}

	// 2. Two joins; each returns once its member votes.
	b := servertest.Start(t, joinWith(a, a.JoinToken), etcdPorts(ports[2], ports[3]))
	c := servertest.Start(t, joinWith(a, b.JoinToken), etcdPorts(ports[4], ports[5]))
	servers := []*servertest.Server{a, b, c}
	// Leaving with one member of three up would lose quorum: every replica is checked
	// while all run, then all are stopped.
	defer func() {
		for _, s := range servers {
			s.CheckInvariant()
		}
		for _, s := range servers {
			s.Stop()
		}
	}()
	members := clusterMembers(t, c.DataDir)
	if _, leaders, learners := memberNames(members); len(members) != 3 || leaders != 1 || learners != 0 {
		t.Fatalf("members = %+v, want 3 voters and one leader", members)
	}
	if b.JoinToken != a.JoinToken || c.JoinToken != a.JoinToken {
		t.Fatalf("join tokens differ: %q %q %q", a.JoinToken, b.JoinToken, c.JoinToken)
	}

	// 3. Every replica's admin kubeconfig, and a client certificate minted from any
	// replica's CA, work against every replica.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	minted, err := server.MintKubeconfig(c.DataDir, server.ClientKubeconfig{User: "alice", Groups: []string{"system:masters"}, Expiration: time.Hour}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, from := range servers {
		kubeconfig, err := os.ReadFile(from.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		for _, kc := range [][]byte{kubeconfig, minted} {
			for _, to := range servers {
				cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
				if err != nil {
					t.Fatal(err)
				}
				cfg.Host = to.URL
				cl := kubernetes.NewForConfigOrDie(cfg)
				if _, err := cl.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
					t.Fatalf("%s's kubeconfig against %s: %v", from.DataDir, to.URL, err)
				}
			}
		}
	}

	// 4. A namespace, quota and pods through a are the same through b and c, usage
	// included; a pod through b is charged on the same quota.
	ns := "cluster"
	if _, err := a.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hard := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10"), corev1.ResourceRequestsCPU: resource.MustParse("2")}
	if _, err := a.Client.CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}},
		}}}}
	}
	for _, name := range []string{"p1", "p2"} {
		if _, err := a.Client.CoreV1().Pods(ns).Create(ctx, pod(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Client.CoreV1().Pods(ns).Create(ctx, pod("p3"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("3"), corev1.ResourceRequestsCPU: resource.MustParse("600m")}
	for _, s := range servers {
		q, err := s.Client.CoreV1().ResourceQuotas(ns).Get(ctx, "q", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !apiequality.Semantic.DeepEqual(q.Status.Used, want) {
			t.Fatalf("quota usage through %s = %v, want %v", s.URL, q.Status.Used, want)
		}
		pods, err := s.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(pods.Items) != 3 {
			t.Fatalf("pods through %s: %d, %v", s.URL, len(pods.Items), err)
		}
	}

	// 5. b restarted without the join flags starts its member from its data dir: no second
	// join, the same token, the same data.
	token := b.JoinToken
	b.CheckInvariant()
	b.Stop()
	b = servertest.Start(t, servertest.WithDataDir(b.DataDir), etcdPorts(ports[2], ports[3]))
	servers[1] = b
	if b.JoinToken != token {
		t.Fatalf("join token after the restart = %q, want %q", b.JoinToken, token)
	}
	if names, _, learners := memberNames(clusterMembers(t, b.DataDir)); strings.Count(names, ",") != 2 || learners != 0 {
		t.Fatalf("members after b's restart: %s (%d learners)", names, learners)
	}
	if q, err := b.Client.CoreV1().ResourceQuotas(ns).Get(ctx, "q", metav1.GetOptions{}); err != nil || !apiequality.Semantic.DeepEqual(q.Status.Used, want) {
		t.Fatalf("quota through b after its restart: %v, %v", q, err)
	}

	// 6. c's member removed after c stops: two members, and both replicas write.
	cName, err := os.ReadFile(filepath.Join(c.DataDir, "etcd-name"))
	if err != nil {
		t.Fatal(err)
	}
	c.CheckInvariant()
	c.Stop()
	servers = servers[:2]
	rctx, rcancel := context.WithTimeout(ctx, 30*time.Second)
	cl, err := storage.ConnectLocal(rctx, a.DataDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = storage.RemoveMember(rctx, cl, strings.TrimSpace(string(cName)))
	cl.Close()
	rcancel()
	if err != nil {
		t.Fatal(err)
	}
	members = clusterMembers(t, b.DataDir)
	if _, leaders, _ := memberNames(members); len(members) != 2 || leaders != 1 {
		t.Fatalf("members after the removal = %+v", members)
	}
	for i, s := range servers {
		if _, err := s.Client.CoreV1().Pods(ns).Create(ctx, pod("after-"+string(rune('a'+i))), metav1.CreateOptions{}); err != nil {
			t.Fatalf("write through %s after the removal: %v", s.URL, err)
		}
	}
}
