package storage

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// PageOut asks the kernel to reclaim the pages of the member's database file that are
// mapped into this process (madvise MADV_PAGEOUT), and returns the bytes of the mappings it
// asked for. etcd reads its database through a shared read-only mapping of the file: a list
// of every object touches all of it, and those pages stay resident, counted in the
// process's RSS, until the machine runs short of memory. Paging out changes no data: the
// pages are clean copies of the file, read again on their next access (so the next full
// read is slower), and MADV_PAGEOUT never discards the contents of whatever a range maps,
// even if etcd remapped the file since /proc/self/maps was read. On kernels without
// MADV_PAGEOUT (before 5.4) it does nothing and reports errors.ErrUnsupported.
func (e *Embedded) PageOut() (int64, error) {
	return pageOutFile(filepath.Join(e.etcd.Config().Dir, "member", "snap", "db"))
}

// PageOutIfListed pages out (PageOut) when the store's lists returned, since the last
// time it did, values amounting to at least half of the database in use (listed is the
// store's ListedBytes): a list of every object maps the whole file in, whereas the pages a
// steady load keeps using would only be read back. It reports the bytes of the mappings
// paged out (0 when it did not).
func (e *Embedded) PageOutIfListed(listed int64) (int64, error) {
	return e.pageOutIfListed(&e.pagedAt, listed, e.etcd.Server.Backend().SizeInUse()/2)
}

// ResidentDatabaseBytes is the database size in use up to which lists leave its pages
// resident (about 50,000 pods): paged out, they are read from the file again by the next
// list, whose selector then costs a read of the file. A list of 20,000 pods with a selector
// that matches none took 1.0 s instead of 0.1 s, 44% of its processor time in page faults.
// A larger database is paged out as its lists read it, so a list of 100,000 pods still
// holds no more of it resident than ListPageOutBytes.
const ResidentDatabaseBytes = 128 << 20

// ListPageOutBytes is how much the member's lists return between the page-outs that
// follow their reads (pageOutListing).
const ListPageOutBytes = 16 << 20

// pageOutListing is the member's stores' hook after each list (or page of one): once lists
// returned ListPageOutBytes since the last such page-out, the list that crossed it pages
// out before it goes on, while the other lists go on without waiting. A list of every
// object so holds about that much of the file resident while it runs, instead of all of
// it.
func (e *Embedded) pageOutListing(listed int64) {
	if listed-e.listPagedAt.Load() < ListPageOutBytes || !e.paging.CompareAndSwap(false, true) {
		return
	}
	defer e.paging.Store(false)
	if _, err := e.pageOutIfListed(&e.listPagedAt, listed, ListPageOutBytes); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		e.logger.Debug("paging out etcd's database after lists", "err", err)
	}
}

// pageOutIfListed pages out when lists returned at least least bytes since *at, unless the
// database in use is at most e.resident; either way it then sets *at to listed, so that
// the lists' pages do not ask again before least more bytes.
func (e *Embedded) pageOutIfListed(at *atomic.Int64, listed, least int64) (int64, error) {
	e.pageMu.Lock()
	defer e.pageMu.Unlock()
	if listed-at.Load() < least {
		return 0, nil
	}
	at.Store(listed)
	if e.etcd.Server.Backend().SizeInUse() <= e.resident {
		return 0, nil
	}
	return e.PageOut()
}

// pageOutFile pages out every mapping of path in this process.
func pageOutFile(path string) (int64, error) {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	var total int64
	for _, m := range mappingsOf(maps, path) {
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_PAGEOUT); errno != 0 {
			switch errno {
			case unix.EINVAL:
				return total, errors.ErrUnsupported
			case unix.ENOMEM:
				// Unmapped since /proc/self/maps was read (a defragmentation maps a new
				// file): nothing of it is resident any more.
				continue
			}
			return total, errno
		}
		total += int64(m.end - m.start)
	}
	return total, nil
}

// mapping is an address range of /proc/self/maps.
type mapping struct{ start, end uintptr }

// mappingsOf returns the ranges of a /proc/<pid>/maps listing that map path.
func mappingsOf(maps []byte, path string) []mapping {
	var out []mapping
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// address perms offset dev inode pathname (the rest of the line, spaces included)
		line := sc.Bytes()
		var f [5][]byte
		for i := range f {
			line = bytes.TrimLeft(line, " ")
			end := bytes.IndexByte(line, ' ')
			if end < 0 {
				end = len(line)
			}
			f[i], line = line[:end], line[end:]
		}
		if string(bytes.TrimLeft(line, " ")) != path {
			continue
		}
		lo, hi, ok := bytes.Cut(f[0], []byte("-"))
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(string(lo), 16, 64)
		end, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		out = append(out, mapping{uintptr(start), uintptr(end)})
	}
	return out
}
