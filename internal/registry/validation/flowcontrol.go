package validation

import (
	"fmt"
	"math"
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/convert"
)

// flowcontrol.apiserver.k8s.io validation (upstream pkg/apis/flowcontrol/validation).
const (
	flowSchemaMaxMatchingPrecedence int32 = 10000
	plcMaxQueues                    int32 = 10 * 1000 * 1000
	shuffleShardingMaxHashBits            = 60
	// preserveZeroSharesKey is the v1beta3 annotation users may not set.
	preserveZeroSharesKey = "flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares"
	nsErrIntro            = "each member of this list must be '*' or a DNS-1123 label; "
)

var (
	fcVerbs         = []string{"create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"}
	fcSubjectKinds  = []string{"Group", "ServiceAccount", "User"}
	fcDistinguisher = []string{"ByNamespace", "ByUser"}
	fcEnablement    = []string{"Exempt", "Limited"}
	fcLimitResponse = []string{"Queue", "Reject"}
)

// FlowSchema validates a FlowSchema on create and update. The mandatory
// schemas' specs must equal upstream's fixed values (MandatoryFlowSchemas).
func FlowSchema(fs *flowcontrolv1.FlowSchema) field.ErrorList {
	errs := objectMeta(&fs.ObjectMeta, false, nameIsDNSSubdomain, metaPath)
	sp := field.NewPath("spec")
	s := &fs.Spec
	mp := sp.Child("matchingPrecedence")
	if s.MatchingPrecedence <= 0 {
		errs = append(errs, field.Invalid(mp, s.MatchingPrecedence, "must be a positive value"))
	}
	if s.MatchingPrecedence > flowSchemaMaxMatchingPrecedence {
		errs = append(errs, field.Invalid(mp, s.MatchingPrecedence, fmt.Sprintf("must not be greater than %v", flowSchemaMaxMatchingPrecedence)))
	}
	if s.MatchingPrecedence == 1 && fs.Name != flowcontrolv1.FlowSchemaNameExempt {
		errs = append(errs, field.Invalid(mp, s.MatchingPrecedence, "only the schema named 'exempt' may have matchingPrecedence 1"))
	}
	if s.DistinguisherMethod != nil && !slices.Contains(fcDistinguisher, string(s.DistinguisherMethod.Type)) {
		errs = append(errs, field.NotSupported(sp.Child("distinguisherMethod", "type"), convert.InternalJSON(s.DistinguisherMethod), fcDistinguisher))
	}
	if pl := s.PriorityLevelConfiguration.Name; pl != "" {
		errs = append(errs, nameMsgs(nameIsDNSSubdomain, pl, sp.Child("priorityLevelConfiguration", "name"))...)
	} else {
		errs = append(errs, field.Required(sp.Child("priorityLevelConfiguration", "name"), "must reference a priority level"))
	}
	for i := range s.Rules {
		errs = append(errs, flowRule(&s.Rules[i], sp.Child("rules").Index(i))...)
	}
	for _, m := range MandatoryFlowSchemas() {
		if m.Name == fs.Name && !equality.Semantic.DeepEqual(fs.Spec, m.Spec) {
			errs = append(errs, field.Invalid(sp, convert.InternalJSON(fs.Spec), fmt.Sprintf("spec of '%s' must equal the fixed value", fs.Name)))
		}
	}
	cp := field.NewPath("status", "conditions")
	seen := map[flowcontrolv1.FlowSchemaConditionType]bool{}
	for i, c := range fs.Status.Conditions {
		if seen[c.Type] {
			errs = append(errs, field.Duplicate(cp.Index(i).Child("type"), c.Type))
		}
		seen[c.Type] = true
		if c.Type == "" {
			errs = append(errs, field.Required(cp.Index(i).Child("type"), ""))
		}
	}
	return errs
}

func wildOnly(vs []string, p *field.Path, what string) field.ErrorList {
	if len(vs) > 1 && slices.Contains(vs, "*") {
		return field.ErrorList{field.Invalid(p, vs, "if '*' is present, must not specify other "+what)}
	}
	return nil
}

func fcVerbsErrs(verbs []string, p *field.Path) field.ErrorList {
	switch {
	case len(verbs) == 0:
		return field.ErrorList{field.Required(p, "verbs must contain at least one value")}
	case slices.Contains(verbs, "*"):
		return wildOnly(verbs, p, "verbs")
	}
	for _, v := range verbs {
		if !slices.Contains(fcVerbs, v) {
			return field.ErrorList{field.NotSupported(p, verbs, fcVerbs)}
		}
	}
	return nil
}

func flowRule(r *flowcontrolv1.PolicyRulesWithSubjects, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.Subjects) == 0 {
		errs = append(errs, field.Required(p.Child("subjects"), "subjects must contain at least one value"))
	}
	for i := range r.Subjects {
		errs = append(errs, flowSubject(&r.Subjects[i], p.Child("subjects").Index(i))...)
	}
	if len(r.ResourceRules) == 0 && len(r.NonResourceRules) == 0 {
		errs = append(errs, field.Required(p, "at least one of resourceRules and nonResourceRules has to be non-empty"))
	}
	for i, rr := range r.ResourceRules {
		ip := p.Child("resourceRules").Index(i)
		errs = append(errs, fcVerbsErrs(rr.Verbs, ip.Child("verbs"))...)
		if len(rr.APIGroups) == 0 {
			errs = append(errs, field.Required(ip.Child("apiGroups"), "resource rules must supply at least one api group"))
		} else {
			errs = append(errs, wildOnly(rr.APIGroups, ip.Child("apiGroups"), "api groups")...)
		}
		if len(rr.Resources) == 0 {
			errs = append(errs, field.Required(ip.Child("resources"), "resource rules must supply at least one resource"))
		} else {
			errs = append(errs, wildOnly(rr.Resources, ip.Child("resources"), "resources")...)
		}
		switch {
		case len(rr.Namespaces) == 0 && !rr.ClusterScope:
			errs = append(errs, field.Required(ip.Child("namespaces"), "resource rules that are not cluster scoped must supply at least one namespace"))
		case slices.Contains(rr.Namespaces, "*"):
			errs = append(errs, wildOnly(rr.Namespaces, ip.Child("namespaces"), "namespaces")...)
		default:
			for j, ns := range rr.Namespaces {
				for _, msg := range apimachineryvalidation.ValidateNamespaceName(ns, false) {
					errs = append(errs, field.Invalid(ip.Child("namespaces").Index(j), ns, nsErrIntro+msg))
				}
			}
		}
	}
	for i, nr := range r.NonResourceRules {
		ip := p.Child("nonResourceRules").Index(i)
		errs = append(errs, fcVerbsErrs(nr.Verbs, ip.Child("verbs"))...)
		up := ip.Child("nonResourceURLs")
		switch {
		case len(nr.NonResourceURLs) == 0:
			errs = append(errs, field.Required(up, "nonResourceURLs must contain at least one value"))
		case slices.Contains(nr.NonResourceURLs, "*"):
			errs = append(errs, wildOnly(nr.NonResourceURLs, up, "non-resource URLs")...)
		default:
			for j, u := range nr.NonResourceURLs {
				if e := nonResourceURL(u, up.Index(j)); e != nil {
					errs = append(errs, e)
				}
			}
		}
	}
	return errs
}

func nonResourceURL(u string, p *field.Path) *field.Error {
	switch {
	case u == "":
		return field.Invalid(p, u, "must not be empty")
	case u == "/":
		return nil
	case !strings.HasPrefix(u, "/"):
		return field.Invalid(p, u, "must start with slash")
	case strings.Contains(u, " "):
		return field.Invalid(p, u, "must not contain white-space")
	case strings.Contains(u, "//"):
		return field.Invalid(p, u, "must not contain double slash")
	}
	if n := strings.Count(u, "*"); n > 1 || (n == 1 && u[len(u)-2:] != "/*") {
		return field.Invalid(p, u, "wildcard can only do suffix matching")
	}
	return nil
}

func flowSubject(s *flowcontrolv1.Subject, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	forbid := func(set bool, name, msg string) {
		if set {
			errs = append(errs, field.Forbidden(p.Child(name), msg))
		}
	}
	const userMsg, groupMsg, saMsg = "user is forbidden when subject kind is not 'User'", "group is forbidden when subject kind is not 'Group'", "serviceAccount is forbidden when subject kind is not 'ServiceAccount'"
	switch s.Kind {
	case flowcontrolv1.SubjectKindServiceAccount:
		sp := p.Child("serviceAccount")
		if sa := s.ServiceAccount; sa == nil {
			errs = append(errs, field.Required(sp, "serviceAccount is required when subject kind is 'ServiceAccount'"))
		} else {
			if sa.Name == "" {
				errs = append(errs, field.Required(sp.Child("name"), ""))
			} else if sa.Name != flowcontrolv1.NameAll {
				errs = append(errs, nameMsgs(apimachineryvalidation.ValidateServiceAccountName, sa.Name, sp.Child("name"))...)
			}
			if sa.Namespace == "" {
				errs = append(errs, field.Required(sp.Child("namespace"), "must specify namespace for service account"))
			} else {
				errs = append(errs, nameMsgs(apimachineryvalidation.ValidateNamespaceName, sa.Namespace, sp.Child("namespace"))...)
			}
		}
		forbid(s.User != nil, "user", userMsg)
		forbid(s.Group != nil, "group", groupMsg)
	case flowcontrolv1.SubjectKindUser:
		if s.User == nil {
			errs = append(errs, field.Required(p.Child("user"), "user is required when subject kind is 'User'"))
		} else if s.User.Name == "" {
			errs = append(errs, field.Required(p.Child("user", "name"), ""))
		}
		forbid(s.ServiceAccount != nil, "serviceAccount", saMsg)
		forbid(s.Group != nil, "group", groupMsg)
	case flowcontrolv1.SubjectKindGroup:
		if s.Group == nil {
			errs = append(errs, field.Required(p.Child("group"), "group is required when subject kind is 'Group'"))
		} else if s.Group.Name == "" {
			errs = append(errs, field.Required(p.Child("group", "name"), ""))
		}
		forbid(s.ServiceAccount != nil, "serviceAccount", saMsg)
		forbid(s.User != nil, "user", userMsg)
	default:
		errs = append(errs, field.NotSupported(p.Child("kind"), s.Kind, fcSubjectKinds))
	}
	return errs
}

// PriorityLevelConfiguration validates a PriorityLevelConfiguration on create
// and update. The mandatory levels' specs must equal upstream's fixed values
// (exempt's spec.exempt excepted).
func PriorityLevelConfiguration(pl *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	errs := objectMeta(&pl.ObjectMeta, false, nameIsDNSSubdomain, metaPath)
	if _, ok := pl.Annotations[preserveZeroSharesKey]; ok {
		errs = append(errs, field.Forbidden(metaPath.Child("annotations"), fmt.Sprintf("annotation '%s' is forbidden", preserveZeroSharesKey)))
	}
	sp := field.NewPath("spec")
	s := &pl.Spec
	if (pl.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt) != (s.Type == flowcontrolv1.PriorityLevelEnablementExempt) {
		errs = append(errs, field.Invalid(sp.Child("type"), s.Type, "must be 'Exempt' if and only if `name` is 'exempt'"))
	}
	percent := func(v *int32, p *field.Path) {
		if v != nil && (*v < 0 || *v > 100) {
			errs = append(errs, field.Invalid(p, *v, "must be between 0 and 100, inclusive"))
		}
	}
	switch s.Type {
	case flowcontrolv1.PriorityLevelEnablementExempt:
		if s.Limited != nil {
			errs = append(errs, field.Forbidden(sp.Child("limited"), "must be nil if the type is not Limited"))
		}
		if e := s.Exempt; e != nil {
			if e.NominalConcurrencyShares != nil && *e.NominalConcurrencyShares < 0 {
				errs = append(errs, field.Invalid(sp.Child("exempt", "nominalConcurrencyShares"), *e.NominalConcurrencyShares, "must be a non-negative integer"))
			}
			percent(e.LendablePercent, sp.Child("exempt", "lendablePercent"))
		}
	case flowcontrolv1.PriorityLevelEnablementLimited:
		if s.Exempt != nil {
			errs = append(errs, field.Forbidden(sp.Child("exempt"), "must be nil if the type is Limited"))
		}
		l := s.Limited
		if l == nil {
			errs = append(errs, field.Required(sp.Child("limited"), "must not be empty when type is Limited"))
			break
		}
		lp := sp.Child("limited")
		if l.NominalConcurrencyShares != nil && *l.NominalConcurrencyShares < 0 {
			errs = append(errs, field.Invalid(lp.Child("nominalConcurrencyShares"), *l.NominalConcurrencyShares, "must be a non-negative integer"))
		}
		errs = append(errs, limitResponse(&l.LimitResponse, lp.Child("limitResponse"))...)
		percent(l.LendablePercent, lp.Child("lendablePercent"))
		if l.BorrowingLimitPercent != nil && *l.BorrowingLimitPercent < 0 {
			errs = append(errs, field.Invalid(lp.Child("borrowingLimitPercent"), *l.BorrowingLimitPercent, "if specified, must be a non-negative integer"))
		}
	case "":
		errs = append(errs, field.Required(sp.Child("type"), ""))
	default:
		errs = append(errs, field.NotSupported(sp.Child("type"), s.Type, fcEnablement))
	}
	for _, m := range MandatoryPriorityLevelConfigurations() {
		if m.Name != pl.Name {
			continue
		}
		have := pl.Spec.DeepCopy()
		msg := fmt.Sprintf("spec of '%s' must equal the fixed value", pl.Name)
		if pl.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
			have.Exempt = m.Spec.Exempt
			msg = fmt.Sprintf("spec of '%s' except the 'spec.exempt' field must equal the fixed value", pl.Name)
		}
		if !equality.Semantic.DeepEqual(*have, m.Spec) {
			errs = append(errs, field.Invalid(sp, convert.InternalJSON(pl.Spec), msg))
		}
	}
	cp := field.NewPath("status", "conditions")
	seen := map[flowcontrolv1.PriorityLevelConfigurationConditionType]bool{}
	for i, c := range pl.Status.Conditions {
		if seen[c.Type] {
			errs = append(errs, field.Duplicate(cp.Index(i).Child("type"), c.Type))
		}
		seen[c.Type] = true
		if c.Type == "" {
			errs = append(errs, field.Required(cp.Index(i).Child("type"), ""))
		}
	}
	return errs
}

func limitResponse(lr *flowcontrolv1.LimitResponse, p *field.Path) field.ErrorList {
	switch lr.Type {
	case flowcontrolv1.LimitResponseTypeReject:
		if lr.Queuing != nil {
			return field.ErrorList{field.Forbidden(p.Child("queuing"), "must be nil if limited.limitResponse.type is not Limited")}
		}
	case flowcontrolv1.LimitResponseTypeQueue:
		q := lr.Queuing
		if q == nil {
			return field.ErrorList{field.Required(p.Child("queuing"), "must not be empty if limited.limitResponse.type is Limited")}
		}
		var errs field.ErrorList
		qp := p.Child("queuing")
		if q.QueueLengthLimit <= 0 {
			errs = append(errs, field.Invalid(qp.Child("queueLengthLimit"), q.QueueLengthLimit, "must be positive"))
		}
		if q.Queues <= 0 {
			errs = append(errs, field.Invalid(qp.Child("queues"), q.Queues, "must be positive"))
		} else if q.Queues > plcMaxQueues {
			errs = append(errs, field.Invalid(qp.Child("queues"), q.Queues, fmt.Sprintf("must not be greater than %d", plcMaxQueues)))
		}
		switch {
		case q.HandSize <= 0:
			errs = append(errs, field.Invalid(qp.Child("handSize"), q.HandSize, "must be positive"))
		case q.HandSize > q.Queues:
			errs = append(errs, field.Invalid(qp.Child("handSize"), q.HandSize, fmt.Sprintf("should not be greater than queues (%d)", q.Queues)))
		case int(math.Ceil(math.Log2(float64(q.Queues))*float64(q.HandSize))) > shuffleShardingMaxHashBits:
			errs = append(errs, field.Invalid(qp.Child("handSize"), q.HandSize, fmt.Sprintf("required entropy bits of deckSize %d and handSize %d should not be greater than %d", q.Queues, q.HandSize, shuffleShardingMaxHashBits)))
		}
		return errs
	case "":
		return field.ErrorList{field.Required(p.Child("type"), "")}
	default:
		return field.ErrorList{field.NotSupported(p.Child("type"), lr.Type, fcLimitResponse)}
	}
	return nil
}

func i32(v int32) *int32 { return &v }

// allTraffic is the rule of upstream's mandatory schemas: everything, for the given groups.
func allTraffic(groups ...string) []flowcontrolv1.PolicyRulesWithSubjects {
	var subjects []flowcontrolv1.Subject
	for _, g := range groups {
		subjects = append(subjects, flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: g}})
	}
	return []flowcontrolv1.PolicyRulesWithSubjects{{
		Subjects:         subjects,
		ResourceRules:    []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}, Namespaces: []string{"*"}, ClusterScope: true}},
		NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
	}}
}

// MandatoryFlowSchemas are upstream's mandatory FlowSchemas (exempt and
// catch-all), as kube-apiserver creates and keeps them, defaults applied.
func MandatoryFlowSchemas() []flowcontrolv1.FlowSchema {
	mk := func(name, pl string, precedence int32, dm flowcontrolv1.FlowDistinguisherMethodType, groups ...string) flowcontrolv1.FlowSchema {
		fs := flowcontrolv1.FlowSchema{}
		fs.Name = name
		fs.Annotations = map[string]string{flowcontrolv1.AutoUpdateAnnotationKey: "true"}
		fs.Spec = flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: pl}, MatchingPrecedence: precedence, Rules: allTraffic(groups...)}
		if dm != "" {
			fs.Spec.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: dm}
		}
		return fs
	}
	return []flowcontrolv1.FlowSchema{
		mk(flowcontrolv1.FlowSchemaNameExempt, flowcontrolv1.PriorityLevelConfigurationNameExempt, 1, "", "system:masters"),
		mk(flowcontrolv1.FlowSchemaNameCatchAll, flowcontrolv1.PriorityLevelConfigurationNameCatchAll, 10000, flowcontrolv1.FlowDistinguisherMethodByUserType, "system:unauthenticated", "system:authenticated"),
	}
}

// MandatoryPriorityLevelConfigurations are upstream's mandatory priority
// levels (exempt and catch-all), defaults applied.
func MandatoryPriorityLevelConfigurations() []flowcontrolv1.PriorityLevelConfiguration {
	mk := func(name string, spec flowcontrolv1.PriorityLevelConfigurationSpec) flowcontrolv1.PriorityLevelConfiguration {
		pl := flowcontrolv1.PriorityLevelConfiguration{Spec: spec}
		pl.Name = name
		pl.Annotations = map[string]string{flowcontrolv1.AutoUpdateAnnotationKey: "true"}
		return pl
	}
	return []flowcontrolv1.PriorityLevelConfiguration{
		mk(flowcontrolv1.PriorityLevelConfigurationNameExempt, flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementExempt, Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{NominalConcurrencyShares: i32(0), LendablePercent: i32(0)}}),
		mk(flowcontrolv1.PriorityLevelConfigurationNameCatchAll, flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: i32(5), LendablePercent: i32(0), LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}}),
	}
}

// FlowSchemaUpdate is upstream's update validation: the object validated as new, plus the
// metadata update rules.
func FlowSchemaUpdate(n, o *flowcontrolv1.FlowSchema) field.ErrorList {
	return append(FlowSchema(n), objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
}

// PriorityLevelConfigurationUpdate is upstream's update validation: the object validated
// as new, plus the metadata update rules.
func PriorityLevelConfigurationUpdate(n, o *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	return append(PriorityLevelConfiguration(n), objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
}
