package ha

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/quotad/quotad/internal/pki"
	"github.com/quotad/quotad/internal/storage"
	"github.com/quotad/quotad/internal/storage/storagetest"
)

// startDeadline bounds how long a process may take to serve; exceeding it fails the test.
const startDeadline = 90 * time.Second

// lockedBuffer collects a process's stderr.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// tail returns the last n bytes written.
func (l *lockedBuffer) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}

// proc is one child process that can be SIGKILLed and started again with the same
// arguments.
type proc struct {
	name   string
	bin    string
	args   []string
	cmd    *exec.Cmd
	stderr *lockedBuffer
	exited chan struct{}
	// kills counts the SIGKILLs (a stream it served broke wherever it was).
	kills atomic.Int64
}

func (p *proc) start(t *testing.T) (stdout *bufio.Scanner) {
	t.Helper()
	p.stderr = &lockedBuffer{}
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stderr = p.stderr
	if dir := os.Getenv("QUOTAD_HA_LOGDIR"); dir != "" {
		// Keep every process's stderr, across restarts, for a look after the run.
		f, err := os.OpenFile(filepath.Join(dir, strings.ReplaceAll(p.name, " ", "-")+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "=== %s started at %s\n", p.name, time.Now().Format(time.RFC3339Nano))
		cmd.Stderr = io.MultiWriter(p.stderr, f)
		t.Cleanup(func() { f.Close() })
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", p.name, err)
	}
	p.cmd = cmd
	p.exited = make(chan struct{})
	sc := bufio.NewScanner(out)
	go func(cmd *exec.Cmd, exited chan struct{}) {
		_ = cmd.Wait()
		close(exited)
	}(cmd, p.exited)
	return sc
}

// kill SIGKILLs the process and waits until it is gone.
func (p *proc) kill() {
	if p.cmd == nil {
		return
	}
	p.kills.Add(1)
	_ = p.cmd.Process.Kill()
	<-p.exited
	p.cmd = nil
}

// alive reports whether the process runs (it may have exited on its own).
func (p *proc) alive() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// etcdPKI is a CA with a certificate etcd members serve and peer with, and a client
// certificate for quotad and the checker; members require client certificates of the CA.
type etcdPKI struct {
	ca, serverCert, serverKey, clientCert, clientKey string
}

func newEtcdPKI(t *testing.T, dir string) etcdPKI {
	t.Helper()
	now := time.Now()
	ca, err := pki.NewAuthority("ha-etcd-ca", now.Add(-time.Hour), now.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	p := etcdPKI{
		ca:         filepath.Join(dir, "ca.crt"),
		serverCert: filepath.Join(dir, "member.crt"), serverKey: filepath.Join(dir, "member.key"),
		clientCert: filepath.Join(dir, "client.crt"), clientKey: filepath.Join(dir, "client.key"),
	}
	issue := func(tmpl *x509.Certificate, certFile, keyFile string) {
		tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(24*time.Hour)
		c, k, err := ca.Issue(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		if err := pki.WriteFile(certFile, c, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := pki.WriteFile(keyFile, k, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	issue(&x509.Certificate{Subject: pkix.Name{CommonName: "ha-etcd-member"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"}}, p.serverCert, p.serverKey)
	issue(&x509.Certificate{Subject: pkix.Name{CommonName: "quotad"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, p.clientCert, p.clientKey)
	if err := pki.WriteFile(p.ca, ca.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// etcdMember is one etcd process of the cluster.
type etcdMember struct {
	proc
	clientURL string
}

// etcdCluster is a three-member etcd cluster of separate processes, TLS with client
// certificates on both client and peer URLs.
type etcdCluster struct {
	t       *testing.T
	pki     etcdPKI
	members []*etcdMember
	client  *clientv3.Client
}

func startEtcdCluster(t *testing.T, n int) *etcdCluster {
	t.Helper()
	dir := t.TempDir()
	c := &etcdCluster{t: t, pki: newEtcdPKI(t, dir)}
	ports := storagetest.FreePorts(t, 2*n)
	var initial []string
	for i := 0; i < n; i++ {
		initial = append(initial, fmt.Sprintf("m%d=https://127.0.0.1:%d", i, ports[2*i+1]))
	}
	for i := 0; i < n; i++ {
		cu, pu := fmt.Sprintf("https://127.0.0.1:%d", ports[2*i]), fmt.Sprintf("https://127.0.0.1:%d", ports[2*i+1])
		m := &etcdMember{clientURL: cu, proc: proc{name: fmt.Sprintf("etcd m%d", i), bin: etcdBinary, args: []string{
			"--name", fmt.Sprintf("m%d", i), "--data-dir", filepath.Join(dir, fmt.Sprintf("m%d", i)),
			"--listen-client-urls", cu, "--advertise-client-urls", cu,
			"--listen-peer-urls", pu, "--initial-advertise-peer-urls", pu,
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new", "--initial-cluster-token", "quotad-ha",
			"--client-cert-auth", "--trusted-ca-file", c.pki.ca, "--cert-file", c.pki.serverCert, "--key-file", c.pki.serverKey,
			"--peer-client-cert-auth", "--peer-trusted-ca-file", c.pki.ca, "--peer-cert-file", c.pki.serverCert, "--peer-key-file", c.pki.serverKey,
			"--listen-metrics-urls", "", "--logger", "zap", "--log-level", "error",
			// The processes are SIGKILLed, the machine is not: the page cache keeps what
			// fsync would, and the shared 2-core machine is spared the disk flushes.
			"--unsafe-no-fsync",
		}}}
		c.members = append(c.members, m)
	}
	for _, m := range c.members {
		m.start(t)
	}
	t.Cleanup(func() {
		for _, m := range c.members {
			m.kill()
		}
	})
	tlsCfg, err := storage.ExternalTLS(c.pki.ca, c.pki.clientCert, c.pki.clientKey)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startDeadline)
	defer cancel()
	if c.client, err = storage.ConnectExternal(ctx, c.endpoints(), tlsCfg, nil); err != nil {
		t.Fatalf("etcd cluster did not serve: %v\n%s", err, c.members[0].stderr.tail(4000))
	}
	t.Cleanup(func() { c.client.Close() })
	for i := range c.members {
		c.waitServing(i)
	}
	return c
}

func (c *etcdCluster) endpoints() []string {
	var out []string
	for _, m := range c.members {
		out = append(out, m.clientURL)
	}
	return out
}

// quotadFlags are the flags that point quotad at the cluster.
func (c *etcdCluster) quotadFlags() []string {
	return []string{"--etcd-servers", strings.Join(c.endpoints(), ","),
		"--etcd-cafile", c.pki.ca, "--etcd-certfile", c.pki.clientCert, "--etcd-keyfile", c.pki.clientKey}
}

// waitServing returns once member i answers a status request and knows a leader.
func (c *etcdCluster) waitServing(i int) {
	c.t.Helper()
	deadline := time.Now().Add(startDeadline)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		st, err := c.client.Status(ctx, c.members[i].clientURL)
		cancel()
		if err == nil && st.Leader != 0 {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("etcd member %d not serving after %s: %v\n%s", i, startDeadline, err, c.members[i].stderr.tail(4000))
		}
		time.Sleep(50 * time.Millisecond) // polling for a condition
	}
}

// leader returns the index of the current leader.
func (c *etcdCluster) leader() int {
	c.t.Helper()
	for _, m := range c.members {
		if !m.alive() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		st, err := c.client.Status(ctx, m.clientURL)
		cancel()
		if err != nil || st.Leader == 0 {
			continue
		}
		for i, n := range c.members {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			s, err := c.client.Status(ctx, n.clientURL)
			cancel()
			if err == nil && s.Header.MemberId == st.Leader {
				return i
			}
		}
	}
	c.t.Fatal("no etcd leader found")
	return -1
}

// replica is one quotad process.
type replica struct {
	proc
	index   int
	dataDir string
	port    int
	config  *rest.Config
}

// startReplica runs quotad with extra args on its own data dir and a fixed port (so that a
// restart keeps its URL) and waits until it is ready.
func startReplica(t *testing.T, index int, dataDir string, port int, extra ...string) *replica {
	t.Helper()
	args := append([]string{"--data-dir", dataDir, "--secure-port", fmt.Sprint(port)}, extra...)
	r := &replica{index: index, dataDir: dataDir, port: port, proc: proc{name: fmt.Sprintf("quotad %d", index), bin: quotadBinary, args: args}}
	r.launch(t)
	t.Cleanup(r.kill)
	return r
}

// launch starts the process and waits for its kubeconfig line.
func (r *replica) launch(t *testing.T) {
	t.Helper()
	r.begin(t)()
}

// begin starts the process; the returned func waits for its kubeconfig line (members of an
// embedded cluster that lost quorum must all be started before any is ready).
func (r *replica) begin(t *testing.T) (wait func()) {
	t.Helper()
	sc := r.start(t)
	lines := make(chan string)
	go func() {
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return func() {
		t.Helper()
		deadline := time.After(startDeadline)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("%s exited before it was ready: %s", r.name, r.stderr.tail(4000))
				}
				if strings.HasPrefix(l, "KUBECONFIG=") {
					kc := strings.Fields(strings.TrimPrefix(l, "KUBECONFIG="))[0]
					go func() {
						for range lines {
						}
					}()
					if r.config == nil {
						cfg, err := clientcmd.BuildConfigFromFlags("", kc)
						if err != nil {
							t.Fatal(err)
						}
						cfg.QPS, cfg.Burst = -1, 0
						r.config = cfg
					}
					return
				}
			case <-deadline:
				t.Fatalf("%s did not print its kubeconfig line within %s: %s", r.name, startDeadline, r.stderr.tail(4000))
			}
		}
	}
}

// supportsFlag reports whether `quotad --help` lists flag.
func supportsFlag(t *testing.T, flag string) bool {
	t.Helper()
	out, _ := exec.Command(quotadBinary, "--help").CombinedOutput()
	return bytes.Contains(out, []byte("--"+flag+" ")) || bytes.Contains(out, []byte("--"+flag+"\n")) || bytes.Contains(out, []byte("--"+flag+"="))
}
