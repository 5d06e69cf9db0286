package cluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const kubectlPath = "/usr/bin/kubectl"

var (
	// quotadBin is the quotad binary built from this tree.
	quotadBin string
	// components is the directory of the built kube-scheduler and kwok.
	components string
)

// TestMain builds quotad from the tree and the upstream components with
// hack/cluster/build.sh (a cache hit after the first run).
func TestMain(m *testing.M) {
	flag.Parse()
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "quotad-cluster-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	// Files the test reads are part of go test's cache key: a change to the command or to
	// the component modules reruns the tests.
	for _, f := range []string{"../../hack/cluster/build.sh", "../../hack/cluster/go.mod", "../../hack/cluster/go.sum", "../../hack/cluster/kwok/go.mod", "../../hack/cluster/kwok/go.sum"} {
		if _, err := os.ReadFile(f); err != nil {
			return 0, err
		}
	}
	quotadBin = filepath.Join(dir, "quotad")
	build := exec.Command("go", "build", "-o", quotadBin, "github.com/quotad/quotad/cmd/quotad")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return 0, fmt.Errorf("building quotad: %w", err)
	}
	// The components are built under CI=true (.ci/run builds them before the tests); anywhere
	// else only when cached: a first build takes longer than go test's default timeout on 2
	// cores, so without them the tests skip, saying how to build them.
	var out bytes.Buffer
	comp := exec.Command("bash", "../../hack/cluster/build.sh", "kubemark")
	comp.Stdout, comp.Stderr = &out, os.Stderr
	if os.Getenv("CI") != "true" {
		comp.Env = append(os.Environ(), "BUILD=no")
	}
	if err := comp.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 3 {
			componentsMissing = "kube-scheduler, kubemark and kwok are not built yet: run hack/cluster/build.sh kubemark once (several minutes on 2 cores), or CI=true to build them here"
			return m.Run(), nil
		}
		return 0, fmt.Errorf("building kube-scheduler and kwok (hack/cluster/build.sh): %w", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	components = lines[len(lines)-1]
	return m.Run(), nil
}

// componentsMissing, when set, says why the upstream components are not there (not under
// CI, and not built yet).
var componentsMissing string

// requireKubectl requires the real kubectl, and the upstream components (the test skips
// without them outside CI).
func requireKubectl(t *testing.T) {
	t.Helper()
	if componentsMissing != "" {
		t.Skip(componentsMissing)
	}
	if _, err := os.Stat(kubectlPath); err != nil {
		t.Fatalf("the real kubectl is required at %s: %v", kubectlPath, err)
	}
}

// proc is one running component, its output in a log file.
type proc struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// startProc runs bin with args, its stdout and stderr in dir/<name>.log, stopped (SIGTERM,
// then SIGKILL) when the test ends. On failure the test log gets the tail of every log.
func startProc(t *testing.T, dir, name, bin string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, log: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	f, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	p.cmd.Env = append(os.Environ(), env...)
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		f.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- last lines of %s (%s) ---\n%s", name, p.log, tail(p.log, 40))
		}
		p.stop(t)
	})
	return p
}

func (p *proc) stop(t *testing.T) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Errorf("%s did not stop on SIGTERM", p.name)
	}
}

// kill stops the component at once with SIGKILL (a machine losing power: nothing it would
// do on its way out happens) and waits for it to be gone.
func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// exited reports a component that stopped on its own.
func (p *proc) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited: %v\n%s", p.name, p.err, tail(p.log, 40))
	default:
		return nil
	}
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// cluster is quotad, kube-scheduler and kwok, running.
type cluster struct {
	t          *testing.T
	dir        string
	kubeconfig string
	client     kubernetes.Interface
	quotad     *proc
	scheduler  *proc
	kwok       *proc
	opts       clusterOptions
	// extra are further components (hollow kubelets), checked by alive and noRefusals.
	extra []*proc
}

// clusterOptions are what a test changes of the cluster startCluster runs.
type clusterOptions struct {
	// quotadArgs are further quotad flags (the node lifecycle controller's periods).
	quotadArgs []string
	// leaseSeconds is kwok's --node-lease-duration-seconds (0: 40, the kubelet's default);
	// its nodes renew their Leases every quarter of it.
	leaseSeconds int
}

// startCluster starts quotad on a fresh data dir, then kube-scheduler (leader election on
// its kube-system Lease) and kwok (managing the nodes annotated kwok.x-k8s.io/node=fake),
// all with quotad's admin kubeconfig.
func startCluster(ctx context.Context, t *testing.T) *cluster {
	t.Helper()
	return startClusterWith(ctx, t, clusterOptions{})
}

// startClusterWith is startCluster with options.
func startClusterWith(ctx context.Context, t *testing.T, opts clusterOptions) *cluster {
	t.Helper()
	if opts.leaseSeconds == 0 {
		opts.leaseSeconds = 40
	}
	c := &cluster{t: t, dir: t.TempDir(), opts: opts}
	c.quotad = c.startQuotad(ctx)
	cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	if c.client, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	c.scheduler = startProc(t, c.dir, "kube-scheduler", filepath.Join(components, "kube-scheduler"), nil,
		"--kubeconfig="+c.kubeconfig, "--leader-elect=true", "--secure-port=0", "-v=2")
	c.kwok = c.startKWOK("kwok", "fake")
	return c
}

// startKWOK runs a kwok process managing the nodes annotated kwok.x-k8s.io/node=<value>
// (and the pods bound to them): it runs the stages kwokctl gives it by default
// (hack/cluster/build.sh copies them from its module), its nodes heartbeating through
// Leases in kube-node-lease, held under an identity of its own. HOME is a directory of the
// test's, so that no ~/.kwok configuration adds to them.
func (c *cluster) startKWOK(name, value string) *proc {
	t := c.t
	t.Helper()
	home := filepath.Join(c.dir, "home-"+name)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	return startProc(t, c.dir, name, filepath.Join(components, "kwok"), []string{"HOME=" + home},
		"--config="+filepath.Join(components, "kwok-stages.yaml"), "--kubeconfig="+c.kubeconfig,
		"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node="+value,
		fmt.Sprintf("--node-lease-duration-seconds=%d", c.opts.leaseSeconds))
}

// startQuotad runs the quotad binary and waits for the kubeconfig line it prints.
func (c *cluster) startQuotad(ctx context.Context) *proc {
	t := c.t
	t.Helper()
	p := &proc{name: "quotad", log: filepath.Join(c.dir, "quotad.log"), done: make(chan struct{})}
	f, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(quotadBin, append([]string{"--data-dir", filepath.Join(c.dir, "data"), "--secure-port", "0"}, c.opts.quotadArgs...)...)
	p.cmd.Stderr = f
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kc := make(chan string, 1)
	var once sync.Once
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			l := sc.Text()
			fmt.Fprintln(f, l)
			if strings.HasPrefix(l, "KUBECONFIG=") {
				once.Do(func() { kc <- strings.Fields(strings.TrimPrefix(l, "KUBECONFIG="))[0] })
			}
		}
		_, _ = io.Copy(io.Discard, out)
		p.err = p.cmd.Wait()
		f.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- last lines of quotad (%s) ---\n%s", p.log, tail(p.log, 40))
		}
		p.stop(t)
	})
	select {
	case c.kubeconfig = <-kc:
	case <-p.done:
		t.Fatalf("quotad exited before it was ready: %v\n%s", p.err, tail(p.log, 40))
	case <-ctx.Done():
		t.Fatalf("quotad did not print its kubeconfig line: %v", ctx.Err())
	}
	if !filepath.IsAbs(c.kubeconfig) {
		c.kubeconfig = filepath.Join(c.dir, "data", "admin.kubeconfig")
	}
	return p
}

// alive fails the test when a component stopped.
func (c *cluster) alive() {
	c.t.Helper()
	for _, p := range append([]*proc{c.quotad, c.scheduler, c.kwok}, c.extra...) {
		if err := p.exited(); err != nil {
			c.t.Fatal(err)
		}
	}
}

// result is one kubectl run.
type result struct {
	stdout, stderr string
	code           int
}

// kubectl runs the real kubectl against the cluster.
func (c *cluster) kubectl(ctx context.Context, args ...string) result {
	c.t.Helper()
	cmd := exec.CommandContext(ctx, kubectlPath, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.kubeconfig)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("kubectl %v: %v", args, err)
	}
	return result{so.String(), se.String(), code}
}

// must runs kubectl and fails the test unless it exits 0.
func (c *cluster) must(ctx context.Context, args ...string) string {
	c.t.Helper()
	r := c.kubectl(ctx, args...)
	if r.code != 0 {
		c.t.Fatalf("kubectl %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}
