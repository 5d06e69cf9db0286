package storage_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quotad/quotad/internal/storage"
)

// BenchmarkEmbeddedTxnOneWriter is the embedded etcd's latency for one writer: a guarded
// transaction putting a 2 KiB object and a 1 KiB quota, as a lone client's create commits
// (raft, the WAL's fdatasync, the apply). ns/op is the latency: nothing else runs.
func BenchmarkEmbeddedTxnOneWriter(b *testing.B) {
	e, err := storage.StartEmbedded(b.Context(), b.TempDir(), nil, storage.WithFastElection())
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	s := e.Store()
	defer s.Close()
	pod, quota := []byte(strings.Repeat("p", 2048)), []byte(strings.Repeat("q", 1024))
	res, err := s.Txn(b.Context(), storage.Txn{Ops: []storage.Op{{Type: storage.OpPut, Key: "/q", Value: quota}}})
	if err != nil {
		b.Fatal(err)
	}
	rev := res.Revision
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		key := fmt.Sprintf("/p/%d", i)
		res, err := s.Txn(b.Context(), storage.Txn{
			Compares: []storage.Compare{{Target: storage.ModRevisionEquals, Key: key}, {Target: storage.ModRevisionEquals, Key: "/q", Revision: rev}},
			Ops:      []storage.Op{{Type: storage.OpPut, Key: key, Value: pod}, {Type: storage.OpPut, Key: "/q", Value: quota}},
		})
		if err != nil {
			b.Fatal(err)
		}
		rev = res.Revision
	}
}
