package apiserver

import (
	"errors"
	"io"
	"net/http"
	"os"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// A write's body is received before the write takes an in-flight seat, so a client that
// sends its body slowly holds no seat while it does: it costs only the memory of the bytes
// it actually sent. Those bytes are counted against one bound for the whole server
// (MaxBodyBytesInFlight); a body that would pass it is refused with the in-flight 429.

// DefaultMaxBodyBytesInFlight is the default bound on the memory of request bodies being
// received or served at once.
const DefaultMaxBodyBytesInFlight = 64 << 20

// errBodyBudget: the server holds as many body bytes as it may.
var errBodyBudget = errors.New("request bodies in flight at their bound")

// bodyBudget counts the bytes of request bodies held at once.
type bodyBudget struct {
	max  int64
	mu   sync.Mutex
	used int64
}

// take reserves n bytes; false when that would pass the bound.
func (b *bodyBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		return false
	}
	b.used += n
	return true
}

func (b *bodyBudget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// receivedBody is a request body already read (or its read's error), which readBody
// returns as is.
type receivedBody struct {
	data []byte
	err  error
	off  int
}

func (b *receivedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.off >= len(b.data) {
		return 0, io.EOF
	}
	n := copy(p, b.data[b.off:])
	b.off += n
	return n, nil
}

func (b *receivedBody) Close() error { return nil }

// receive reads r's body up to MaxBodyBytes+1, its buffer growing with the bytes that
// arrive, each growth reserved from the budget. It returns the bytes reserved (given back
// by the caller once the request is done) and errBodyBudget when the budget ran out.
func (b *bodyBudget) receive(r *http.Request) (data []byte, reserved int64, err error) {
	size := int64(receiveBuffer)
	if n := r.ContentLength; n >= 0 && n < size {
		size = n + 1 // room to see the end without growing
	}
	if !b.take(size) {
		return nil, 0, errBodyBudget
	}
	reserved = size
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > MaxBodyBytes {
				return buf, reserved, nil
			}
			grow := min(int64(cap(buf)), MaxBodyBytes+1-int64(cap(buf)))
			if !b.take(grow) {
				return nil, reserved, errBodyBudget
			}
			reserved += grow
			nb := make([]byte, len(buf), int64(cap(buf))+grow)
			copy(nb, buf)
			buf = nb
		}
		n, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, reserved, nil
		}
		if err != nil {
			return nil, reserved, err
		}
	}
}

// bodyError is readBody's answer to a failed read.
func bodyError(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return apierrors.NewTimeoutError(requestTimedOut, 0)
	}
	return apierrors.NewBadRequest(err.Error())
}

// receiveBody reads the body of a write (before it takes a seat) under the body budget,
// and hands the handler the bytes read. ok is false when it answered the 429 of the
// budget. done gives the reserved bytes back.
func (s *Server) receiveBody(w answerer, r *http.Request) (done func(), ok bool) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength > MaxBodyBytes {
		return func() {}, true
	}
	data, reserved, err := s.bodies.receive(r)
	done = func() { s.bodies.give(reserved) }
	if errors.Is(err, errBodyBudget) {
		done()
		tooManyRequests(w)
		return nil, false
	}
	rb := &receivedBody{data: data}
	if err != nil {
		rb.err = err
	}
	r.Body = rb
	return done, true
}
