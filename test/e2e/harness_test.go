package e2e

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quotad/quotad/internal/quota/quotatest"
)

// update is the -update flag quotatest.GoldenFile reads.
var update = flag.Bool("update", false, "rewrite golden files")

const kubectlPath = "/usr/bin/kubectl"

var binary string

// defaultParallel is how many tests run at once unless -test.parallel (go test -parallel)
// is given: every test calls t.Parallel() and drives its own quotad processes, on their own
// ports and data dirs, and much of a test's time is a process starting or waiting on one.
const defaultParallel = 6

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(defaultParallel)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	dir, err := os.MkdirTemp("", "quotad-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := readSources("../../cmd/quotad"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "quotad")
	build := exec.Command("go", "build", "-o", binary, "github.com/quotad/quotad/cmd/quotad")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building quotad:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// readSources reads every file of the quotad command. The binary is built by a child
// process, which go test's result cache does not see; files the test itself reads are part
// of the cache key, so a change to the command reruns these tests (a change to the packages
// it imports does too, through the blank import in deps_test.go).
func readSources(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if _, err := os.ReadFile(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// cluster is one running quotad binary.
type cluster struct {
	t          *testing.T
	dataDir    string
	kubeconfig string
	// cacheDir is kubectl's cache (KUBECACHEDIR) for this cluster alone: a cache in the
	// home directory is keyed by host and port, which a later cluster may be given again.
	cacheDir string
	cmd      *exec.Cmd
	stderr   *bytes.Buffer
}

func requireKubectl(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(kubectlPath); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("kubectl is required under CI: %v", err)
		}
		t.Skipf("kubectl not installed: %v", err)
	}
}

// start runs quotad on a fresh data dir (or dataDir when given) and waits until it prints
// its kubeconfig line.
func start(t *testing.T, args ...string) *cluster {
	t.Helper()
	requireKubectl(t)
	c := &cluster{t: t, dataDir: t.TempDir(), cacheDir: t.TempDir()}
	c.launch(args...)
	t.Cleanup(c.stop)
	return c
}

func (c *cluster) launch(args ...string) {
	t := c.t
	t.Helper()
	c.stderr = &bytes.Buffer{}
	cmd := exec.Command(binary, append([]string{"--data-dir", c.dataDir, "--secure-port", "0"}, args...)...)
	cmd.Stderr = c.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.cmd = cmd
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("quotad exited before it was ready: %s", c.stderr.String())
			}
			if strings.HasPrefix(l, "KUBECONFIG=") {
				c.kubeconfig = strings.Fields(strings.TrimPrefix(l, "KUBECONFIG="))[0]
				go func() {
					for range lines {
					}
				}()
				return
			}
		case <-deadline:
			t.Fatalf("quotad did not print its kubeconfig line within 60s: %s", c.stderr.String())
		}
	}
}

func (c *cluster) stop() {
	if c.cmd == nil || c.cmd.Process == nil {
		return
	}
	_ = c.cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			c.t.Errorf("quotad exited with %v: %s", err, c.stderr.String())
		}
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		c.t.Errorf("quotad did not stop on SIGINT within 30s")
	}
	c.cmd = nil
}

// result is one kubectl run.
type result struct {
	stdout, stderr string
	code           int
}

// kubectl runs kubectl against the cluster with stdin.
func (c *cluster) kubectlIn(stdin string, args ...string) result {
	c.t.Helper()
	return c.kubectlRun("", stdin, args...)
}

// kubectlRun runs the real kubectl against the cluster with stdin and, when dir is set,
// dir first on PATH (where kubectl finds plugins).
func (c *cluster) kubectlRun(dir, stdin string, args ...string) result {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlPath, args...)
	cmd.Env = c.env()
	if dir != "" {
		cmd.Env = append(cmd.Env, "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	cmd.Stdin = strings.NewReader(stdin)
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

// env is the environment kubectl runs in against the cluster.
func (c *cluster) env() []string {
	return append(os.Environ(), "KUBECONFIG="+c.kubeconfig, "KUBECACHEDIR="+c.cacheDir)
}

func (c *cluster) kubectl(args ...string) result {
	c.t.Helper()
	return c.kubectlIn("", args...)
}

// must runs kubectl and fails the test unless it exits 0.
func (c *cluster) must(args ...string) string {
	c.t.Helper()
	r := c.kubectl(args...)
	if r.code != 0 {
		c.t.Fatalf("kubectl %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

var (
	paddingRE = regexp.MustCompile(`\s{2,}`)
	ageCellRE = regexp.MustCompile(`(^|  )(\d+[smhd])+(  |$)`)
)

// normalizeTable masks AGE-like cells and collapses the column padding they shift, so
// tables compare independently of timing.
func normalizeTable(s string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		line = paddingRE.ReplaceAllString(line, "  ")
		line = ageCellRE.ReplaceAllString(line, "${1}<age>${3}")
		out = append(out, strings.TrimRight(line, " "))
	}
	return strings.Join(out, "\n")
}

var timestampRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
var uidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
var rvRE = regexp.MustCompile(`(resourceVersion["]?: ?)"\d+"`)

// normalizeObject masks timestamps, uids and resourceVersions in -o yaml/json output.
func normalizeObject(s string) string {
	s = timestampRE.ReplaceAllString(s, "<time>")
	s = uidRE.ReplaceAllString(s, "<uid>")
	return rvRE.ReplaceAllString(s, `$1"<rv>"`)
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	quotatest.GoldenFile(t, name, got)
}
