package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/quotad/quotad/internal/storage"
	"github.com/quotad/quotad/internal/storage/storagetest"
)

// TestEtcdMembers: `quotad etcd members` prints the running embedded etcd's members as a
// kubectl-style table (IDs and ports normalised), and `quotad etcd remove` of a name no
// member has fails with a clear error.
func TestEtcdMembers(t *testing.T) {
	dir := t.TempDir()
	ports := storagetest.FreePorts(t, 2)
	cc := storage.ClusterConfig{Name: "alpha", AdvertiseHost: "127.0.0.1", PeerPort: ports[0], ClientPort: ports[1]}
	e, err := storage.StartEmbedded(t.Context(), dir, nil, storage.WithCluster(cc), storage.WithUnsafeNoFsync())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()

	var out, errOut bytes.Buffer
	if code := run([]string{"etcd", "members", "--data-dir", dir}, &out, &errOut); code != 0 {
		t.Fatalf("etcd members: exit %d: %s", code, errOut.String())
	}
	got := regexp.MustCompile(`127\.0\.0\.1:\d+`).ReplaceAllString(out.String(), "127.0.0.1:PORT")
	got = regexp.MustCompile(`(?m)^(alpha\s+)[0-9a-f]+`).ReplaceAllString(got, "${1}ID")
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	want := []string{
		"NAME ID PEER URLS CLIENT URLS LEARNER LEADER",
		"alpha ID https://127.0.0.1:PORT https://127.0.0.1:PORT false true",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("etcd members printed:\n%s\nwant (spaces collapsed):\n%s", out.String(), strings.Join(want, "\n"))
	}
	// Columns are aligned as kubectl aligns them: each header starts where its values do.
	header, row := strings.Split(out.String(), "\n")[0], strings.Split(out.String(), "\n")[1]
	if i := strings.Index(header, "PEER URLS"); i < 0 || !strings.HasPrefix(row[i:], "https://") {
		t.Fatalf("columns not aligned:\n%s", out.String())
	}

	out.Reset()
	errOut.Reset()
	if code := run([]string{"etcd", "remove", "nobody", "--data-dir", dir}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), `no such etcd member: "nobody"`) {
		t.Fatalf("etcd remove nobody: exit %d, stderr %q", code, errOut.String())
	}
	for _, args := range [][]string{{"etcd"}, {"etcd", "list"}, {"etcd", "remove"}} {
		errOut.Reset()
		if code := run(args, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "Usage:\n  quotad etcd members") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut.String())
		}
	}
}
