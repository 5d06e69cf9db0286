package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/fileutil"

	"github.com/quotad/quotad/internal/storage/storagetest"
)

// procTimeout bounds every wait on a quotad process: a failure guard, not a timing
// assertion.
const procTimeout = 90 * time.Second

// lockedBuffer is an output of a process, read while the process writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// proc is one quotad process, without kubectl.
type proc struct {
	t              *testing.T
	cmd            *exec.Cmd
	stdout, stderr *lockedBuffer
	done           chan struct{}
	err            error
}

// launch starts the quotad binary with args.
func launch(t *testing.T, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(binary, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// waitFor waits until the process's stdout or stderr (as out says) holds every one of want.
func (p *proc) waitFor(out *lockedBuffer, want ...string) {
	p.t.Helper()
	deadline := time.After(procTimeout)
	for {
		s := out.String()
		missing := false
		for _, w := range want {
			if !strings.Contains(s, w) {
				missing = true
			}
		}
		if !missing {
			return
		}
		select {
		case <-p.done:
			p.t.Fatalf("quotad exited (%v) before printing %q; stdout:\n%s\nstderr:\n%s", p.err, want, p.stdout, p.stderr)
		case <-deadline:
			p.t.Fatalf("quotad did not print %q within %v; stdout:\n%s\nstderr:\n%s", want, procTimeout, p.stdout, p.stderr)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ready waits until quotad prints its kubeconfig line.
func (p *proc) ready() { p.t.Helper(); p.waitFor(p.stdout, "KUBECONFIG=") }

// terminate sends SIGTERM and waits for the exit, which must be status 0.
func (p *proc) terminate() {
	p.t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(procTimeout):
		p.t.Fatalf("quotad did not exit within %v of SIGTERM; stderr:\n%s", procTimeout, p.stderr)
	}
	if p.err != nil {
		p.t.Fatalf("quotad exited with %v after SIGTERM; stderr:\n%s", p.err, p.stderr)
	}
}

// quotadOutput runs the binary with args to its end and returns its stdout.
func quotadOutput(t *testing.T, args ...string) string {
	t.Helper()
	var errOut bytes.Buffer
	cmd := exec.Command(binary, args...)
	cmd.Stderr = &errOut
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("quotad %v: %v: %s", args, err, errOut.String())
	}
	return string(out)
}

// TestClusterRestartBinary: two quotad binaries, --cluster-init and --join, with their own
// ports, stopped; then:
//   - the joined one restarted alone without port flags logs every few seconds that it
//     waits for a quorum, naming the other member and its peer URL, and its own kept URLs;
//     SIGTERM stops it (status 0) and releases its data dir;
//   - both restarted with no flag but --data-dir and --secure-port serve again;
//   - the join token was printed by the first --cluster-init start only, and `quotad token`
//     prints it.
func TestClusterRestartBinary(t *testing.T) {
	t.Parallel()
	p := storagetest.FreePorts(t, 6)
	aDir, bDir := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	url := func(port int) string { return "https://127.0.0.1:" + strconv.Itoa(port) }
	a := launch(t, "--data-dir", aDir, "--secure-port", strconv.Itoa(p[0]), "--etcd-peer-port", strconv.Itoa(p[1]), "--etcd-client-port", strconv.Itoa(p[2]), "--cluster-init")
	a.ready()
	token := strings.TrimSpace(quotadOutput(t, "token", "--data-dir", aDir))
	if !strings.HasPrefix(token, "K10") {
		t.Fatalf("quotad token = %q", token)
	}
	a.waitFor(a.stdout, "--join "+url(p[0])+" --join-token "+token+"\n")
	b := launch(t, "--data-dir", bDir, "--secure-port", strconv.Itoa(p[3]), "--etcd-peer-port", strconv.Itoa(p[4]), "--etcd-client-port", strconv.Itoa(p[5]),
		"--join", url(p[0]), "--join-token", token)
	b.ready()
	if strings.Contains(b.stdout.String(), token) {
		t.Fatalf("the joiner printed the join token:\n%s", b.stdout)
	}
	aName, err := os.ReadFile(filepath.Join(aDir, "etcd-name"))
	if err != nil {
		t.Fatal(err)
	}
	b.terminate()
	a.terminate()

	// 1. b alone waits, says for what, and stops on SIGTERM.
	alone := launch(t, "--data-dir", bDir, "--secure-port", strconv.Itoa(p[3]))
	alone.waitFor(alone.stderr, "waiting for a quorum", "peerURL="+url(p[4]), "clientURL="+url(p[5]),
		strings.TrimSpace(string(aName))+"="+url(p[1])+" (unreachable")
	alone.terminate()
	if !strings.Contains(alone.stderr.String(), "stopped before it was ready") {
		t.Fatalf("stderr after SIGTERM:\n%s", alone.stderr)
	}
	for _, f := range []string{"quotad.lock", "etcd.lock"} {
		l, err := fileutil.TryLockFile(filepath.Join(bDir, f), os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatalf("%s still locked after the exit: %v", f, err)
		}
		l.Close()
	}

	// 2. Both, without port or cluster flags.
	a = launch(t, "--data-dir", aDir, "--secure-port", strconv.Itoa(p[0]))
	b = launch(t, "--data-dir", bDir, "--secure-port", strconv.Itoa(p[3]))
	a.ready()
	b.ready()
	if strings.Contains(a.stdout.String(), token) {
		t.Fatalf("the join token was printed again on a restart:\n%s", a.stdout)
	}
	a.waitFor(a.stdout, "quotad token --data-dir "+aDir)
	members := quotadOutput(t, "etcd", "members", "--data-dir", bDir)
	for _, u := range []string{url(p[1]), url(p[2]), url(p[4]), url(p[5])} {
		if !strings.Contains(members, u) {
			t.Fatalf("members after the restart lack %s:\n%s", u, members)
		}
	}
	if got := strings.TrimSpace(quotadOutput(t, "token", "--data-dir", bDir)); got != token {
		t.Fatalf("quotad token on the joiner = %q, want %q", got, token)
	}
	b.terminate()
	a.terminate()
}
