package storage_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/quotad/quotad/internal/storage"
)

// TestEmbeddedPageOut: after a read of every value, the database file's pages are resident
// in this process; PageOutIfListed gives them back, and the data reads the same afterwards;
// it pages out again only once lists returned half the database more.
func TestEmbeddedPageOut(t *testing.T) {
	dir := t.TempDir()
	value := bytes.Repeat([]byte("v"), 64<<10)
	// 6 MiB: two reads of it stay under ListPageOutBytes, after which the list itself
	// would page out.
	e, s := writeAndRestart(t, dir, 96, func(int) []byte { return value })
	readAll := func() {
		t.Helper()
		lr, err := s.List(t.Context(), "/p/", storage.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(lr.KVs) != 96 {
			t.Fatalf("read %d values, want 96", len(lr.KVs))
		}
		for _, kv := range lr.KVs {
			if !bytes.Equal(kv.Value, value) {
				t.Fatalf("%s reads %d bytes, not the value written", kv.Key, len(kv.Value))
			}
		}
	}
	readAll()
	db := filepath.Join(dir, "etcd", "member", "snap", "db")
	before := resident(t, db)
	if before < 3<<20 {
		t.Fatalf("%d KiB of the database resident after reading 6 MiB of values, want at least 3 MiB", before>>10)
	}
	// Lists returned 6 MiB since the start: more than half the database.
	mapped, err := e.PageOutIfListed(s.ListedBytes())
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip("MADV_PAGEOUT unsupported by this kernel")
	}
	if err != nil {
		t.Fatal(err)
	}
	after := resident(t, db)
	t.Logf("database mapped %d MiB: %d KiB resident before PageOut, %d KiB after", mapped>>20, before>>10, after>>10)
	if mapped < before || after > before/4 {
		t.Errorf("PageOut of %d bytes mapped left %d KiB of %d KiB resident", mapped, after>>10, before>>10)
	}
	readAll()
	// Paged out again only after lists of half the database more.
	before = resident(t, db)
	if n, err := e.PageOutIfListed(s.ListedBytes() - 4<<20); err != nil || n != 0 {
		t.Errorf("PageOutIfListed after 2 MiB more listed: paged out %d bytes mapped (%v), want none", n, err)
	}
	if after := resident(t, db); after < before/2 {
		t.Errorf("%d KiB resident after a PageOutIfListed that should not page out, %d KiB before", after>>10, before>>10)
	}
	if n, err := e.PageOutIfListed(s.ListedBytes()); err != nil || n == 0 {
		t.Errorf("PageOutIfListed after 6 MiB more listed: paged out %d bytes mapped (%v), want the database", n, err)
	}
}

// TestEmbeddedSmallDatabaseStaysResident: a database in use no larger than
// WithResidentDatabase is never paged out, however much lists read of it: neither after
// lists of three times its size (each list crossing ListPageOutBytes would page out) nor
// by PageOutIfListed.
func TestEmbeddedSmallDatabaseStaysResident(t *testing.T) {
	dir := t.TempDir()
	value := bytes.Repeat([]byte("v"), 64<<10)
	// 6 MiB of values, under a 64 MiB threshold.
	e, s := writeAndRestart(t, dir, 96, func(int) []byte { return value }, storage.WithResidentDatabase(64<<20))
	db := filepath.Join(dir, "etcd", "member", "snap", "db")
	var before int64
	for i := 0; i < 3; i++ {
		lr, err := s.List(t.Context(), "/p/", storage.ListOptions{})
		if err != nil || len(lr.KVs) != 96 {
			t.Fatalf("read %d values (%v), want 96", len(lr.KVs), err)
		}
		if i == 0 {
			before = resident(t, db)
		}
	}
	if before < 3<<20 {
		t.Fatalf("%d KiB of the database resident after reading 6 MiB of values, want at least 3 MiB", before>>10)
	}
	if n, err := e.PageOutIfListed(s.ListedBytes()); err != nil || n != 0 {
		t.Errorf("PageOutIfListed after 18 MiB listed: paged out %d bytes mapped (%v), want none", n, err)
	}
	if after := resident(t, db); after < before/2 {
		t.Errorf("%d KiB resident after lists of three times the database, %d KiB after the first", after>>10, before>>10)
	}
}

// TestEmbeddedPageOutDuringList: a list of 128 MiB of values, read in pages as the server
// reads one, holds no more of the database file resident than ListPageOutBytes and a page
// or two: the page that crosses it pages out the pages read before. Every value reads as
// written, and the quiet spell's page-out (PageOutIfListed) still follows.
func TestEmbeddedPageOutDuringList(t *testing.T) {
	dir := t.TempDir()
	value := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, 64<<10) }
	const keys = 2048
	e, s := writeAndRestart(t, dir, keys, value)
	if _, err := e.PageOut(); errors.Is(err, errors.ErrUnsupported) {
		t.Skip("MADV_PAGEOUT unsupported by this kernel")
	}
	db := filepath.Join(dir, "etcd", "member", "snap", "db")
	first, err := s.List(t.Context(), "/p/", storage.ListOptions{Limit: 32})
	if err != nil {
		t.Fatal(err)
	}
	read, peak := 0, int64(0)
	for lr := first; ; {
		for _, kv := range lr.KVs {
			if want := fmt.Sprintf("/p/%04d", read); kv.Key != want || !bytes.Equal(kv.Value, value(read)) {
				t.Fatalf("value %d: read %s (%d bytes), want %s as written", read, kv.Key, len(kv.Value), want)
			}
			read++
		}
		peak = max(peak, resident(t, db))
		if !lr.More {
			break
		}
		next := lr.KVs[len(lr.KVs)-1].Key + "\x00"
		if lr, err = s.List(t.Context(), "/p/", storage.ListOptions{StartKey: next, Revision: first.Revision, Limit: 32, NoCount: true}); err != nil {
			t.Fatal(err)
		}
	}
	if read != keys {
		t.Fatalf("read %d values, want %d", read, keys)
	}
	t.Logf("listed %d MiB: at most %d MiB of the database resident", s.ListedBytes()>>20, peak>>20)
	if limit := int64(storage.ListPageOutBytes + 12<<20); peak > limit {
		t.Errorf("%d MiB of the database resident during a list of 128 MiB, want at most %d MiB", peak>>20, limit>>20)
	}
	// The quiet spell's page-out still follows the whole list.
	if n, err := e.PageOutIfListed(s.ListedBytes()); err != nil || n == 0 || resident(t, db) > 4<<20 {
		t.Errorf("PageOutIfListed after a list of the whole database: paged out %d bytes mapped (%v), %d KiB resident", n, err, resident(t, db)>>10)
	}
}

// TestEmbeddedPageOutUnderLoad: paging out while writes, lists and a defragmentation (which
// maps a new file) run changes no value: every key reads back as last written.
func TestEmbeddedPageOutUnderLoad(t *testing.T) {
	e := startEmbedded(t, t.TempDir(), storage.WithResidentDatabase(0))
	s := e.Store()
	defer s.Close()
	ctx := t.Context()
	// Defragmentation through a client of the member's endpoint (the in-process client
	// cannot defragment: see maybeDefrag).
	remote, err := storage.ConnectExternal(ctx, e.Endpoints(), clientTLS(t, e), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()
	const keys = 64
	want := make([][]byte, keys)
	done := make(chan error, 1)
	go func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := e.PageOut(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
				done <- err
				return
			}
		}
	}()
	for round := range 40 {
		for i := range keys {
			v := bytes.Repeat([]byte{byte('a' + (round+i)%26)}, 4096+round*64+i)
			if _, err := s.Txn(ctx, storage.Txn{Ops: []storage.Op{{Type: storage.OpPut, Key: fmt.Sprintf("/l/%02d", i), Value: v}}}); err != nil {
				t.Fatal(err)
			}
			want[i] = v
		}
		if round%10 == 5 {
			if _, err := remote.Defragment(ctx, e.Endpoints()[0]); err != nil {
				t.Fatalf("defragment: %v", err)
			}
		}
		lr, err := s.List(ctx, "/l/", storage.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i, kv := range lr.KVs {
			if !bytes.Equal(kv.Value, want[i]) {
				t.Fatalf("round %d: %s reads %d bytes, not the %d written", round, kv.Key, len(kv.Value), len(want[i]))
			}
		}
	}
	select {
	case err := <-done:
		t.Fatalf("PageOut: %v", err)
	default:
		close(done)
	}
}

// writeAndRestart puts keys values (/p/0000, /p/0001, ...) into an embedded member in dir,
// 16 to a transaction, and starts it again (paging out whatever its size, unless opts say
// otherwise): etcd then holds nothing in its write buffer, so every value is read through
// the mapped file. The store is closed with the test.
func writeAndRestart(t *testing.T, dir string, keys int, value func(i int) []byte, opts ...storage.EmbeddedOption) (*storage.Embedded, *storage.Etcd) {
	t.Helper()
	opts = append([]storage.EmbeddedOption{storage.WithResidentDatabase(0)}, opts...)
	e := startEmbedded(t, dir, opts...)
	s := e.Store()
	for i := 0; i < keys; i += 16 {
		var ops []storage.Op
		for j := i; j < min(i+16, keys); j++ {
			ops = append(ops, storage.Op{Type: storage.OpPut, Key: fmt.Sprintf("/p/%04d", j), Value: value(j)})
		}
		if _, err := s.Txn(t.Context(), storage.Txn{Ops: ops}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	e.Close()
	e = startEmbedded(t, dir, opts...)
	s = e.Store()
	t.Cleanup(func() { s.Close() })
	return e, s
}

// resident sums the Rss of this process's mappings of path (/proc/self/smaps).
func resident(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	in := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) > 0 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			in = len(f) >= 6 && strings.Join(f[5:], " ") == path
			continue
		}
		if in && len(f) == 3 && f[0] == "Rss:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			total += kb << 10
		}
	}
	if total == 0 && !strings.Contains(string(b), path) {
		t.Fatalf("%s is not mapped", path)
	}
	return total
}
