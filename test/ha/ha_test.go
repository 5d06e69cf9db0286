package ha

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quotad/quotad/internal/storage"
	"github.com/quotad/quotad/internal/storage/storagetest"
)

var quotadBinary, etcdBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "quotad-ha-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The binaries are built by child processes, which go test's cache does not see; the
	// files the test reads are part of its cache key, so a change to either main reruns
	// these tests (a change to the packages they import does too: this package imports
	// them).
	for _, d := range []string{"../../cmd/quotad", "etcdmain"} {
		if err := readSources(d); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	quotadBinary, etcdBinary = filepath.Join(dir, "quotad"), filepath.Join(dir, "etcdmain")
	pkgs := []string{"github.com/quotad/quotad/cmd/quotad", "github.com/quotad/quotad/test/ha/etcdmain"}
	if b := os.Getenv("QUOTAD_HA_BINARY"); b != "" {
		// Run the tests against another quotad binary (one built from another branch).
		quotadBinary, pkgs = b, pkgs[1:]
	}
	// One go build for both, which links them in parallel; each binary is named after
	// its package's directory.
	build := exec.Command("go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building", strings.Join(pkgs, " ")+":", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

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

var namespaces = []string{"ha-a", "ha-b", "ha-c", "ha-d"}

// replicaFlags run each replica's quota verifier every 2 s (not 5 min): its recounts and
// repairs race the workload's writes, and a wrong repair would break I1.
var replicaFlags = []string{"--resource-quota-sync-period", "2s"}

// TestExternalEtcdFaults: three quotad replicas on a three-member etcd cluster (separate
// processes, TLS with client certificates), 32 writers and 6 watchers, while a replica, the
// etcd leader and then two members at once are SIGKILLed and restarted and etcd is compacted
// under the watches. The history checker then finds no violation of I1 or I2, no lost
// acknowledged write, no watch gap, and no write acknowledged without quorum.
func TestExternalEtcdFaults(t *testing.T) {
	etcd := startEtcdCluster(t, 3)
	ports := storagetest.FreePorts(t, 3)
	var reps []*replica
	for i := 0; i < 3; i++ {
		reps = append(reps, startReplica(t, i, t.TempDir(), ports[i], append(etcd.quotadFlags(), replicaFlags...)...))
	}
	top := topology{
		replicas: reps, etcd: etcd.client, members: 3,
		leader:     etcd.leader,
		killMember: func(i int) { etcd.members[i].kill() },
		restartMembers: func(is ...int) {
			for _, i := range is {
				etcd.members[i].start(t)
			}
			for _, i := range is {
				etcd.waitServing(i)
			}
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute+2*minDuration(t))
	defer cancel()
	r := newRun(t, top, namespaces)
	r.setup(ctx)
	r.runFaults(ctx)
}

// TestEmbeddedClusterFaults drives the same workload, faults and checker against three quotad
// members that form their embedded etcd cluster themselves (--cluster-init on the first,
// --join on the others). It skips only while the binary has no --cluster-init flag.
func TestEmbeddedClusterFaults(t *testing.T) {
	if !supportsFlag(t, "cluster-init") {
		t.Skip("quotad has no --cluster-init flag yet (embedded etcd clustering)")
	}
	ports := storagetest.FreePorts(t, 9)
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	etcdPorts := func(i int) []string {
		return []string{"--etcd-peer-port", fmt.Sprint(ports[3+i]), "--etcd-client-port", fmt.Sprint(ports[6+i])}
	}
	reps := []*replica{startReplica(t, 0, dirs[0], ports[0], append(append(etcdPorts(0), replicaFlags...), "--cluster-init")...)}
	token, err := os.ReadFile(filepath.Join(dirs[0], "join-token"))
	if err != nil {
		t.Fatalf("reading the first member's join token: %v", err)
	}
	for i := 1; i < 3; i++ {
		reps = append(reps, startReplica(t, i, dirs[i], ports[i], append(append(etcdPorts(i), replicaFlags...),
			"--join", fmt.Sprintf("https://127.0.0.1:%d", ports[0]), "--join-token", strings.TrimSpace(string(token)))...))
	}
	// The checker reaches every member with the first member's etcd client certificate.
	var eps []string
	for _, d := range dirs {
		e, err := storage.LocalEndpoints(d)
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, e...)
	}
	files := storage.LocalTLS(dirs[0])
	tlsCfg, err := storage.ExternalTLS(files.CAFile, files.CertFile, files.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute+2*minDuration(t))
	defer cancel()
	client, err := storage.ConnectExternal(ctx, eps, tlsCfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	memberOf := func(id uint64) int {
		for i, ep := range eps {
			sctx, c := context.WithTimeout(ctx, 2*time.Second)
			st, err := client.Status(sctx, ep)
			c()
			if err == nil && st.Header.MemberId == id {
				return i
			}
		}
		return -1
	}
	top := topology{
		replicas: reps, etcd: client, members: 3,
		leader: func() int {
			for i, ep := range eps {
				if !reps[i].alive() {
					continue
				}
				sctx, c := context.WithTimeout(ctx, 2*time.Second)
				st, err := client.Status(sctx, ep)
				c()
				if err == nil && st.Leader != 0 {
					if l := memberOf(st.Leader); l >= 0 {
						return l
					}
				}
			}
			t.Fatal("no etcd leader found")
			return -1
		},
		killMember: func(i int) { reps[i].kill() },
		restartMembers: func(is ...int) {
			var pending []func()
			for _, i := range is {
				pending = append(pending, reps[i].begin(t))
			}
			for _, wait := range pending {
				wait()
			}
		},
	}
	r := newRun(t, top, namespaces)
	r.setup(ctx)
	r.runFaults(ctx)
}
