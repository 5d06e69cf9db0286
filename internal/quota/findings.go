package quota

import (
	"fmt"
	"math/big"
	"math/bits"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/quotad/quotad/internal/quota/quantity"
)

// AuditAnnotation is the audit-event annotation under which the findings of Audit-mode
// quotas on an admitted request are recorded (their messages joined by "; "), as upstream
// records authorization decisions under authorization.k8s.io/decision.
const AuditAnnotation = "quota.quotad.io/audit"

// Kinds of the quotas a Finding names.
const (
	KindResourceQuota        = "ResourceQuota"
	KindClusterResourceQuota = "ClusterResourceQuota"
)

// ClusterQuotaViewUIDPrefix marks the ResourceQuota views of cluster quotas
// (clusterquota.View) by their UID: the prefix, then the cluster quota's own UID. Check
// reports findings of such a view as the cluster quota's.
const ClusterQuotaViewUIDPrefix = "clusterresourcequota:"

// IsClusterQuotaView reports whether rq is a cluster quota's view.
func IsClusterQuotaView(rq *corev1.ResourceQuota) bool {
	return strings.HasPrefix(string(rq.UID), ClusterQuotaViewUIDPrefix)
}

// FindingReason says why a quota reported on a request.
type FindingReason string

// The reasons of findings.
const (
	// FindingExceeded: the request takes usage of the quota above hard. Under Enforce it is
	// the refusal; under Warn and Audit the request is admitted.
	FindingExceeded FindingReason = "exceeded"
	// FindingConstraint: the request does not specify what the quota needs (upstream's
	// "failed quota: <q>: must specify ..."). Under Enforce it is the refusal; under Warn
	// and Audit the request is admitted, charged what it specifies.
	FindingConstraint FindingReason = "constraint"
	// FindingThreshold: the request raises usage of a resource to above the quota's
	// warn-at threshold (not above hard, which is FindingExceeded). Reported in every mode.
	FindingThreshold FindingReason = "threshold"
)

// Finding is what one quota reports on one request, besides charging it: the refusal of an
// Enforce quota, an over-limit request a Warn or Audit quota admits, or a crossed threshold.
type Finding struct {
	// Quota is the quota's name; Kind KindResourceQuota or KindClusterResourceQuota; UID
	// the quota's own (a cluster quota's, not its view's).
	Quota string
	Kind  string
	UID   types.UID
	// Namespace is the request's namespace (a ResourceQuota's own).
	Namespace string
	// Mode is the quota's enforcement mode.
	Mode   Enforcement
	Reason FindingReason
	// Resources are the resource names concerned, sorted (none for FindingConstraint).
	Resources []corev1.ResourceName
	// Message is the text for the client (Warning header), the audit log or an Event:
	// under Enforce the refusal's message (without the `<resource> "<name>" is forbidden: `
	// prefix), under Warn and Audit "would exceed quota <q>: requested: ..., used: ...,
	// limited: ..." or "would fail quota <q>: must specify ...", and for thresholds
	// "quota <q> is above its warn-at threshold: <r> at <p>% (<used> of <hard>, threshold
	// <t>%), ...".
	Message string
}

// Findings returns what the quotas reported on the request at its last Check: nil when
// nothing. When that Check refused the request, the refusing quota's finding (an Enforce
// quota's exceeded or constraint refusal) is the only one; other refusals report none. A
// batch may check a request more than once; only the last Check before the commit counts.
// The slice is the Prepared's own, replaced (not modified) by the next Check.
func (p *Prepared) Findings() []Finding {
	if p == nil {
		return nil
	}
	return p.findings
}

// quotaModes is a quota's parsed annotations.
type quotaModes struct {
	mode   Enforcement
	warnAt WarnAt
}

// modesOf parses rq's annotations; a quota without annotations costs a length check.
func modesOf(rq *corev1.ResourceQuota) quotaModes {
	if len(rq.Annotations) == 0 {
		return quotaModes{mode: Enforce}
	}
	return quotaModes{mode: EnforcementOf(rq.Annotations), warnAt: WarnAtOf(rq.Annotations)}
}

// newFinding returns a finding of rq with its identity filled in.
func newFinding(rq *corev1.ResourceQuota, mode Enforcement, reason FindingReason, names []corev1.ResourceName, msg string) Finding {
	f := Finding{Quota: rq.Name, Kind: KindResourceQuota, UID: rq.UID, Namespace: rq.Namespace, Mode: mode, Reason: reason, Resources: names, Message: msg}
	if IsClusterQuotaView(rq) {
		f.Kind = KindClusterResourceQuota
		f.UID = rq.UID[len(ClusterQuotaViewUIDPrefix):]
	}
	return f
}

// exceededMessage is upstream's "exceeded quota" text after "exceeded quota: " (sep ", ")
// or the warning's after "would exceed quota " (sep ": "): requested is the increase, used
// the usage before the request, limited hard, each masked to names.
func exceededMessage(name, sep string, delta, used, hard corev1.ResourceList, names []corev1.ResourceName) string {
	return fmt.Sprintf("%s%srequested: %s, used: %s, limited: %s", name, sep,
		prettyPrint(Mask(Positive(delta), names)), prettyPrint(Mask(used, names)), prettyPrint(Mask(hard, names)))
}

// crossing is one resource above its warn-at threshold.
type crossing struct {
	name       corev1.ResourceName
	used, hard resource.Quantity
	percent    string
	threshold  int64
}

// thresholdMessage is the text of a threshold finding: every crossed resource, sorted.
func thresholdMessage(quotaName string, cs []crossing) string {
	var b strings.Builder
	b.WriteString("quota ")
	b.WriteString(quotaName)
	b.WriteString(" is above its warn-at threshold: ")
	for i, c := range cs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s at %s%% (%s of %s, threshold %d%%)", c.name, c.percent, c.used.String(), c.hard.String(), c.threshold)
	}
	return b.String()
}

// aboveThreshold reports whether used is above pct percent of hard (used·100 > hard·pct,
// exactly) and, when it is, used as a whole percentage of hard, rounded down. A hard of
// zero or below has no threshold (any increase exceeds it). Values beyond quantity.Bound
// (stored before quantities were bounded) are clamped first, so none is ever scaled far.
func aboveThreshold(used, hard resource.Quantity, pct int64) (bool, string) {
	if hard.Sign() <= 0 || used.Sign() <= 0 {
		return false, ""
	}
	// Values below 9e9 are exact in int64 nanos (parsed quantities are never finer): the
	// comparison is one 128-bit product each, without allocating.
	if uf, hf := used.AsApproximateFloat64(), hard.AsApproximateFloat64(); uf < 9e9 && hf < 9e9 {
		u, h := uint64(used.ScaledValue(resource.Nano)), uint64(hard.ScaledValue(resource.Nano))
		lhi, llo := bits.Mul64(u, 100)
		rhi, rlo := bits.Mul64(h, uint64(pct))
		if lhi < rhi || (lhi == rhi && llo <= rlo) {
			return false, ""
		}
		if lhi < h {
			q, _ := bits.Div64(lhi, llo, h)
			return true, strconv.FormatUint(q, 10)
		}
	}
	u, us := decParts(quantity.Clamp(used))
	h, hs := decParts(quantity.Clamp(hard))
	// Bring both to the larger scale (parsed quantities have scale at most 9).
	switch {
	case us < hs:
		u = new(big.Int).Mul(u, pow10(hs-us))
	case hs < us:
		h = new(big.Int).Mul(h, pow10(us-hs))
	}
	lhs := new(big.Int).Mul(u, big.NewInt(100))
	rhs := new(big.Int).Mul(h, big.NewInt(pct))
	if lhs.Cmp(rhs) <= 0 {
		return false, ""
	}
	return true, new(big.Int).Quo(lhs, h).String()
}

// decParts returns q as unscaled·10^-scale (a fresh unscaled value).
func decParts(q resource.Quantity) (*big.Int, int64) {
	d := q.AsDec()
	return new(big.Int).Set(d.UnscaledBig()), int64(d.Scale())
}

func pow10(n int64) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(n), nil)
}
