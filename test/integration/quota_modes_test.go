package integration

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/server/servertest"
)

// warningSink collects the Warning headers client-go hands its warning handler.
type warningSink struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warningSink) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

// take returns the warnings received since the last take.
func (w *warningSink) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.msgs
	w.msgs = nil
	return out
}

// warnedClient returns a client of s whose warnings are collected.
func warnedClient(t *testing.T, s *servertest.Server) (kubernetes.Interface, *warningSink) {
	t.Helper()
	w := &warningSink{}
	cfg := rest.CopyConfig(s.Config)
	cfg.WarningHandler = w
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, w
}

// expectWarnings fails unless got is exactly want.
func expectWarnings(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("warnings:\n got %q\nwant %q", got, want)
	}
}

// annotatedQuota creates a quota with quotad's annotations (mode and warn-at; empty: none).
func annotatedQuota(t *testing.T, s *servertest.Server, ns, name, mode, warnAt string, hard corev1.ResourceList) *corev1.ResourceQuota {
	t.Helper()
	ann := map[string]string{}
	if mode != "" {
		ann[quota.EnforcementAnnotation] = mode
	}
	if warnAt != "" {
		ann[quota.WarnAtAnnotation] = warnAt
	}
	q, err := s.Client.CoreV1().ResourceQuotas(ns).Create(ctxT(t), &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann}, Spec: corev1.ResourceQuotaSpec{Hard: hard},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// setMode sets a quota's enforcement annotation.
func setMode(t *testing.T, s *servertest.Server, ns, name, mode string) {
	t.Helper()
	q, err := s.Client.CoreV1().ResourceQuotas(ns).Get(ctxT(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if q.Annotations == nil {
		q.Annotations = map[string]string{}
	}
	q.Annotations[quota.EnforcementAnnotation] = mode
	if _, err := s.Client.CoreV1().ResourceQuotas(ns).Update(ctxT(t), q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// quotaEvents returns the Events of namespace ns about the object named name.
func quotaEvents(t *testing.T, s *servertest.Server, ns, name string) []corev1.Event {
	t.Helper()
	l, err := s.Client.CoreV1().Events(ns).List(ctxT(t), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// awaitQuotaEvents waits until namespace ns has an Event about the object named name (the
// server records them asynchronously), and returns its Events about it.
func awaitQuotaEvents(t *testing.T, s *servertest.Server, ns, name string) []corev1.Event {
	t.Helper()
	var evs []corev1.Event
	waitFor(t, func() bool {
		evs = quotaEvents(t, s, ns, name)
		return len(evs) > 0
	})
	return evs
}

// flushQuotaEvents returns once every quota Event the server was asked to record before
// the call has been written: it makes a Warn quota in a namespace of its own record one
// more and waits for it (the server's recorder writes its events one at a time, in order).
// A check that no Event was recorded runs after it.
func flushQuotaEvents(t *testing.T, s *servertest.Server) {
	t.Helper()
	ns := fmt.Sprintf("flush-%d", time.Now().UnixNano())
	mkNamespace(t, s, ns)
	annotatedQuota(t, s, ns, "marker", "Warn", "", rl("pods", "0"))
	if _, err := s.Client.CoreV1().Pods(ns).Create(ctxT(t), pod("marker", "", ""), metav1.CreateOptions{}); err != nil {
		t.Fatalf("marker pod: %v", err)
	}
	awaitQuotaEvents(t, s, ns, "marker")
}

// expectEvent fails unless events is one Warning event with reason and message about ref.
func expectEvent(t *testing.T, events []corev1.Event, ref corev1.ObjectReference, reason, message string) {
	t.Helper()
	if len(events) != 1 {
		t.Fatalf("events = %d, want 1: %+v", len(events), events)
	}
	ev := events[0]
	got := ev.InvolvedObject
	got.ResourceVersion = ""
	if got != ref || ev.Type != corev1.EventTypeWarning || ev.Reason != reason || ev.Message != message || ev.Count != 1 || ev.Source.Component != "quota-admission" {
		t.Fatalf("event:\n got %+v\nwant %s %s about %+v: %s", ev, corev1.EventTypeWarning, reason, ref, message)
	}
}

// scrape returns the server's /metrics text.
func scrape(t *testing.T, s *servertest.Server) string {
	t.Helper()
	tr, err := rest.TransportFor(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	code, body := get(t, &http.Client{Transport: tr}, s.URL+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	return body
}

// expectMetrics fails unless every line is a line of the metrics text.
func expectMetrics(t *testing.T, body string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(body, "\n"+l+"\n") {
			t.Errorf("/metrics lacks %s", l)
		}
	}
}

// TestQuotaModesWarn: a quota in Warn mode admits the write that takes usage above hard,
// with upstream's numbers in a Warning client-go receives, used above hard exactly, one
// Warning Event on the quota and the exceeded metric; switching the quota to Enforce
// refuses the next write at once with upstream's 403; a dry run gets the warning and
// charges nothing, records no Event and counts nothing.
func TestQuotaModesWarn(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "wm")
	q := annotatedQuota(t, s, "wm", "compute", "Warn", "", rl("pods", "2"))
	c, w := warnedClient(t, s)
	for _, name := range []string{"p0", "p1"} {
		if _, err := c.CoreV1().Pods("wm").Create(ctx, pod(name, "", ""), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	expectWarnings(t, w.take())
	// 1. Over the limit: admitted, warned, charged.
	if _, err := c.CoreV1().Pods("wm").Create(ctx, pod("p2", "", ""), metav1.CreateOptions{}); err != nil {
		t.Fatalf("Warn mode refused: %v", err)
	}
	expectWarnings(t, w.take(), "would exceed quota compute: requested: pods=1, used: pods=2, limited: pods=2")
	expectUsed(t, s, "wm", "compute", map[string]string{"pods": "3"})
	ref := corev1.ObjectReference{Kind: "ResourceQuota", APIVersion: "v1", Namespace: "wm", Name: "compute", UID: q.UID}
	expectEvent(t, awaitQuotaEvents(t, s, "wm", "compute"), ref, "QuotaExceeded", `pods "p2": would exceed quota compute: requested: pods=1, used: pods=2, limited: pods=2`)

	// 2. A dry run: the warning, no charge, no Event, no count.
	if _, err := c.CoreV1().Pods("wm").Create(ctx, pod("dry", "", ""), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatalf("Warn mode refused a dry run: %v", err)
	}
	expectWarnings(t, w.take(), "would exceed quota compute: requested: pods=1, used: pods=3, limited: pods=2")
	expectUsed(t, s, "wm", "compute", map[string]string{"pods": "3"})
	flushQuotaEvents(t, s)
	if n := len(quotaEvents(t, s, "wm", "compute")); n != 1 {
		t.Fatalf("events after a dry run = %d, want 1", n)
	}
	expectMetrics(t, scrape(t, s), `quotad_quota_exceeded_total{enforcement="Warn",kind="ResourceQuota",name="compute",namespace="wm"} 1`)

	// 3. Enforce: the next write is refused with upstream's 403, and counted.
	setMode(t, s, "wm", "compute", "Enforce")
	_, err := c.CoreV1().Pods("wm").Create(ctx, pod("p3", "", ""), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "p3" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=3, limited: pods=2`)
	expectWarnings(t, w.take())
	expectUsed(t, s, "wm", "compute", map[string]string{"pods": "3"})
	expectMetrics(t, scrape(t, s),
		`quotad_quota_exceeded_total{enforcement="Enforce",kind="ResourceQuota",name="compute",namespace="wm"} 1`,
		`quotad_quota_exceeded_total{enforcement="Warn",kind="ResourceQuota",name="compute",namespace="wm"} 1`)
	// Deletes are never refused: used comes back under hard.
	if err := c.CoreV1().Pods("wm").Delete(ctx, "p2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expectUsed(t, s, "wm", "compute", map[string]string{"pods": "2"})
}

// TestQuotaModesWarnMustSpecify: a Warn quota admits a pod that does not specify what it
// limits (upstream's "failed quota: must specify"), charged what it specifies, with a
// warning; the same quota under Enforce refuses it with upstream's text.
func TestQuotaModesWarnMustSpecify(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "ms")
	annotatedQuota(t, s, "ms", "compute", "Warn", "", rl("pods", "10", "requests.cpu", "2"))
	c, w := warnedClient(t, s)
	if _, err := c.CoreV1().Pods("ms").Create(ctx, pod("bare", "", ""), metav1.CreateOptions{}); err != nil {
		t.Fatalf("Warn mode refused: %v", err)
	}
	expectWarnings(t, w.take(), "would fail quota compute: must specify requests.cpu for: c")
	expectUsed(t, s, "ms", "compute", map[string]string{"pods": "1", "requests.cpu": "0"})
	setMode(t, s, "ms", "compute", "Enforce")
	_, err := c.CoreV1().Pods("ms").Create(ctx, pod("bare2", "", ""), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "bare2" is forbidden: failed quota: compute: must specify requests.cpu for: c`)
	expectMetrics(t, scrape(t, s),
		`quotad_quota_constraint_failures_total{enforcement="Enforce",kind="ResourceQuota",name="compute",namespace="ms"} 1`,
		`quotad_quota_constraint_failures_total{enforcement="Warn",kind="ResourceQuota",name="compute",namespace="ms"} 1`)
}

const quotaModesAuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
  resources:
  - group: ""
    resources: ["pods"]
- level: None
`

// TestQuotaModesAudit: a quota in Audit mode admits the write silently (no Warning, no
// Event), records the finding in the request's audit event and counts it.
func TestQuotaModesAudit(t *testing.T) {
	t.Parallel()
	s, logPath := startAudited(t, quotaModesAuditPolicy)
	ctx := ctxT(t)
	mkNamespace(t, s, "am")
	annotatedQuota(t, s, "am", "compute", "Audit", "", rl("pods", "1"))
	c, w := warnedClient(t, s)
	for _, name := range []string{"p0", "p1"} {
		if _, err := c.CoreV1().Pods("am").Create(ctx, pod(name, "", ""), metav1.CreateOptions{}); err != nil {
			t.Fatalf("Audit mode refused %s: %v", name, err)
		}
	}
	expectWarnings(t, w.take())
	expectUsed(t, s, "am", "compute", map[string]string{"pods": "2"})
	flushQuotaEvents(t, s)
	if evs := quotaEvents(t, s, "am", "compute"); len(evs) != 0 {
		t.Fatalf("Audit mode recorded events: %+v", evs)
	}
	expectMetrics(t, scrape(t, s), `quotad_quota_exceeded_total{enforcement="Audit",kind="ResourceQuota",name="compute",namespace="am"} 1`)
	evs := stopAndRead(t, s, logPath)
	for name, want := range map[string]string{"p0": "", "p1": "would exceed quota compute: requested: pods=1, used: pods=1, limited: pods=1"} {
		req := requestEvents(evs, "create", "pods", name)
		if len(req) == 0 {
			t.Fatalf("no audit events of creating %s", name)
		}
		last := req[len(req)-1]
		if last.Stage != "ResponseComplete" || last.Annotations[quota.AuditAnnotation] != want {
			t.Fatalf("%s: stage %s annotations %v, want %s=%q", name, last.Stage, last.Annotations, quota.AuditAnnotation, want)
		}
	}
}

// TestQuotaModesThresholds: an Enforce quota with warn-at admits writes that take usage
// above the threshold with a Warning naming each crossed resource, an Event and a metric
// per resource; writes below it get none; a write above hard is still refused.
func TestQuotaModesThresholds(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "th")
	q := annotatedQuota(t, s, "th", "compute", "", "80%,pods=50%", rl("pods", "4", "requests.cpu", "2"))
	c, w := warnedClient(t, s)
	create := func(name, cpu string) error {
		_, err := c.CoreV1().Pods("th").Create(ctx, podWith(name, rl("cpu", cpu), nil), metav1.CreateOptions{})
		return err
	}
	if err := create("a", "1500m"); err != nil {
		t.Fatal(err)
	}
	expectWarnings(t, w.take()) // 75% cpu, 25% pods
	if err := create("b", "100m"); err != nil {
		t.Fatal(err)
	}
	expectWarnings(t, w.take()) // 80% cpu (not above), 50% pods (not above)
	if err := create("c", "100m"); err != nil {
		t.Fatal(err)
	}
	const msg = "quota compute is above its warn-at threshold: pods at 75% (3 of 4, threshold 50%), requests.cpu at 85% (1700m of 2, threshold 80%)"
	expectWarnings(t, w.take(), msg)
	ref := corev1.ObjectReference{Kind: "ResourceQuota", APIVersion: "v1", Namespace: "th", Name: "compute", UID: q.UID}
	expectEvent(t, awaitQuotaEvents(t, s, "th", "compute"), ref, "QuotaThresholdExceeded", `pods "c": `+msg)
	expectMetrics(t, scrape(t, s),
		`quotad_quota_threshold_warnings_total{kind="ResourceQuota",name="compute",namespace="th",resource="pods"} 1`,
		`quotad_quota_threshold_warnings_total{kind="ResourceQuota",name="compute",namespace="th",resource="requests.cpu"} 1`)
	// Above hard: Enforce refuses, no threshold warning for the refused write.
	err := create("d", "400m")
	expectForbidden(t, err, `pods "d" is forbidden: exceeded quota: compute, requested: requests.cpu=400m, used: requests.cpu=1700m, limited: requests.cpu=2`)
	expectWarnings(t, w.take())
	// A dry run gets the threshold warning; nothing is charged.
	if _, err := c.CoreV1().Pods("th").Create(ctx, podWith("e", rl("cpu", "100m"), nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	expectWarnings(t, w.take(), "quota compute is above its warn-at threshold: pods at 100% (4 of 4, threshold 50%), requests.cpu at 90% (1800m of 2, threshold 80%)")
	expectUsed(t, s, "th", "compute", map[string]string{"pods": "3", "requests.cpu": "1700m"})
}

// TestQuotaModesClusterQuota: a ClusterResourceQuota in Warn mode admits the write that
// takes its total above hard, with the Warning, the total and the namespace's entry
// charged exactly, an Event on the cluster quota (in namespace default, as upstream's
// events about cluster-scoped objects) and the metric labelled with the write's namespace.
func TestQuotaModesClusterQuota(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkLabeledNamespace(t, s, "ca", map[string]string{"team": "a"})
	crq := clusterQuota("team-a", "a", rl("pods", "1"))
	crq.Annotations = map[string]string{quota.EnforcementAnnotation: "Warn"}
	created, err := createCRQ(t, s, crq, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, w := warnedClient(t, s)
	for _, name := range []string{"p0", "p1"} {
		if _, err := c.CoreV1().Pods("ca").Create(ctx, pod(name, "", ""), metav1.CreateOptions{}); err != nil {
			t.Fatalf("Warn mode refused %s: %v", name, err)
		}
	}
	expectWarnings(t, w.take(), "would exceed quota team-a: requested: pods=1, used: pods=1, limited: pods=1")
	expectCRQ(t, s, "team-a", "pods", "2", map[string]string{"ca": "2"})
	ref := corev1.ObjectReference{Kind: "ClusterResourceQuota", APIVersion: "quota.openshift.io/v1", Name: "team-a", UID: created.UID}
	expectEvent(t, awaitQuotaEvents(t, s, "default", "team-a"), ref, "QuotaExceeded", `pods "p1" in namespace "ca": would exceed quota team-a: requested: pods=1, used: pods=1, limited: pods=1`)
	expectMetrics(t, scrape(t, s), `quotad_quota_exceeded_total{enforcement="Warn",kind="ClusterResourceQuota",name="team-a",namespace="ca"} 1`)
	// Enforce at once.
	cur := getCRQ(t, s, "team-a")
	cur.Annotations[quota.EnforcementAnnotation] = "Enforce"
	if _, err := s.Dynamic.Resource(crqGVR).Update(ctx, crqUnstructured(t, cur), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = c.CoreV1().Pods("ca").Create(ctx, pod("p2", "", ""), metav1.CreateOptions{})
	expectForbidden(t, err, `pods "p2" is forbidden: exceeded quota: team-a, requested: pods=1, used: pods=2, limited: pods=1`)
}

// TestQuotaModesInvalidAnnotations: an invalid mode or threshold is refused 422 on create
// and update, for ResourceQuotas and ClusterResourceQuotas; a threshold of a resource the
// quota does not limit is admitted with a warning.
func TestQuotaModesInvalidAnnotations(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	mkNamespace(t, s, "iv")
	expectInvalid := func(err error, msg string) {
		t.Helper()
		if !apierrors.IsInvalid(err) {
			t.Fatalf("err = %v, want 422", err)
		}
		if err.Error() != msg {
			t.Fatalf("422 text:\n got %s\nwant %s", err.Error(), msg)
		}
	}
	_, err := s.Client.CoreV1().ResourceQuotas("iv").Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q", Annotations: map[string]string{quota.EnforcementAnnotation: "Block"}},
		Spec:       corev1.ResourceQuotaSpec{Hard: rl("pods", "1")},
	}, metav1.CreateOptions{})
	expectInvalid(err, `ResourceQuota "q" is invalid: metadata.annotations[quota.quotad.io/enforcement]: Unsupported value: "Block": supported values: "Audit", "Enforce", "Warn"`)
	q := annotatedQuota(t, s, "iv", "q", "Warn", "80%", rl("pods", "1"))
	q.Annotations[quota.WarnAtAnnotation] = "80%,pods=0%"
	_, err = s.Client.CoreV1().ResourceQuotas("iv").Update(ctx, q, metav1.UpdateOptions{})
	expectInvalid(err, `ResourceQuota "q" is invalid: metadata.annotations[quota.quotad.io/warn-at]: Invalid value: "80%,pods=0%": "pods=0%": must be a percentage from 1% to 100%`)
	crq := clusterQuota("bad", "x", rl("pods", "1"))
	crq.Annotations = map[string]string{quota.WarnAtAnnotation: "requests.cpu=90%,requests.cpu=95%"}
	_, err = createCRQ(t, s, crq, metav1.CreateOptions{})
	expectInvalid(err, `ClusterResourceQuota.quota.openshift.io "bad" is invalid: metadata.annotations[quota.quotad.io/warn-at]: Invalid value: "requests.cpu=90%,requests.cpu=95%": "requests.cpu=95%": requests.cpu has more than one threshold`)
	// Valid, but naming a resource the quota does not limit: admitted with a warning.
	c, w := warnedClient(t, s)
	if _, err := c.CoreV1().ResourceQuotas("iv").Create(ctx, &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "typo", Annotations: map[string]string{quota.WarnAtAnnotation: "80%,limits.memory=90%"}},
		Spec:       corev1.ResourceQuotaSpec{Hard: rl("pods", "1", "requests.memory", "1Gi")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectWarnings(t, w.take(), "quota.quotad.io/warn-at: limits.memory is not in the quota's hard limits; its threshold never applies")
}
