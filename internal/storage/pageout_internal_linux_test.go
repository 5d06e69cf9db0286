package storage

import (
	"reflect"
	"testing"
)

// TestMappingsOf: the ranges mapping a path are found, spaces in the path included; other
// files, deleted ones and anonymous mappings are not.
func TestMappingsOf(t *testing.T) {
	maps := []byte(`7f0000000000-7f0000100000 r--s 00000000 fd:01 123     /data dir/etcd/member/snap/db
7f0000100000-7f0000200000 rw-p 00000000 00:00 0
7f0000200000-7f0000300000 r--s 00000000 fd:01 124     /data dir/etcd/member/snap/db (deleted)
7f0000300000-7f0000400000 r--s 00000000 fd:01 125     /data/etcd/member/snap/db
7f0000400000-7f0000500000 r--s 00100000 fd:01 123     /data dir/etcd/member/snap/db
`)
	got := mappingsOf(maps, "/data dir/etcd/member/snap/db")
	want := []mapping{{0x7f0000000000, 0x7f0000100000}, {0x7f0000400000, 0x7f0000500000}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mappingsOf = %x, want %x", got, want)
	}
}
