package apiserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	goruntime "runtime"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/registry"
)

// ListPageSize is how many stored objects an unlimited list reads, encodes and writes at a
// time when storage reads a page without counting the rest of its range (an embedded
// etcd): a page then holds a seat of long reads for about a millisecond, which is what a
// cheap request may wait for it (fair.go). CountedListPageSize is the page otherwise,
// where every page costs etcd a count of the range after it.
const (
	ListPageSize        = 100
	CountedListPageSize = 500
)

// listPageSize is the page of unlimited lists for the server's storage.
func (s *Server) listPageSize() int64 {
	if s.cfg.Store.ReadsUncountedPages() {
		return ListPageSize
	}
	return CountedListPageSize
}

// listStream writes a list document item by item: the document's head (everything before
// its items) with the first item, the items, then the closing; a list without items is
// its document as a whole. The bytes are those of encoding the whole list at once.
type listStream struct {
	w   http.ResponseWriter
	buf *bufio.Writer
	// page is the encoding of the page being encoded, written out by flushPage.
	page *bytes.Buffer
	// paced: the page being encoded holds a seat of long reads (it yields as it goes).
	paced bool
	// head is the document up to and including its items' "["; empty is the whole
	// document when there are no items.
	head, empty []byte
	n           int
}

// streamBufferSize is the buffer between the encoder and the connection.
const streamBufferSize = 32 << 10

// setDocument sets the list's document from its encoding with no items (emptyItems ends
// in `[]}`: the items are its last field) and, when an empty list is written otherwise
// (a Table's null rows), that encoding.
func (l *listStream) setDocument(emptyItems, empty []byte) error {
	if !bytes.HasSuffix(emptyItems, []byte("[]}")) {
		return fmt.Errorf("list encoding does not end with its items: %.40q", emptyItems)
	}
	l.head = emptyItems[:len(emptyItems)-2]
	l.empty = emptyItems
	if empty != nil {
		l.empty = empty
	}
	return nil
}

// item writes one encoded item (starting the answer before the first).
func (l *listStream) item(b []byte) {
	if l.n == 0 {
		l.w.Header().Set("Content-Type", "application/json")
		l.w.WriteHeader(http.StatusOK)
		l.buf = bufio.NewWriterSize(l.w, streamBufferSize)
		l.page.Write(l.head)
	} else {
		l.page.WriteByte(',')
	}
	l.n++
	l.page.Write(b)
}

// flushPage writes the page encoded so far to the client.
func (l *listStream) flushPage() error {
	if l.page.Len() == 0 {
		return nil
	}
	_, err := l.buf.Write(l.page.Bytes())
	l.page.Reset()
	return err
}

// end finishes the document.
func (l *listStream) end() error {
	if l.n == 0 {
		writeRaw(l.w, http.StatusOK, l.empty)
		return nil
	}
	if err := l.flushPage(); err != nil {
		return err
	}
	if _, err := l.buf.WriteString("]}"); err != nil {
		return err
	}
	return l.buf.Flush()
}

// writeRaw writes an encoded JSON document.
func writeRaw(w http.ResponseWriter, code int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// listDocument is the JSON of a list of res.
type listDocument struct {
	Kind       string            `json:"kind"`
	APIVersion string            `json:"apiVersion"`
	Metadata   metav1.ListMeta   `json:"metadata"`
	Items      []json.RawMessage `json:"items"`
}

// streamList serves an unlimited list: storage is read a page at a time and each page's
// objects are encoded and written before the next is read, so a list costs one page of
// memory however long it is. Errors before the first item are answered as usual; after
// it, the answer can only be cut off. Each page after the first is read, encoded and
// written holding a seat of long reads (see pager; not for system:masters).
func (s *Server) streamList(w http.ResponseWriter, r *http.Request, res *registry.Resource, ns string, acc accept, opts registry.ListOptions) {
	l := &listStream{w: w, page: s.pageBuffer()}
	defer s.putPageBuffer(l.page)
	now := s.cfg.Clock.Now()
	policy := includePolicy(r)
	table := acc.table && s.cfg.Table != nil
	started := false
	var seat *longSeat
	release := func() {
		if seat != nil {
			seat.done()
			seat, l.paced = nil, false
		}
	}
	defer release()
	if pacedLongReads(r.Context()) {
		ticket := s.requestTicket(r.Context())
		opts.Pace = func(ctx context.Context) error {
			var err error
			if seat, err = s.pager.take(ctx, ticket); err != nil {
				return err
			}
			l.paced = true
			return nil
		}
	}
	// pageDone writes a page's items (after the document's head, before the first).
	pageDone := func(rv string, write func() error) error {
		if !started {
			started = true
			if err := s.listHead(l, res, acc, table, now, policy, metav1.ListMeta{ResourceVersion: rv}); err != nil {
				return err
			}
		}
		err := write()
		if err == nil {
			if seat != nil {
				seat.writing()
			}
			err = l.flushPage()
		}
		release()
		return err
	}
	var err error
	if !table && !acc.partial && registry.StoredListable(res) {
		// The kind's own JSON: the stored bytes, not decoded and encoded again.
		err = s.cfg.Store.ListEachStored(r.Context(), res, ns, opts, s.listPageSize(), func(rv string, items [][]byte) error {
			return pageDone(rv, func() error {
				for _, b := range items {
					l.item(b)
				}
				return nil
			})
		})
	} else {
		err = s.cfg.Store.ListEach(r.Context(), res, ns, opts, s.listPageSize(), func(rv string, items []runtime.Object) error {
			return pageDone(rv, func() error { return s.listItems(l, res, acc, table, now, policy, items) })
		})
	}
	if err == nil {
		err = l.end()
	}
	if err == nil {
		return
	}
	if l.n == 0 {
		writeError(w, err)
		return
	}
	panic(http.ErrAbortHandler)
}

// listHead sets the document of the list: the list kind, a Table or a
// PartialObjectMetadataList.
func (s *Server) listHead(l *listStream, res *registry.Resource, acc accept, table bool, now time.Time, policy metav1.IncludeObjectPolicy, lm metav1.ListMeta) error {
	switch {
	case table:
		t, err := s.cfg.Table(res, nil, now, policy)
		if err != nil {
			return err
		}
		t.APIVersion, t.Kind = "meta.k8s.io/"+acc.tableVer, "Table"
		t.ListMeta = lm
		empty, err := json.Marshal(t)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		t.Rows = []metav1.TableRow{}
		emptyItems, err := json.Marshal(t)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		return l.setDocument(emptyItems, empty)
	case acc.partial:
		pl := metav1.PartialObjectMetadataList{ListMeta: lm, Items: []metav1.PartialObjectMetadata{}}
		pl.APIVersion, pl.Kind = "meta.k8s.io/"+acc.tableVer, "PartialObjectMetadataList"
		b, err := json.Marshal(pl)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		return l.setDocument(b, nil)
	default:
		b, err := json.Marshal(listDocument{res.ListKind, res.GVR.GroupVersion().String(), lm, []json.RawMessage{}})
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		return l.setDocument(b, nil)
	}
}

// listItems writes one page's objects as the list's items.
func (s *Server) listItems(l *listStream, res *registry.Resource, acc accept, table bool, now time.Time, policy metav1.IncludeObjectPolicy, items []runtime.Object) error {
	if len(items) == 0 {
		return nil
	}
	n := 0
	put := func(v any) error {
		if n++; l.paced && n%registry.PacedYieldEvery == 0 {
			// A paced page is background work: let waiting requests run.
			goruntime.Gosched()
		}
		b, err := json.Marshal(v)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		l.item(b)
		return nil
	}
	switch {
	case table:
		t, err := s.listTable()(res, items, now, policy)
		if err != nil {
			return err
		}
		for i := range t.Rows {
			if err := put(&t.Rows[i]); err != nil {
				return err
			}
		}
	case acc.partial:
		for _, o := range items {
			if err := put(partialOf(o, acc.tableVer)); err != nil {
				return err
			}
		}
	default:
		for _, o := range items {
			o.GetObjectKind().SetGroupVersionKind(res.GVK())
			if err := put(o); err != nil {
				return err
			}
		}
	}
	return nil
}

// maxPooledPage is the largest page buffer kept for the next list.
const maxPooledPage = 8 << 20

// pageBuffer returns an empty buffer for a list's page encoding, reused across lists.
func (s *Server) pageBuffer() *bytes.Buffer {
	if b, ok := s.pages.Get().(*bytes.Buffer); ok {
		return b
	}
	return new(bytes.Buffer)
}

func (s *Server) putPageBuffer(b *bytes.Buffer) {
	if b.Cap() <= maxPooledPage {
		b.Reset()
		s.pages.Put(b)
	}
}
