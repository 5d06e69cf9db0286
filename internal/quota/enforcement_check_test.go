package quota_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/quota/evaluator"
)

// annotated returns q with its annotations set from "key=value" pairs of the two quotad
// annotations: mode (empty: none) and warn-at (empty: none).
func annotated(q corev1.ResourceQuota, mode, warnAt string) corev1.ResourceQuota {
	q.Annotations = map[string]string{}
	if mode != "" {
		q.Annotations[quota.EnforcementAnnotation] = mode
	}
	if warnAt != "" {
		q.Annotations[quota.WarnAtAnnotation] = warnAt
	}
	return q
}

// showFindings renders findings one a line.
func showFindings(fs []quota.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%s %s/%s uid=%q mode=%s reason=%s resources=[%s]\n  %s\n", f.Kind, f.Namespace, f.Quota, f.UID, f.Mode, f.Reason, names(f.Resources), f.Message)
	}
	return b.String()
}

// TestEnforcementModesCheck: an Enforce quota refuses an over-limit request with upstream's
// 403; a Warn or Audit quota admits it, applies the delta (used passes hard, exactly) and
// records the finding with the warning text; an invalid mode enforces.
func TestEnforcementModesCheck(t *testing.T) {
	reg := evaluator.NewRegistry()
	pod := podOf("p", ctr(t, "c", []string{"cpu=500m"}, nil))
	for _, tt := range []struct {
		mode      string
		wantErr   string
		wantUsed  string
		wantFinds string
	}{
		{mode: "", wantErr: `pods "p" is forbidden: exceeded quota: compute, requested: pods=1,requests.cpu=500m, used: pods=10,requests.cpu=1800m, limited: pods=10,requests.cpu=2`,
			wantFinds: "ResourceQuota ns/compute uid=\"u1\" mode=Enforce reason=exceeded resources=[pods requests.cpu]\n  exceeded quota: compute, requested: pods=1,requests.cpu=500m, used: pods=10,requests.cpu=1800m, limited: pods=10,requests.cpu=2\n"},
		{mode: "Enforce", wantErr: `pods "p" is forbidden: exceeded quota: compute, requested: pods=1,requests.cpu=500m, used: pods=10,requests.cpu=1800m, limited: pods=10,requests.cpu=2`,
			wantFinds: "ResourceQuota ns/compute uid=\"u1\" mode=Enforce reason=exceeded resources=[pods requests.cpu]\n  exceeded quota: compute, requested: pods=1,requests.cpu=500m, used: pods=10,requests.cpu=1800m, limited: pods=10,requests.cpu=2\n"},
		{mode: "enforce-typo", wantErr: `pods "p" is forbidden: exceeded quota: compute, requested: pods=1,requests.cpu=500m, used: pods=10,requests.cpu=1800m, limited: pods=10,requests.cpu=2`,
			wantFinds: "ResourceQuota ns/compute uid=\"u1\" mode=Enforce reason=exceeded resources=[pods requests.cpu]\n  exceeded quota: compute, requested: pods=1,requests.cpu=500m, used: pods=10,requests.cpu=1800m, limited: pods=10,requests.cpu=2\n"},
		{mode: "Warn", wantUsed: "compute: pods=11 requests.cpu=2300m",
			wantFinds: "ResourceQuota ns/compute uid=\"u1\" mode=Warn reason=exceeded resources=[pods requests.cpu]\n  would exceed quota compute: requested: pods=1,requests.cpu=500m, used: pods=10,requests.cpu=1800m, limited: pods=10,requests.cpu=2\n"},
		{mode: "Audit", wantUsed: "compute: pods=11 requests.cpu=2300m",
			wantFinds: "ResourceQuota ns/compute uid=\"u1\" mode=Audit reason=exceeded resources=[pods requests.cpu]\n  would exceed quota compute: requested: pods=1,requests.cpu=500m, used: pods=10,requests.cpu=1800m, limited: pods=10,requests.cpu=2\n"},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			q := annotated(rq(t, "compute", []string{"pods=10", "requests.cpu=2"}, []string{"pods=10", "requests.cpu=1800m"}), tt.mode, "")
			q.UID = "u1"
			p, err := quota.Prepare(create(podsGR, pod), reg, nil)
			if err != nil {
				t.Fatal(err)
			}
			changed, err := p.Check([]corev1.ResourceQuota{q})
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if got := showChanged(changed); got != tt.wantUsed {
				t.Fatalf("changed = %q, want %q", got, tt.wantUsed)
			}
			if got := showFindings(p.Findings()); got != tt.wantFinds {
				t.Fatalf("findings:\n%s\nwant:\n%s", got, tt.wantFinds)
			}
			if show(q.Status.Used) != "pods=10 requests.cpu=1800m" {
				t.Fatal("input modified")
			}
		})
	}
}

// TestEnforcementModesOrder: an Enforce quota refuses even when a Warn quota before it
// was exceeded too (its finding alone is reported); a Warn quota's exceeded finding does
// not hide the charge of the other quotas; only the last Check's findings count.
func TestEnforcementModesOrder(t *testing.T) {
	reg := evaluator.NewRegistry()
	warn := annotated(rq(t, "soft", []string{"pods=1"}, []string{"pods=1"}), "Warn", "")
	enforce := rq(t, "hard", []string{"pods=2"}, []string{"pods=2"})
	roomy := rq(t, "roomy", []string{"pods=100"}, []string{"pods=1"})
	p, err := quota.Prepare(create(podsGR, podOf("p", ctr(t, "c", nil, nil))), reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Check([]corev1.ResourceQuota{warn, enforce, roomy})
	if err == nil || err.Error() != `pods "p" is forbidden: exceeded quota: hard, requested: pods=1, used: pods=2, limited: pods=2` {
		t.Fatalf("err = %v", err)
	}
	if got := showFindings(p.Findings()); got != "ResourceQuota ns/hard uid=\"\" mode=Enforce reason=exceeded resources=[pods]\n  exceeded quota: hard, requested: pods=1, used: pods=2, limited: pods=2\n" {
		t.Fatalf("findings after refusal:\n%s", got)
	}
	// Checked again once room was made: the Warn quota's finding only.
	enforce.Status.Used = rl(t, "pods=1")
	changed, err := p.Check([]corev1.ResourceQuota{warn, enforce, roomy})
	if err != nil {
		t.Fatal(err)
	}
	if got := showChanged(changed); got != "soft: pods=2\nhard: pods=2\nroomy: pods=2" {
		t.Fatalf("changed = %s", got)
	}
	if got := showFindings(p.Findings()); got != "ResourceQuota ns/soft uid=\"\" mode=Warn reason=exceeded resources=[pods]\n  would exceed quota soft: requested: pods=1, used: pods=1, limited: pods=1\n" {
		t.Fatalf("findings:\n%s", got)
	}
	// And once more against roomy quotas: nothing.
	if _, err := p.Check([]corev1.ResourceQuota{roomy}); err != nil || p.Findings() != nil {
		t.Fatalf("err %v findings %v", err, p.Findings())
	}
}

// TestEnforcementModesConstraint: "must specify" refuses under Enforce, and under Warn and
// Audit admits the pod, charged what it specifies, with a finding.
func TestEnforcementModesConstraint(t *testing.T) {
	reg := evaluator.NewRegistry()
	pod := podOf("p", ctr(t, "c", nil, nil))
	for _, mode := range []string{"Enforce", "Warn", "Audit"} {
		q := annotated(rq(t, "compute", []string{"pods=10", "requests.cpu=2"}, []string{"pods=1", "requests.cpu=0"}), mode, "")
		p, err := quota.Prepare(create(podsGR, pod), reg, nil)
		if err != nil {
			t.Fatal(err)
		}
		changed, err := p.Check([]corev1.ResourceQuota{q})
		if mode == "Enforce" {
			if err == nil || err.Error() != `pods "p" is forbidden: failed quota: compute: must specify requests.cpu for: c` {
				t.Fatalf("Enforce: err = %v", err)
			}
			if got := showFindings(p.Findings()); got != "ResourceQuota ns/compute uid=\"\" mode=Enforce reason=constraint resources=[]\n  failed quota: compute: must specify requests.cpu for: c\n" {
				t.Fatalf("Enforce findings:\n%s", got)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if got := showChanged(changed); got != "compute: pods=2 requests.cpu=0" {
			t.Fatalf("%s: changed %s", mode, got)
		}
		want := "ResourceQuota ns/compute uid=\"\" mode=" + mode + " reason=constraint resources=[]\n  would fail quota compute: must specify requests.cpu for: c\n"
		if got := showFindings(p.Findings()); got != want {
			t.Fatalf("%s findings:\n%s\nwant:\n%s", mode, got, want)
		}
	}
}

// TestWarnAtThresholds: every quota reports the resources a request raises to above their
// threshold, strictly above, with per-resource thresholds winning; resources above hard
// are the exceeded finding, not a threshold one; decreases and unraised resources report
// nothing.
func TestWarnAtThresholds(t *testing.T) {
	reg := evaluator.NewRegistry()
	for _, tt := range []struct {
		name       string
		mode       string
		warnAt     string
		hard, used []string
		req        quota.Request
		want       string
	}{
		{name: "below", warnAt: "80%", hard: []string{"pods=10"}, used: []string{"pods=6"},
			req: create(podsGR, podOf("p", ctr(t, "c", nil, nil)))},
		{name: "at is not above", warnAt: "80%", hard: []string{"pods=10"}, used: []string{"pods=7"},
			req: create(podsGR, podOf("p", ctr(t, "c", nil, nil)))},
		{name: "above", warnAt: "80%", hard: []string{"pods=10"}, used: []string{"pods=8"},
			req:  create(podsGR, podOf("p", ctr(t, "c", nil, nil))),
			want: "ResourceQuota ns/q uid=\"\" mode=Enforce reason=threshold resources=[pods]\n  quota q is above its warn-at threshold: pods at 90% (9 of 10, threshold 80%)\n"},
		{name: "milli exact", warnAt: "80%", hard: []string{"requests.cpu=2"}, used: []string{"requests.cpu=1500m"},
			req:  create(podsGR, podOf("p", ctr(t, "c", []string{"cpu=200m"}, nil))),
			want: "ResourceQuota ns/q uid=\"\" mode=Enforce reason=threshold resources=[requests.cpu]\n  quota q is above its warn-at threshold: requests.cpu at 85% (1700m of 2, threshold 80%)\n"},
		{name: "milli at exactly", warnAt: "80%", hard: []string{"requests.cpu=2"}, used: []string{"requests.cpu=1400m"},
			req: create(podsGR, podOf("p", ctr(t, "c", []string{"cpu=200m"}, nil)))},
		{name: "per resource wins", warnAt: "50%,requests.cpu=90%", hard: []string{"pods=10", "requests.cpu=2"}, used: []string{"pods=5", "requests.cpu=1500m"},
			req:  create(podsGR, podOf("p", ctr(t, "c", []string{"cpu=200m"}, nil))),
			want: "ResourceQuota ns/q uid=\"\" mode=Enforce reason=threshold resources=[pods]\n  quota q is above its warn-at threshold: pods at 60% (6 of 10, threshold 50%)\n"},
		{name: "only named resource", warnAt: "requests.cpu=50%", hard: []string{"pods=10", "requests.cpu=2"}, used: []string{"pods=9", "requests.cpu=1"},
			req:  create(podsGR, podOf("p", ctr(t, "c", []string{"cpu=1m"}, nil))),
			want: "ResourceQuota ns/q uid=\"\" mode=Enforce reason=threshold resources=[requests.cpu]\n  quota q is above its warn-at threshold: requests.cpu at 50% (1001m of 2, threshold 50%)\n"},
		{name: "several in one line", warnAt: "80%", hard: []string{"pods=10", "requests.cpu=2", "requests.memory=1Gi"}, used: []string{"pods=9", "requests.cpu=1900m", "requests.memory=0"},
			req:  create(podsGR, podOf("p", ctr(t, "c", []string{"cpu=50m", "memory=1Mi"}, nil))),
			want: "ResourceQuota ns/q uid=\"\" mode=Enforce reason=threshold resources=[pods requests.cpu]\n  quota q is above its warn-at threshold: pods at 100% (10 of 10, threshold 80%), requests.cpu at 97% (1950m of 2, threshold 80%)\n"},
		{name: "warn exceeded and threshold", mode: "Warn", warnAt: "80%", hard: []string{"pods=10", "requests.cpu=2"}, used: []string{"pods=10", "requests.cpu=1500m"},
			req: create(podsGR, podOf("p", ctr(t, "c", []string{"cpu=200m"}, nil))),
			want: "ResourceQuota ns/q uid=\"\" mode=Warn reason=exceeded resources=[pods]\n  would exceed quota q: requested: pods=1, used: pods=10, limited: pods=10\n" +
				"ResourceQuota ns/q uid=\"\" mode=Warn reason=threshold resources=[requests.cpu]\n  quota q is above its warn-at threshold: requests.cpu at 85% (1700m of 2, threshold 80%)\n"},
		{name: "beyond int64 nanos", warnAt: "85%", hard: []string{"requests.memory=100Gi"}, used: []string{"requests.memory=85Gi"},
			req:  create(podsGR, podOf("p", ctr(t, "c", []string{"memory=1Gi"}, nil))),
			want: "ResourceQuota ns/q uid=\"\" mode=Enforce reason=threshold resources=[requests.memory]\n  quota q is above its warn-at threshold: requests.memory at 86% (86Gi of 100Gi, threshold 85%)\n"},
		{name: "beyond int64 nanos at exactly", warnAt: "85%", hard: []string{"requests.memory=100Gi"}, used: []string{"requests.memory=84Gi"},
			req: create(podsGR, podOf("p", ctr(t, "c", []string{"memory=1Gi"}, nil)))},
		{name: "delete reports nothing", warnAt: "10%", hard: []string{"pods=10"}, used: []string{"pods=10"},
			req: del(podsGR, podOf("p", ctr(t, "c", nil, nil)))},
		{name: "huge hard", warnAt: "1%", hard: []string{"pods=1e10000000"}, used: []string{"pods=1"},
			req: create(podsGR, podOf("p", ctr(t, "c", nil, nil)))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := annotated(rq(t, "q", tt.hard, tt.used), tt.mode, tt.warnAt)
			p, err := quota.Prepare(tt.req, reg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Check([]corev1.ResourceQuota{q}); err != nil {
				t.Fatal(err)
			}
			if got := showFindings(p.Findings()); got != tt.want {
				t.Fatalf("findings:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestClusterQuotaViewFindings: a cluster quota's view carries its annotations, so its
// mode applies, and its findings name the cluster quota (kind, own UID, the request's
// namespace).
func TestClusterQuotaViewFindings(t *testing.T) {
	reg := evaluator.NewRegistry()
	crq := &clusterquota.ClusterResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "team", UID: "crq-uid", Annotations: map[string]string{quota.EnforcementAnnotation: "Warn"}},
		Spec:       clusterquota.ClusterResourceQuotaSpec{Quota: corev1.ResourceQuotaSpec{Hard: rl(t, "pods=2")}},
		Status:     clusterquota.ClusterResourceQuotaStatus{Total: corev1.ResourceQuotaStatus{Hard: rl(t, "pods=2"), Used: rl(t, "pods=2")}},
	}
	p, err := quota.Prepare(create(podsGR, podOf("p", ctr(t, "c", nil, nil))), reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	changed, err := p.Check([]corev1.ResourceQuota{clusterquota.View(crq, "ns")})
	if err != nil {
		t.Fatal(err)
	}
	if got := showChanged(changed); got != "team: pods=3" {
		t.Fatalf("changed %s", got)
	}
	want := "ClusterResourceQuota ns/team uid=\"crq-uid\" mode=Warn reason=exceeded resources=[pods]\n  would exceed quota team: requested: pods=1, used: pods=2, limited: pods=2\n"
	if got := showFindings(p.Findings()); got != want {
		t.Fatalf("findings:\n%s\nwant:\n%s", got, want)
	}
}

// TestFindingTextsGolden pins the texts users see for each kind of finding.
func TestFindingTextsGolden(t *testing.T) {
	reg := evaluator.NewRegistry()
	g := newGolden(t, "findings.golden")
	for _, tt := range []struct {
		name         string
		mode, warnAt string
		hard, used   []string
		requests     []string
		qname        string
	}{
		{name: "warn exceeded pods", qname: "compute", mode: "Warn", hard: []string{"pods=10"}, used: []string{"pods=10"}},
		{name: "audit exceeded cpu and memory", qname: "compute", mode: "Audit", hard: []string{"requests.cpu=1", "requests.memory=1Gi"}, used: []string{"requests.cpu=900m", "requests.memory=1000Mi"}, requests: []string{"cpu=200m", "memory=100Mi"}},
		{name: "threshold one resource", qname: "compute", warnAt: "80%", hard: []string{"requests.cpu=2"}, used: []string{"requests.cpu=1500m"}, requests: []string{"cpu=200m"}},
		{name: "threshold two resources", qname: "compute", warnAt: "80%,pods=50%", hard: []string{"pods=10", "requests.memory=2Gi"}, used: []string{"pods=5", "requests.memory=1900Mi"}, requests: []string{"memory=10Mi"}},
		{name: "warn must specify", qname: "compute", mode: "Warn", hard: []string{"limits.memory=2Gi", "requests.cpu=2"}, used: []string{"limits.memory=0", "requests.cpu=0"}},
	} {
		q := annotated(rq(t, tt.qname, tt.hard, tt.used), tt.mode, tt.warnAt)
		p, err := quota.Prepare(create(podsGR, podOf("p", ctr(t, "c", tt.requests, nil))), reg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Check([]corev1.ResourceQuota{q}); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var lines []string
		for _, f := range p.Findings() {
			lines = append(lines, string(f.Mode)+" "+string(f.Reason)+": "+f.Message)
		}
		g.Add(tt.name, strings.Join(lines, "\n"))
	}
	g.Check()
}

// TestValidateQuotaAnnotationsOnQuotas: a quota's create refuses an invalid mode or
// threshold with upstream-style field errors; an update refuses a changed invalid value
// but not one stored before validation knew it.
func TestValidateQuotaAnnotationsOnQuotas(t *testing.T) {
	bad := annotated(rq(t, "q", []string{"pods=1"}, nil), "Block", "80")
	errs := quota.ValidateResourceQuota(&bad)
	want := `[metadata.annotations[quota.quotad.io/enforcement]: Unsupported value: "Block": supported values: "Audit", "Enforce", "Warn" metadata.annotations[quota.quotad.io/warn-at]: Invalid value: "80": "80": must be a percentage from 1% to 100%]`
	if got := fmt.Sprint(errs); got != want {
		t.Fatalf("create:\n got %s\nwant %s", got, want)
	}
	good := annotated(rq(t, "q", []string{"pods=1"}, nil), "Warn", "80%,requests.cpu=90%")
	if errs := quota.ValidateResourceQuota(&good); len(errs) != 0 {
		t.Fatalf("valid annotations refused: %v", errs)
	}
	// Update: a changed invalid value is refused; an unchanged one (stored before) is not.
	stored := annotated(rq(t, "q", []string{"pods=1"}, nil), "Block", "")
	stored.ResourceVersion = "5"
	edit := stored.DeepCopy()
	edit.Spec.Hard = rl(t, "pods=2")
	if errs := quota.ValidateResourceQuotaUpdate(edit, &stored); len(errs) != 0 {
		t.Fatalf("unchanged stored value refused: %v", errs)
	}
	edit.Annotations[quota.WarnAtAnnotation] = "120%"
	if got := fmt.Sprint(quota.ValidateResourceQuotaUpdate(edit, &stored)); got != `[metadata.annotations[quota.quotad.io/warn-at]: Invalid value: "120%": "120%": must be a percentage from 1% to 100%]` {
		t.Fatalf("update: %s", got)
	}
	crq := &clusterquota.ClusterResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "team", Annotations: map[string]string{quota.EnforcementAnnotation: "warn"}},
		Spec: clusterquota.ClusterResourceQuotaSpec{
			Selector: clusterquota.ClusterResourceQuotaSelector{AnnotationSelector: map[string]string{"team": "a"}},
			Quota:    corev1.ResourceQuotaSpec{Hard: rl(t, "pods=2")},
		},
	}
	if got := fmt.Sprint(clusterquota.Validate(crq)); got != `[metadata.annotations[quota.quotad.io/enforcement]: Unsupported value: "warn": supported values: "Audit", "Enforce", "Warn"]` {
		t.Fatalf("cluster quota: %s", got)
	}
}

// FuzzParseWarnAt: a value ParseWarnAt accepts renders (String) to a value it parses to the
// same thresholds, and validation agrees with the parser.
func FuzzParseWarnAt(f *testing.F) {
	for _, s := range []string{"80%", "requests.cpu=90%", "80%,requests.cpu=90%", " 80% , pods=1% ", "100%", "0%", "80", "a=b=c", ",", "80%,80%", "pods=50%,pods=60%", "requests.cpu=101%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := quota.ParseWarnAt(s)
		errs := quota.ValidateQuotaAnnotations(map[string]string{quota.WarnAtAnnotation: s}, nil)
		if (err == nil) != (len(errs) == 0) {
			t.Fatalf("%q: parse error %v, validation %v", s, err, errs)
		}
		if err != nil {
			if !quota.WarnAtOf(map[string]string{quota.WarnAtAnnotation: s}).Empty() {
				t.Fatalf("%q: invalid value sets thresholds", s)
			}
			return
		}
		again, err := quota.ParseWarnAt(w.String())
		if err != nil || again.String() != w.String() || again.All != w.All || len(again.PerResource) != len(w.PerResource) {
			t.Fatalf("%q -> %q -> %+v, %v", s, w.String(), again, err)
		}
	})
}

// TestWarnAtWarnings: a threshold for a resource the quota does not limit is warned about.
func TestWarnAtWarnings(t *testing.T) {
	for _, tt := range []struct {
		warnAt string
		want   string
	}{
		{"", ""},
		{"80%", ""},
		{"80%,requests.cpu=90%", ""},
		{"requests.nvidia.com/gpu=90%,pods=50%,limits.memory=70%", "quota.quotad.io/warn-at: limits.memory is not in the quota's hard limits; its threshold never applies|" +
			"quota.quotad.io/warn-at: requests.nvidia.com/gpu is not in the quota's hard limits; its threshold never applies"},
		{"bogus", ""},
	} {
		q := annotated(rq(t, "q", []string{"pods=10", "requests.cpu=2"}, nil), "", tt.warnAt)
		if got := strings.Join(quota.WarnAtWarnings(q.Annotations, q.Spec.Hard), "|"); got != tt.want {
			t.Errorf("%q:\n got %q\nwant %q", tt.warnAt, got, tt.want)
		}
	}
}
