package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/server/servertest"
)

func TestSnapshotArgumentErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, "a command is required: save or restore"},
		{[]string{"copy", "f"}, `unknown command "copy" for "quotad snapshot"`},
		{[]string{"save"}, "snapshot save: a snapshot FILE is required"},
		{[]string{"restore"}, "snapshot restore: a snapshot FILE is required"},
		{[]string{"save", "f", "g"}, `snapshot save: unexpected argument "g"`},
		{[]string{"restore", "f"}, "snapshot restore: --data-dir is required"},
		{[]string{"save", "f", "--from-data-dir=x"}, "snapshot save: --from-data-dir is a restore flag"},
		{[]string{"save", "f", "--data-dir=d", "--etcd-servers=https://e:2379"}, "snapshot save: --data-dir and --etcd-servers are exclusive"},
		{[]string{"save", "f", "--etcd-cafile=ca"}, "snapshot save: --etcd-cafile, --etcd-certfile and --etcd-keyfile go with --etcd-servers"},
		{[]string{"restore", "f", "--data-dir=d", "--etcd-servers=https://e:2379"}, "snapshot restore: --etcd-* flags are save flags"},
		{[]string{"save", "f", "--bogus"}, "unknown flag: --bogus"},
		// Reaching the data: no quotad has run on the dir, no such snapshot file.
		{[]string{"save", "f", "--data-dir", filepath.Join(t.TempDir(), "none")}, "no embedded etcd has run on data dir"},
		{[]string{"restore", filepath.Join(t.TempDir(), "missing.db"), "--data-dir", t.TempDir()}, "etcd snapshot: stat"},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		code := run(append([]string{"snapshot"}, c.args...), &out, &errOut)
		if code != 1 || !strings.Contains(errOut.String(), "Error: "+c.want) {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant Error: %s", c.args, code, errOut.String(), c.want)
		}
	}
	var out bytes.Buffer
	if code := run([]string{"snapshot", "--help"}, &out, &out); code != 0 || !strings.Contains(out.String(), "quotad snapshot restore FILE --data-dir DIR") {
		t.Errorf("--help: exit %d:\n%s", code, out.String())
	}
}

// TestSnapshotSaveRestore saves a snapshot of a running server with objects and a quota
// in use, restores it into a new data dir (with the old credentials) and starts a server
// there: same objects, resourceVersions and quota status, same admin token and CA.
func TestSnapshotSaveRestore(t *testing.T) {
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := "snap"
	if _, err := s.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	q := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: ns},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			corev1.ResourcePods: resource.MustParse("10"), corev1.ResourceRequestsCPU: resource.MustParse("4"),
			"count/configmaps": resource.MustParse("20"),
		}},
	}
	if _, err := s.Client.CoreV1().ResourceQuotas(ns).Create(ctx, q, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"a", "b", "c"} {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse([]string{"100m", "250m", "1"}[i])},
			}}}},
		}
		if _, err := s.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"k": name}}
		if _, err := s.Client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// What the snapshot must hold.
	before := snapshotState(ctx, t, s, ns)
	if got := before.quota.Status.Used[corev1.ResourcePods]; got.String() != "3" {
		t.Fatalf("pods used before the snapshot: %s", got.String())
	}

	// 1. quotad snapshot save, against the running server's data dir.
	file := filepath.Join(t.TempDir(), "snap.db")
	var out, errOut bytes.Buffer
	if code := run([]string{"snapshot", "save", file, "--data-dir", s.DataDir}, &out, &errOut); code != 0 {
		t.Fatalf("save: exit %d: %s", code, errOut.String())
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("snapshot file: %v %v", fi, err)
	}
	// Changes after the snapshot are not restored.
	if err := s.Client.CoreV1().Pods(ns).Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// 2. quotad snapshot restore into a new data dir, with the old credentials.
	dir := filepath.Join(t.TempDir(), "restored")
	out.Reset()
	errOut.Reset()
	if code := run([]string{"snapshot", "restore", file, "--data-dir", dir, "--from-data-dir", s.DataDir}, &out, &errOut); code != 0 {
		t.Fatalf("restore: exit %d: %s", code, errOut.String())
	}
	// A second restore into the same dir is refused.
	errOut.Reset()
	if code := run([]string{"snapshot", "restore", file, "--data-dir", dir}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "data dir already holds etcd data") {
		t.Fatalf("second restore: exit %d: %s", code, errOut.String())
	}

	// 3. A server on the restored dir serves the snapshot's state.
	r := servertest.Start(t, servertest.WithDataDir(dir))
	after := snapshotState(ctx, t, r, ns)
	if !apiequality.Semantic.DeepEqual(before.objects, after.objects) {
		t.Errorf("objects differ:\nbefore %v\nafter  %v", before.objects, after.objects)
	}
	if !apiequality.Semantic.DeepEqual(before.quota.Status, after.quota.Status) || before.quota.ResourceVersion != after.quota.ResourceVersion {
		t.Errorf("quota differs:\nbefore %s %+v\nafter  %s %+v", before.quota.ResourceVersion, before.quota.Status, after.quota.ResourceVersion, after.quota.Status)
	}
	if r.Token != s.Token || !bytes.Equal(r.CAPEM, s.CAPEM) {
		t.Errorf("credentials were not carried over by --from-data-dir")
	}
}

// state is what a snapshot round trip must keep of a namespace.
type state struct {
	objects map[string]string // kind/name → resourceVersion
	quota   *corev1.ResourceQuota
}

func snapshotState(ctx context.Context, t *testing.T, s *servertest.Server, ns string) state {
	t.Helper()
	st := state{objects: map[string]string{}}
	pods, err := s.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		st.objects["pod/"+p.Name] = p.ResourceVersion
	}
	cms, err := s.Client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cms.Items {
		st.objects["configmap/"+c.Name] = c.ResourceVersion
	}
	nsObj, err := s.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st.objects["namespace/"+ns] = nsObj.ResourceVersion
	if st.quota, err = s.Client.CoreV1().ResourceQuotas(ns).Get(ctx, "q", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	return st
}
