package quota

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/quotad/quotad/internal/quota/quantity"
)

// Operation is the verb of a request as quota sees it. quota does not import the
// admission package (imports point admission → quota); the values are spelled as
// upstream's admission operations.
type Operation string

// Operations CheckRequest understands.
const (
	Create Operation = "CREATE"
	Update Operation = "UPDATE"
	Delete Operation = "DELETE"
)

// LimitedResource is one entry of the ResourceQuota admission configuration's
// limitedResources: consuming a matching resource, or creating an object matching one of
// MatchScopes, requires a covering quota.
type LimitedResource struct {
	// APIGroup and Resource name the group-resource MatchContains applies to.
	APIGroup string
	Resource string
	// MatchContains lists substrings of usage names; a request consuming a name that
	// contains one of them needs a matching quota that limits that name.
	MatchContains []string
	// MatchScopes lists scope selectors; an object matching one needs a matching quota
	// with a selector of the same scope name. As upstream, these apply to objects of every
	// resource, not only APIGroup/Resource.
	MatchScopes []corev1.ScopedResourceSelectorRequirement
}

// Request is one write as CheckRequest sees it.
type Request struct {
	Operation   Operation
	Resource    schema.GroupResource
	Subresource string
	// Name is the request's name, used in refusals; when empty the object's name, then its
	// generateName, then "Unknown" is used, as upstream.
	Name string
	// Object is the object to be stored (nil on DELETE); OldObject the stored one (nil on
	// CREATE). Typed k8s.io/api structs for built-in kinds, *unstructured.Unstructured for
	// custom resources. Neither is modified.
	Object    runtime.Object
	OldObject runtime.Object
}

// quotaPlan records how one quota relates to the request.
type quotaPlan struct {
	index              int
	matchNew, matchOld bool
}

// CheckRequest decides one request against the quotas of its namespace and returns the
// quotas whose status.used changes, in input order, or the refusal. It is upstream's
// checkRequest with quotad's exact accounting: for every quota, new used = used − (quota
// matched the old object ? usage(old) : 0) + (quota matches the new object ? usage(new) :
// 0), masked to the quota's status.hard. So CREATE charges, DELETE credits, and UPDATE
// charges or credits the difference (a pod reaching Succeeded/Failed, a service changing
// type, a PVC resize, a pod moving between scopes). Only increases are checked against
// status.hard; a request that only lowers usage is never refused. Quotas are matched and
// checked on status.hard, never spec.hard.
//
// Inputs are read-only. A returned quota is a copy whose status.used is its own; every other
// field shares its maps and slices with the input quota, so callers must not modify them.
//
// Refusals carry upstream's texts; all but one are *apierrors.StatusError Forbidden
// (`<resource> "<name>" is forbidden: <msg>`): `failed quota: <q>: must specify ...`,
// `status unknown for quota: <q>, resources: ...`, `quota usage is negative for
// resource(s): ...`, `insufficient quota to consume: ...`, `exceeded quota: <q>,
// requested: ..., used: ..., limited: ...`. Uncovered limited scopes give a plain error
// (`insufficient quota to match these scopes: [...]`, HTTP 500 upstream).
//
// Writes to the status subresource (IsReport) are facts reported by nodes and controllers
// (a pod's phase, what its node allocated and runs after a resize, a PVC's
// status.allocatedResources after a volume expansion): they are charged and credited
// exactly like the others, in the same transaction, but never refused. Upstream never
// evaluates them in admission (its controller recounts later) and so never refuses them;
// usage may then exceed hard, which only blocks further requests (design.md §2, I2).
//
// Dry-run requests are checked exactly like others; the caller simply does not commit the
// returned quotas.
//
// CheckRequest is Prepare followed by Check.
func CheckRequest(quotas []corev1.ResourceQuota, req Request, reg Registry, limited []LimitedResource) ([]corev1.ResourceQuota, error) {
	p, err := Prepare(req, reg, limited)
	if err != nil {
		return nil, err
	}
	return p.Check(quotas)
}

// IsReport reports whether a write to subresource reports facts (the status
// subresource), which quota records and never refuses.
func IsReport(subresource string) bool { return subresource == "status" }

// Prepared is the part of a request's decision that does not depend on the quotas: its
// evaluator, the usage of its objects and what the limitedResources configuration asks of
// it. A writer prepares its request once, in its own goroutine; the namespace's batch then
// checks it against the running quota state (Check), as often as the batch is evaluated.
type Prepared struct {
	req            Request
	ev             Evaluator
	newObj, oldObj runtime.Object
	newUsage       corev1.ResourceList
	oldUsage       corev1.ResourceList
	limitedScopes  []corev1.ScopedResourceSelectorRequirement
	limitedNames   []corev1.ResourceName
	negative       []corev1.ResourceName
	// findings are what the quotas reported at the last Check (see Findings).
	findings []Finding
}

// Prepare evaluates what a request's decision needs besides the quotas. A nil Prepared
// (with a nil error) is a request no quota governs; its Check changes nothing.
func Prepare(req Request, reg Registry, limited []LimitedResource) (*Prepared, error) {
	// 1. Find the evaluator; unknown or unhandled requests touch no quota.
	ev := reg.Get(req.Resource)
	if ev == nil || !ev.Handles(req.Subresource) {
		return nil, nil
	}

	// 2. Pick the versions whose usage counts. An old object without a resourceVersion is
	// a create-on-update and is charged in full, as upstream.
	newObj, oldObj := req.Object, req.OldObject
	switch req.Operation {
	case Create:
		oldObj = nil
		if newObj == nil {
			return nil, errors.New("quota: CREATE request without an object")
		}
	case Update:
		if newObj == nil {
			return nil, errors.New("quota: UPDATE request without an object")
		}
		if oldObj == nil {
			return nil, forbidden(req, errors.New("unable to get previous usage since prior version of object was not found"))
		}
		if m, err := meta.Accessor(oldObj); err == nil && m.GetResourceVersion() == "" {
			oldObj = nil
		}
	case Delete:
		newObj = nil
		if oldObj == nil {
			return nil, forbidden(req, errors.New("unable to get previous usage since prior version of object was not found"))
		}
	default:
		return nil, fmt.Errorf("quota: unsupported operation %q", req.Operation)
	}
	p := &Prepared{req: req, ev: ev, newObj: newObj, oldObj: oldObj}

	// 3. Usage of both versions (pure functions of the objects).
	var err error
	if newObj != nil {
		if p.newUsage, err = ev.Usage(newObj); err != nil {
			return nil, err
		}
	}
	if oldObj != nil {
		if p.oldUsage, err = ev.Usage(oldObj); err != nil {
			return nil, err
		}
	}

	// 4. Limited scopes the new object matches, over every configured entry as upstream.
	// Upstream admits a request silently when these cannot be evaluated, which would leave
	// it uncharged; quotad treats that as "no limited scope matched" and keeps accounting.
	if newObj != nil {
		for _, l := range limited {
			matched, err := MatchingScopes(ev, newObj, l.MatchScopes)
			if err != nil {
				p.limitedScopes = nil
				break
			}
			p.limitedScopes = append(p.limitedScopes, matched...)
		}
	}

	// 5. Names that need a covering quota (matchContains for this group-resource), and
	// names whose usage would be negative.
	p.limitedNames = limitedByDefault(p.newUsage, limitedFor(limited, req.Resource))
	p.negative = IsNegative(p.newUsage)
	return p, nil
}

// Check decides the prepared request against quotas (see CheckRequest) and records the
// quotas' findings (Findings).
//
// Enforcement modes (EnforcementAnnotation): an Enforce quota refuses as upstream. A Warn
// or Audit quota never refuses for "exceeded quota" nor for "failed quota: must specify":
// its delta is applied (used may pass hard; usage stays exact) and a finding records what
// Enforce would have refused, so a platform team can roll a quota out before enforcing
// it. Its other refusals ("status unknown", negative usage, limitedResources) stay: they
// are not the quota's verdict on the request. Thresholds (WarnAtAnnotation): every quota,
// in any mode, reports the resources a request raises to above their threshold (and not
// above hard, which is the exceeded finding) in one threshold finding.
func (p *Prepared) Check(quotas []corev1.ResourceQuota) ([]corev1.ResourceQuota, error) {
	if p == nil {
		return nil, nil
	}
	p.findings = nil
	req, ev, newObj, oldObj := p.req, p.ev, p.newObj, p.oldObj
	newUsage, oldUsage := p.newUsage, p.oldUsage
	if IsReport(req.Subresource) {
		return p.record(quotas), nil
	}

	// 6. Relate every quota to the request, in order: collect the scopes that cover the new
	// object, then for quotas matching the new object run the constraint and status checks
	// (only when the request raises that quota's usage, so updates that consume nothing
	// more are never refused).
	var (
		plans            []quotaPlan
		restrictedScopes []corev1.ScopedResourceSelectorRequirement
		restrictedNames  []corev1.ResourceName
		increase         bool
	)
	for i := range quotas {
		rq := &quotas[i]
		pl := quotaPlan{index: i}
		restricted := ev.MatchingResources(ResourceNames(rq.Status.Hard))
		if newObj != nil {
			selectors := ScopeSelectors(rq)
			local, err := MatchingScopes(ev, newObj, selectors)
			if err != nil {
				if req.Operation == Create {
					p.findings = nil
					return nil, fmt.Errorf("error matching scopes of quota %s, err: %v", rq.Name, err)
				}
				// A selector that cannot be evaluated fails for every object of this kind,
				// so no stored object is charged to this quota (CalculateUsage agrees).
				continue
			}
			restrictedScopes = append(restrictedScopes, local...)
			// The quota matches when it limits a name of this kind and every selector
			// matched (MatchingScopes evaluated each one, as Matches would).
			pl.matchNew = len(restricted) > 0 && len(local) == len(selectors)
		}
		if oldObj != nil && len(restricted) > 0 {
			// A matching error means no stored object was ever charged here: no credit.
			pl.matchOld, _ = matchesAllScopes(ev, ScopeSelectors(rq), oldObj)
		}
		if !pl.matchNew && !pl.matchOld {
			continue
		}
		plans = append(plans, pl)
		if !pl.matchNew {
			continue
		}
		restrictedNames = append(restrictedNames, restricted...)
		if !hasIncrease(newUsage, charged(pl.matchOld, oldUsage)) {
			continue
		}
		// 8 (in part). With matching quotas, the request consumes more when one of their
		// unmasked deltas increases.
		increase = true
		if c, ok := ev.(Constrainer); ok {
			if err := c.Constraints(restricted, newObj); err != nil {
				if mode := EnforcementOf(rq.Annotations); mode != Enforce {
					p.findings = append(p.findings, newFinding(rq, mode, FindingConstraint, nil, fmt.Sprintf("would fail quota %s: %v", rq.Name, err)))
				} else {
					msg := fmt.Sprintf("failed quota: %s: %v", rq.Name, err)
					p.findings = []Finding{newFinding(rq, Enforce, FindingConstraint, nil, msg)}
					return nil, forbidden(req, errors.New(msg))
				}
			}
		}
		if !hasUsageStats(rq, restricted) {
			p.findings = nil
			return nil, forbidden(req, fmt.Errorf("status unknown for quota: %s, resources: %s", rq.Name, prettyPrintNames(restricted)))
		}
	}

	// 7. Usage can never be negative.
	if len(p.negative) > 0 {
		p.findings = nil
		return nil, forbidden(req, fmt.Errorf("quota usage is negative for resource(s): %s", prettyPrintNames(p.negative)))
	}

	// 8. Does the request consume anything more? (Upstream's short-circuit: with matching
	// quotas, their unmasked deltas; without, the object's own delta.)
	if newObj != nil && !anyMatchNew(plans) {
		increase = hasIncrease(newUsage, oldUsage)
	}

	// 9. Consumption limited by default needs a covering quota.
	if increase {
		if len(p.limitedNames) > 0 {
			if uncovered := sets.List(sets.New(p.limitedNames...).Difference(sets.New(restrictedNames...))); len(uncovered) > 0 {
				p.findings = nil
				return nil, forbidden(req, fmt.Errorf("insufficient quota to consume: %s", prettyPrintNames(uncovered)))
			}
		}
		if uncovered := UncoveredScopes(p.limitedScopes, restrictedScopes); len(uncovered) > 0 {
			p.findings = nil
			return nil, fmt.Errorf("insufficient quota to match these scopes: %v", uncovered)
		}
	}

	// 10. Apply each quota's delta; refuse the first Enforce quota (in order) an increase
	// exceeds. Warn and Audit quotas record what they would refuse; every quota records the
	// resources an increase takes above their warn-at threshold.
	var changed []corev1.ResourceQuota
	for _, pl := range plans {
		rq := &quotas[pl.index]
		var add, sub corev1.ResourceList
		if pl.matchNew {
			add = newUsage
		}
		if pl.matchOld {
			sub = oldUsage
		}
		delta := quotaDelta(add, sub, rq.Status.Hard)
		if len(delta) == 0 {
			continue
		}
		newUsed := applyDelta(rq.Status.Used, delta)
		// Every increase a request makes is checked (I2); reported facts were recorded
		// above (record).
		var exceeded, raised []corev1.ResourceName
		annotated := len(rq.Annotations) > 0
		for name, d := range delta {
			if d.Sign() <= 0 {
				continue
			}
			if hard, ok := rq.Status.Hard[name]; ok {
				if used := newUsed[name]; quantity.Cmp(used, hard) > 0 {
					exceeded = append(exceeded, name)
				} else if annotated {
					raised = append(raised, name) // for thresholds
				}
			}
		}
		// The annotations are read only for quotas the request raises, once each.
		modes := quotaModes{mode: Enforce}
		if annotated && (len(exceeded) > 0 || len(raised) > 0) {
			modes = modesOf(rq)
		}
		if len(exceeded) > 0 {
			slices.Sort(exceeded)
			if modes.mode == Enforce {
				msg := "exceeded quota: " + exceededMessage(rq.Name, ", ", delta, rq.Status.Used, rq.Status.Hard, exceeded)
				p.findings = []Finding{newFinding(rq, Enforce, FindingExceeded, exceeded, msg)}
				return nil, forbidden(req, errors.New(msg))
			}
			msg := "would exceed quota " + exceededMessage(rq.Name, ": ", delta, rq.Status.Used, rq.Status.Hard, exceeded)
			p.findings = append(p.findings, newFinding(rq, modes.mode, FindingExceeded, exceeded, msg))
		}
		if len(raised) > 0 && !modes.warnAt.Empty() {
			var crossed []crossing
			for _, name := range raised {
				pct := modes.warnAt.For(name)
				if pct == 0 {
					continue
				}
				used, hard := newUsed[name], rq.Status.Hard[name]
				if over, at := aboveThreshold(used, hard, pct); over {
					crossed = append(crossed, crossing{name: name, used: used, hard: hard, percent: at, threshold: pct})
				}
			}
			if len(crossed) > 0 {
				slices.SortFunc(crossed, func(a, b crossing) int { return strings.Compare(string(a.name), string(b.name)) })
				names := make([]corev1.ResourceName, len(crossed))
				for i, c := range crossed {
					names[i] = c.name
				}
				p.findings = append(p.findings, newFinding(rq, modes.mode, FindingThreshold, names, thresholdMessage(rq.Name, crossed)))
			}
		}
		if Equals(newUsed, rq.Status.Used) {
			continue
		}
		out := *rq
		out.Status.Used = newUsed
		changed = append(changed, out)
	}
	return changed, nil
}

// record applies a reported fact's delta to every quota matching its old or new object,
// refusing nothing and finding nothing (see IsReport). A quota whose scopes cannot be
// evaluated for the object counts none of its versions, as Check and CalculateUsage agree.
func (p *Prepared) record(quotas []corev1.ResourceQuota) []corev1.ResourceQuota {
	var changed []corev1.ResourceQuota
	for i := range quotas {
		rq := &quotas[i]
		restricted := p.ev.MatchingResources(ResourceNames(rq.Status.Hard))
		if len(restricted) == 0 {
			continue
		}
		selectors := ScopeSelectors(rq)
		var add, sub corev1.ResourceList
		if p.newObj != nil {
			if ok, _ := matchesAllScopes(p.ev, selectors, p.newObj); ok {
				add = p.newUsage
			}
		}
		if p.oldObj != nil {
			if ok, _ := matchesAllScopes(p.ev, selectors, p.oldObj); ok {
				sub = p.oldUsage
			}
		}
		delta := quotaDelta(add, sub, rq.Status.Hard)
		if len(delta) == 0 {
			continue
		}
		newUsed := applyDelta(rq.Status.Used, delta)
		if Equals(newUsed, rq.Status.Used) {
			continue
		}
		out := *rq
		out.Status.Used = newUsed
		changed = append(changed, out)
	}
	return changed
}

// anyMatchNew reports whether a plan matched the new object.
func anyMatchNew(plans []quotaPlan) bool {
	for _, p := range plans {
		if p.matchNew {
			return true
		}
	}
	return false
}

// quotaDelta returns add − sub over the names of hard, without zeros: what a quota's used
// changes by (RemoveZeros(Subtract(Mask(add, hard), Mask(sub, hard))), computed in one map).
func quotaDelta(add, sub, hard corev1.ResourceList) corev1.ResourceList {
	var delta corev1.ResourceList
	put := func(name corev1.ResourceName, v resource.Quantity) {
		if v.IsZero() {
			return
		}
		if delta == nil {
			delta = make(corev1.ResourceList, len(hard))
		}
		delta[name] = v
	}
	for name, av := range add {
		if _, ok := hard[name]; !ok {
			continue
		}
		v := av.DeepCopy()
		if bv, ok := sub[name]; ok {
			v = quantity.Sub(v, bv)
		}
		put(name, v)
	}
	for name, bv := range sub {
		if _, ok := hard[name]; !ok {
			continue
		}
		if _, ok := add[name]; ok {
			continue
		}
		v := bv.DeepCopy()
		v.Neg()
		put(name, v)
	}
	return delta
}

// charged returns usage when the quota matched the old object, else nil.
func charged(matched bool, usage corev1.ResourceList) corev1.ResourceList {
	if matched {
		return usage
	}
	return nil
}

// hasIncrease reports whether any value of a exceeds b's (a name missing from b counts as
// zero): len(Positive(Subtract(a, b))) > 0, without allocating.
func hasIncrease(a, b corev1.ResourceList) bool {
	for name, av := range a {
		bv, ok := b[name]
		if !ok {
			if av.Sign() > 0 {
				return true
			}
			continue
		}
		if quantity.Cmp(av, bv) > 0 {
			return true
		}
	}
	return false
}

// applyDelta returns used + delta. A credit for a name with no used entry leaves it absent
// (usage that was never recorded is not made negative).
func applyDelta(used, delta corev1.ResourceList) corev1.ResourceList {
	result := make(corev1.ResourceList, len(used)+len(delta))
	for name, v := range used {
		result[name] = v.DeepCopy()
	}
	for name, d := range delta {
		if v, ok := result[name]; ok {
			result[name] = quantity.Add(v, d)
		} else if d.Sign() > 0 {
			result[name] = d.DeepCopy()
		}
	}
	return result
}

// hasUsageStats reports whether every name of status.hard among restricted has a
// status.used entry.
func hasUsageStats(rq *corev1.ResourceQuota, restricted []corev1.ResourceName) bool {
	set := ToSet(restricted)
	for name := range rq.Status.Hard {
		if !set.Has(name) {
			continue
		}
		if _, ok := rq.Status.Used[name]; !ok {
			return false
		}
	}
	return true
}

// limitedFor returns the entries of limited that name gr.
func limitedFor(limited []LimitedResource, gr schema.GroupResource) []LimitedResource {
	var out []LimitedResource
	for _, l := range limited {
		if l.APIGroup == gr.Group && l.Resource == gr.Resource {
			out = append(out, l)
		}
	}
	return out
}

// limitedByDefault returns the consumed names (value > 0) that contain a matchContains
// substring of one of limited.
func limitedByDefault(usage corev1.ResourceList, limited []LimitedResource) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, l := range limited {
		for name, v := range usage {
			if v.Sign() != 1 {
				continue
			}
			for _, sub := range l.MatchContains {
				if strings.Contains(string(name), sub) {
					out = append(out, name)
					break
				}
			}
		}
	}
	return out
}

// forbidden wraps msg as upstream's admission.NewForbidden does.
func forbidden(req Request, msg error) error {
	return apierrors.NewForbidden(req.Resource, RequestName(req), msg)
}

// RequestName returns the name refusals use: the request's name, else the object's name,
// else its generateName, else "Unknown" (as upstream's admission errors).
func RequestName(req Request) string {
	if req.Name != "" {
		return req.Name
	}
	obj := req.Object
	if obj == nil {
		obj = req.OldObject
	}
	if obj == nil {
		return "Unknown"
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "Unknown/errorGettingMetadata"
	}
	if m.GetName() != "" {
		return m.GetName()
	}
	if m.GetGenerateName() != "" {
		return m.GetGenerateName()
	}
	return "Unknown"
}
