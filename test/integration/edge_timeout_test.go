package integration

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
)

// timeoutAnswer is kube-apiserver's 504 from its timeout filter, byte for byte: the Status
// without kind and apiVersion, as JSON with a newline.
const timeoutAnswer = `{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}` + "\n"

// stallStore holds reads of keys ending in "/stall" until their context ends and reports
// how each ended.
func stallStore(ended chan<- error) servertest.Option {
	return withGetHook(func(ctx context.Context, key string) (bool, storage.KV, error) {
		if !strings.HasSuffix(key, "/stall") {
			return false, storage.KV{}, nil
		}
		<-ctx.Done()
		ended <- ctx.Err()
		return true, storage.KV{}, ctx.Err()
	})
}

// TestRequestTimeoutQuery: a request's ?timeout= is its deadline: a read that cannot finish
// gets upstream's 504 at the deadline, and the storage work under it sees the deadline on
// its context. A malformed timeout is upstream's 400.
func TestRequestTimeoutQuery(t *testing.T) {
	t.Parallel()
	ended := make(chan error, 4)
	s := servertest.Start(t, stallStore(ended))
	ctx := edgeCtx(t)

	resp, body := edgeDo(t, ctx, s, http.MethodGet, "/api/v1/namespaces/default/configmaps/stall?timeout=1s", "", "")
	if resp.StatusCode != http.StatusGatewayTimeout || body != timeoutAnswer {
		t.Errorf("got %d %q, want 504 %q", resp.StatusCode, body, timeoutAnswer)
	}
	select {
	case err := <-ended:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("storage read ended with %v, want the request's deadline", err)
		}
	case <-ctx.Done():
		t.Fatal("the storage read never ended")
	}

	// client-go sees upstream's timeout error.
	_, err := s.Client.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/default/configmaps/stall").Param("timeout", "1s").Do(ctx).Get()
	if !apierrors.IsTimeout(err) {
		t.Errorf("client-go: %v, want a timeout", err)
	}
	<-ended

	resp, body = edgeDo(t, ctx, s, http.MethodGet, "/api/v1/namespaces/default/configmaps?timeout=abc", "", "")
	want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"invalid timeout specified in the request URL - time: invalid duration \"abc\"","reason":"BadRequest","code":400}`
	if resp.StatusCode != http.StatusBadRequest || body != want {
		t.Errorf("bad timeout: got %d %s, want 400 %s", resp.StatusCode, body, want)
	}
	// A timeout that does not end is no deadline of its own: the request is served.
	if resp, body := edgeDo(t, ctx, s, http.MethodGet, "/api/v1/namespaces/default/configmaps?timeout=10m", "", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("timeout=10m: %d %s", resp.StatusCode, body)
	}
}

// TestRequestTimeoutDefault: without ?timeout=, a request has the server's RequestTimeout
// (kube-apiserver's --request-timeout); longer ?timeout= values cannot raise it.
func TestRequestTimeoutDefault(t *testing.T) {
	t.Parallel()
	ended := make(chan error, 4)
	s := servertest.Start(t, stallStore(ended), func(c *server.Config) { c.RequestTimeout = 2 * time.Second })
	ctx := edgeCtx(t)
	for _, path := range []string{
		"/api/v1/namespaces/default/configmaps/stall",
		"/api/v1/namespaces/default/configmaps/stall?timeout=1h",
	} {
		resp, body := edgeDo(t, ctx, s, http.MethodGet, path, "", "")
		if resp.StatusCode != http.StatusGatewayTimeout || body != timeoutAnswer {
			t.Errorf("%s: got %d %q, want 504", path, resp.StatusCode, body)
		}
		if err := <-ended; !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: storage read ended with %v", path, err)
		}
	}
}

// TestSlowBodyCutOff: a body that stops arriving is cut off at the request's deadline:
// the client gets the 504 and the connection is closed, instead of the server waiting on
// the rest forever.
func TestSlowBodyCutOff(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := edgeCtx(t)
	conn := edgeConn(t, ctx, s, false)
	sendHead(t, conn, s, http.MethodPost, "/api/v1/namespaces/default/configmaps?timeout=2s",
		map[string]string{"Content-Type": "application/json", "Content-Length": "1000"}, `{"apiVersion":"v1","kind":"ConfigMap",`)
	br := bufio.NewReader(conn)
	resp, body := readAnswer(t, br)
	if resp.StatusCode != http.StatusGatewayTimeout || body != timeoutAnswer {
		t.Errorf("got %d %q, want 504", resp.StatusCode, body)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after the answer: %v, want the connection closed", err)
	}
	// Nothing was created.
	cms, err := s.Client.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name!=kube-root-ca.crt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cms.Items) != 0 {
		t.Errorf("config maps created: %d", len(cms.Items))
	}
}
