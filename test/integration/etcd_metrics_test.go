package integration

import (
	"strings"
	"testing"

	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
)

// TestEmbeddedEtcdMetrics: a server on its embedded etcd serves the member's own metrics
// on /metrics with its own (a stall of the member's disk or apply shows there, as on a
// separate etcd's /metrics); a server on an external etcd serves none of them (they
// would measure nothing in its process).
func TestEmbeddedEtcdMetrics(t *testing.T) {
	s := servertest.Start(t)
	body := scrape(t, s)
	expectMetrics(t, body, "etcd_server_has_leader 1", "etcd_server_is_leader 1")
	for _, family := range []string{"# TYPE etcd_disk_wal_fsync_duration_seconds histogram", "# TYPE etcd_disk_backend_commit_duration_seconds histogram", "# TYPE etcd_mvcc_put_total counter", "# TYPE quotad_apiserver_panics_total counter", "# TYPE go_goroutines gauge"} {
		if !strings.Contains(body, "\n"+family+"\n") {
			t.Errorf("/metrics of a server on its embedded etcd lacks %s", family)
		}
	}

	etcd, err := storage.StartEmbedded(t.Context(), t.TempDir(), nil, storage.WithUnsafeNoFsync())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { etcd.Close() })
	ext := servertest.Start(t, servertest.WithEtcd(etcd))
	body = scrape(t, ext)
	if strings.Contains(body, "\netcd_") || strings.Contains(body, "\n# TYPE etcd_") {
		t.Error("/metrics of a server on an external etcd serves etcd_ families")
	}
	if !strings.Contains(body, "\n# TYPE go_goroutines gauge\n") {
		t.Error("/metrics of a server on an external etcd lacks its own families")
	}
}
