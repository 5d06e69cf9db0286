package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/server"
	"github.com/quotad/quotad/internal/server/servertest"
	"github.com/quotad/quotad/internal/storage"
)

// listCounter counts the storage lists under one prefix.
type listCounter struct {
	storage.Store
	prefix string
	n      atomic.Int64
}

func (c *listCounter) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if strings.HasPrefix(prefix, c.prefix) {
		c.n.Add(1)
	}
	return c.Store.List(ctx, prefix, opts)
}

// get returns the status and body of an https GET of path with client.
func get(t *testing.T, client *http.Client, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// waitForMetrics scrapes /metrics as the admin until it has every line.
func waitForMetrics(t *testing.T, s *servertest.Server, lines ...string) {
	t.Helper()
	tr, err := rest.TransportFor(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	admin := &http.Client{Transport: tr}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for {
		code, body := get(t, admin, s.URL+"/metrics")
		missing := ""
		for _, l := range lines {
			if !strings.Contains(body, "\n"+l+"\n") {
				missing = l
			}
		}
		if code == http.StatusOK && missing == "" {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("/metrics (%d) still lacks %s after a minute:\n%s", code, missing, body)
		}
	}
}

// TestSecurityMetricsNeedAuthenticationAndReadMemory: /metrics answers an anonymous
// request with the API's 401 Status; an authenticated scrape shows each quota's hard and
// used values as charges and credits commit, and reads no quota from storage.
func TestSecurityMetricsNeedAuthenticationAndReadMemory(t *testing.T) {
	t.Parallel()
	lists := &listCounter{prefix: "/registry/resourcequotas/"}
	s := servertest.Start(t, func(c *server.Config) {
		c.WrapStorage = func(st storage.Store) storage.Store {
			lists.Store = st
			return lists
		}
	})
	ctx := ctxT(t)

	// 1. Anonymous: the same 401 as an API path.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CAPEM)
	anonymous := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	code, body := get(t, anonymous, s.URL+"/metrics")
	apiCode, apiBody := get(t, anonymous, s.URL+"/api/v1/namespaces")
	if code != http.StatusUnauthorized || body != apiBody || apiCode != http.StatusUnauthorized {
		t.Fatalf("anonymous /metrics: %d %s; want the API's %d %s", code, body, apiCode, apiBody)
	}
	if strings.Contains(body, "quotad_") {
		t.Fatalf("anonymous /metrics shows metrics: %s", body)
	}

	// 2. Authenticated: values follow a charge and a credit.
	tr, err := rest.TransportFor(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	admin := &http.Client{Transport: tr}
	const hard, used = `quotad_resourcequota{namespace="mx",resource="pods",resourcequota="q",type="hard"}`, `quotad_resourcequota{namespace="mx",resource="pods",resourcequota="q",type="used"}`
	mkNamespace(t, s, "mx")
	mkQuota(t, s, "mx", "q", map[string]string{"pods": "2"})
	waitForMetrics(t, s, hard+" 2", used+" 0")
	if _, err := s.Client.CoreV1().Pods("mx").Create(ctx, pod("a", "", ""), metaCreate()); err != nil {
		t.Fatal(err)
	}
	waitForMetrics(t, s, hard+" 2", used+" 1")
	if err := s.Client.CoreV1().Pods("mx").Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForMetrics(t, s, hard+" 2", used+" 0")

	// 3. Scrapes list no quota from storage.
	before := lists.n.Load()
	for range 5 {
		if code, body := get(t, admin, s.URL+"/metrics"); code != http.StatusOK || !strings.Contains(body, used+" 0") {
			t.Fatalf("/metrics: %d %s", code, body)
		}
	}
	if n := lists.n.Load() - before; n != 0 {
		t.Fatalf("5 scrapes listed resource quotas from storage %d times", n)
	}
}
