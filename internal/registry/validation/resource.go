package validation

import (
	"fmt"
	"slices"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/convert"
)

// DeviceClass validates a DeviceClass (upstream ValidateDeviceClass).
func DeviceClass(c *resourcev1.DeviceClass) field.ErrorList {
	errs := objectMeta(&c.ObjectMeta, false, nameIsDNSSubdomain, metaPath)
	return append(errs, deviceClassSpec(&c.Spec, field.NewPath("spec"))...)
}

// DeviceClassUpdate validates an update of a DeviceClass.
func DeviceClassUpdate(n, o *resourcev1.DeviceClass) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	return append(errs, deviceClassSpec(&n.Spec, field.NewPath("spec"))...)
}

func deviceClassSpec(s *resourcev1.DeviceClassSpec, p *field.Path) field.ErrorList {
	errs := deviceSelectors(s.Selectors, p.Child("selectors"))
	errs = append(errs, tooMany(len(s.Config), resourcev1.DeviceConfigMaxSize, p.Child("config"))...)
	for i := range s.Config {
		errs = append(errs, deviceConfiguration(&s.Config[i].DeviceConfiguration, p.Child("config").Index(i))...)
	}
	if s.ExtendedResourceName != nil {
		for _, msg := range utilvalidation.IsQualifiedName(*s.ExtendedResourceName) {
			errs = append(errs, field.Invalid(p.Child("extendedResourceName"), *s.ExtendedResourceName, msg))
		}
	}
	return errs
}

// ResourceClaim validates a ResourceClaim (upstream ValidateResourceClaim).
func ResourceClaim(c *resourcev1.ResourceClaim) field.ErrorList {
	errs := objectMeta(&c.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	return append(errs, deviceClaim(&c.Spec.Devices, field.NewPath("spec", "devices"))...)
}

// ResourceClaimUpdate validates an update of a ResourceClaim (also through /status,
// whose writes keep the stored spec, as main-resource writes keep the stored status):
// the spec is immutable, and so is an allocation once made; consumers may only be
// reserved for an allocated claim.
func ResourceClaimUpdate(n, o *resourcev1.ResourceClaim) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, apimachineryvalidation.ValidateImmutableField(n.Spec, o.Spec, field.NewPath("spec"))...)
	errs = append(errs, deviceClaim(&n.Spec.Devices, field.NewPath("spec", "devices"))...)
	return append(errs, claimStatusUpdate(n, o, field.NewPath("status"))...)
}

// claimStatusUpdate is the main part of upstream's validateResourceClaimStatusUpdate.
func claimStatusUpdate(nc, oc *resourcev1.ResourceClaim, p *field.Path) field.ErrorList {
	n, o := &nc.Status, &oc.Status
	rp := p.Child("reservedFor")
	errs := tooMany(len(n.ReservedFor), resourcev1.ResourceClaimReservedForMaxSize, rp)
	seen := map[string]bool{}
	for i, r := range n.ReservedFor {
		ip := rp.Index(i)
		if seen[string(r.UID)] {
			errs = append(errs, field.Duplicate(ip, r.UID))
		}
		seen[string(r.UID)] = true
		if r.Resource == "" {
			errs = append(errs, field.Required(ip.Child("resource"), ""))
		}
		if r.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		}
		if r.UID == "" {
			errs = append(errs, field.Required(ip.Child("uid"), ""))
		}
	}
	if len(n.ReservedFor) > 0 {
		if n.Allocation == nil {
			errs = append(errs, field.Forbidden(rp, "may not be specified when `allocated` is not set"))
		} else if nc.DeletionTimestamp != nil {
			old := map[resourcev1.ResourceClaimConsumerReference]bool{}
			for _, r := range o.ReservedFor {
				old[r] = true
			}
			for _, r := range n.ReservedFor {
				if !old[r] {
					errs = append(errs, field.Forbidden(rp, "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set"))
					break
				}
			}
		}
	}
	switch {
	case o.Allocation != nil && n.Allocation != nil:
		errs = append(errs, apimachineryvalidation.ValidateImmutableField(n.Allocation, o.Allocation, p.Child("allocation"))...)
	case n.Allocation != nil:
		names := map[string]map[string]bool{}
		for _, r := range nc.Spec.Devices.Requests {
			subs := map[string]bool{}
			for _, s := range r.FirstAvailable {
				subs[s.Name] = true
			}
			names[r.Name] = subs
		}
		resp := p.Child("allocation", "devices", "results")
		errs = append(errs, tooMany(len(n.Allocation.Devices.Results), resourcev1.AllocationResultsMaxSize, resp)...)
		for i, r := range n.Allocation.Devices.Results {
			ip := resp.Index(i)
			errs = append(errs, requestRefs([]string{r.Request}, names, ip.Child("request"))...)
			errs = append(errs, csiDriverName(r.Driver, ip.Child("driver"))...)
			if r.Pool == "" {
				errs = append(errs, field.Required(ip.Child("pool"), ""))
			}
			errs = append(errs, dns1123Label(r.Device, ip.Child("device"))...)
		}
		if n.Allocation.NodeSelector != nil {
			errs = append(errs, nodeSelector(n.Allocation.NodeSelector, false, p.Child("allocation", "nodeSelector"))...)
		}
	}
	return errs
}

// ResourceClaimTemplate validates a ResourceClaimTemplate.
func ResourceClaimTemplate(t *resourcev1.ResourceClaimTemplate) field.ErrorList {
	errs := objectMeta(&t.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	return append(errs, claimTemplateSpec(&t.Spec, field.NewPath("spec"))...)
}

// ResourceClaimTemplateUpdate validates an update of a ResourceClaimTemplate: the spec
// is immutable.
func ResourceClaimTemplateUpdate(n, o *resourcev1.ResourceClaimTemplate) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, apimachineryvalidation.ValidateImmutableField(n.Spec, o.Spec, field.NewPath("spec"))...)
	return append(errs, claimTemplateSpec(&n.Spec, field.NewPath("spec"))...)
}

func claimTemplateSpec(s *resourcev1.ResourceClaimTemplateSpec, p *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabels(s.Labels, p.Child("metadata", "labels"))
	errs = append(errs, apimachineryvalidation.ValidateAnnotations(s.Annotations, p.Child("metadata", "annotations"))...)
	return append(errs, deviceClaim(&s.Spec.Devices, p.Child("spec", "devices"))...)
}

// deviceClaim is upstream's validateDeviceClaim without the CEL compilation.
func deviceClaim(d *resourcev1.DeviceClaim, p *field.Path) field.ErrorList {
	rp := p.Child("requests")
	errs := tooMany(len(d.Requests), resourcev1.DeviceRequestsMaxSize, rp)
	names := map[string]map[string]bool{}
	for i := range d.Requests {
		r := &d.Requests[i]
		ip := rp.Index(i)
		if _, dup := names[r.Name]; dup {
			errs = append(errs, field.Duplicate(ip, r.Name))
		}
		subs := map[string]bool{}
		for _, s := range r.FirstAvailable {
			subs[s.Name] = true
		}
		names[r.Name] = subs
		errs = append(errs, deviceRequest(r, ip)...)
	}
	errs = append(errs, tooMany(len(d.Constraints), resourcev1.DeviceConstraintsMaxSize, p.Child("constraints"))...)
	for i := range d.Constraints {
		c := &d.Constraints[i]
		cp := p.Child("constraints").Index(i)
		errs = append(errs, requestRefs(c.Requests, names, cp.Child("requests"))...)
		if c.MatchAttribute == nil && c.DistinctAttribute == nil {
			errs = append(errs, field.Required(cp.Child("matchAttribute"), ""))
		}
	}
	errs = append(errs, tooMany(len(d.Config), resourcev1.DeviceConfigMaxSize, p.Child("config"))...)
	for i := range d.Config {
		cp := p.Child("config").Index(i)
		errs = append(errs, requestRefs(d.Config[i].Requests, names, cp.Child("requests"))...)
		errs = append(errs, deviceConfiguration(&d.Config[i].DeviceConfiguration, cp)...)
	}
	return errs
}

func deviceRequest(r *resourcev1.DeviceRequest, p *field.Path) field.ErrorList {
	errs := dns1123Label(r.Name, p.Child("name"))
	switch {
	case r.Exactly == nil && len(r.FirstAvailable) == 0:
		errs = append(errs, field.Required(p, "exactly one of `exactly` or `firstAvailable` is required"))
	case r.Exactly != nil && len(r.FirstAvailable) > 0:
		errs = append(errs, field.Invalid(p, nil, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"))
	case r.Exactly != nil:
		ep := p.Child("exactly")
		e := r.Exactly
		errs = append(errs, deviceClassRef(e.DeviceClassName, ep.Child("deviceClassName"))...)
		errs = append(errs, deviceSelectors(e.Selectors, ep.Child("selectors"))...)
		errs = append(errs, allocationMode(e.AllocationMode, e.Count, ep.Child("allocationMode"), ep.Child("count"))...)
		errs = append(errs, deviceTolerations(e.Tolerations, ep.Child("tolerations"))...)
	default:
		fp := p.Child("firstAvailable")
		errs = append(errs, tooMany(len(r.FirstAvailable), resourcev1.FirstAvailableDeviceRequestMaxSize, fp)...)
		seen := map[string]bool{}
		for i := range r.FirstAvailable {
			s := &r.FirstAvailable[i]
			sp := fp.Index(i)
			if seen[s.Name] {
				errs = append(errs, field.Duplicate(sp, s.Name))
			}
			seen[s.Name] = true
			errs = append(errs, dns1123Label(s.Name, sp.Child("name"))...)
			errs = append(errs, deviceClassRef(s.DeviceClassName, sp.Child("deviceClassName"))...)
			errs = append(errs, deviceSelectors(s.Selectors, sp.Child("selectors"))...)
			errs = append(errs, allocationMode(s.AllocationMode, s.Count, sp.Child("allocationMode"), sp.Child("count"))...)
			errs = append(errs, deviceTolerations(s.Tolerations, sp.Child("tolerations"))...)
		}
	}
	return errs
}

// allocationMode is upstream's validateDeviceAllocationMode.
func allocationMode(m resourcev1.DeviceAllocationMode, count int64, mp, cp *field.Path) field.ErrorList {
	switch m {
	case resourcev1.DeviceAllocationModeAll:
		if count != 0 {
			return field.ErrorList{field.Invalid(cp, count, fmt.Sprintf("must not be specified when allocationMode is '%s'", m))}
		}
	case resourcev1.DeviceAllocationModeExactCount:
		if count <= 0 {
			return field.ErrorList{field.Invalid(cp, count, "must be greater than zero")}
		}
	default:
		return field.ErrorList{field.NotSupported(mp, m, []string{string(resourcev1.DeviceAllocationModeAll), string(resourcev1.DeviceAllocationModeExactCount)})}
	}
	return nil
}

func deviceClassRef(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return dns1123Subdomain(name, p)
}

func deviceSelectors(sels []resourcev1.DeviceSelector, p *field.Path) field.ErrorList {
	errs := tooMany(len(sels), resourcev1.DeviceSelectorsMaxSize, p)
	for i := range sels {
		switch c := sels[i].CEL; {
		case c == nil:
			errs = append(errs, field.Required(p.Index(i).Child("cel"), ""))
		case len(c.Expression) > resourcev1.CELSelectorExpressionMaxLength:
			errs = append(errs, field.TooLong(p.Index(i).Child("cel", "expression"), "", resourcev1.CELSelectorExpressionMaxLength))
		case strings.TrimSpace(c.Expression) == "":
			errs = append(errs, field.Required(p.Index(i).Child("cel", "expression"), "expression is required"))
		}
	}
	return errs
}

func deviceTolerations(ts []resourcev1.DeviceToleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range ts {
		t := &ts[i]
		tp := p.Index(i)
		if t.Key != "" {
			for _, msg := range utilvalidation.IsQualifiedName(t.Key) {
				errs = append(errs, field.Invalid(tp.Child("key"), t.Key, msg))
			}
		}
		switch t.Operator {
		case resourcev1.DeviceTolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(tp.Child("value"), t.Value, "must be empty for operator `Exists`"))
			}
		case resourcev1.DeviceTolerationOpEqual:
		default:
			errs = append(errs, field.NotSupported(tp.Child("operator"), t.Operator, []string{string(resourcev1.DeviceTolerationOpEqual), string(resourcev1.DeviceTolerationOpExists)}))
		}
	}
	return errs
}

func deviceConfiguration(c *resourcev1.DeviceConfiguration, p *field.Path) field.ErrorList {
	if c.Opaque == nil {
		return field.ErrorList{field.Required(p.Child("opaque"), "")}
	}
	errs := csiDriverName(c.Opaque.Driver, p.Child("opaque", "driver"))
	if len(c.Opaque.Parameters.Raw) == 0 && c.Opaque.Parameters.Object == nil {
		errs = append(errs, field.Required(p.Child("opaque", "parameters"), ""))
	}
	return errs
}

// requestRefs checks names of requests ("<request>" or "<request>/<subrequest>").
func requestRefs(refs []string, names map[string]map[string]bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ref := range refs {
		segs := strings.Split(ref, "/")
		ok := len(segs) <= 2
		if ok {
			subs, found := names[segs[0]]
			ok = found && (len(segs) == 1 || subs[segs[1]])
		}
		if !ok {
			errs = append(errs, field.Invalid(p.Index(i), ref, "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"))
		}
	}
	return errs
}

// ResourceSlice validates a ResourceSlice (upstream ValidateResourceSlice, main rules).
func ResourceSlice(s *resourcev1.ResourceSlice) field.ErrorList {
	errs := objectMeta(&s.ObjectMeta, false, nameIsDNSSubdomain, metaPath)
	return append(errs, resourceSliceSpec(&s.Spec, field.NewPath("spec"))...)
}

// ResourceSliceUpdate validates an update: driver, pool name and node name are immutable.
func ResourceSliceUpdate(n, o *resourcev1.ResourceSlice) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	sp := field.NewPath("spec")
	errs = append(errs, resourceSliceSpec(&n.Spec, sp)...)
	errs = append(errs, apimachineryvalidation.ValidateImmutableField(n.Spec.Driver, o.Spec.Driver, sp.Child("driver"))...)
	errs = append(errs, apimachineryvalidation.ValidateImmutableField(n.Spec.Pool.Name, o.Spec.Pool.Name, sp.Child("pool", "name"))...)
	return append(errs, apimachineryvalidation.ValidateImmutableField(n.Spec.NodeName, o.Spec.NodeName, sp.Child("nodeName"))...)
}

func resourceSliceSpec(s *resourcev1.ResourceSliceSpec, p *field.Path) field.ErrorList {
	errs := csiDriverName(s.Driver, p.Child("driver"))
	pp := p.Child("pool")
	if s.Pool.Name == "" {
		errs = append(errs, field.Required(pp.Child("name"), ""))
	} else {
		if len(s.Pool.Name) > resourcev1.PoolNameMaxLength {
			errs = append(errs, field.TooLong(pp.Child("name"), "", resourcev1.PoolNameMaxLength))
		}
		for _, part := range strings.Split(s.Pool.Name, "/") {
			errs = append(errs, dns1123Subdomain(part, pp.Child("name"))...)
		}
	}
	if s.Pool.ResourceSliceCount <= 0 {
		errs = append(errs, field.Invalid(pp.Child("resourceSliceCount"), s.Pool.ResourceSliceCount, "must be greater than zero"))
	}
	if s.Pool.Generation < 0 {
		errs = append(errs, field.Invalid(pp.Child("generation"), s.Pool.Generation, "must be greater than or equal to zero"))
	}
	var set []string
	if s.NodeName != nil {
		if *s.NodeName != "" {
			set = append(set, "`nodeName`")
			errs = append(errs, dns1123Subdomain(*s.NodeName, p.Child("nodeName"))...)
		} else {
			errs = append(errs, field.Invalid(p.Child("nodeName"), *s.NodeName, "must be either unset or set to a non-empty string"))
		}
	}
	if s.NodeSelector != nil {
		set = append(set, "`nodeSelector`")
		errs = append(errs, nodeSelector(s.NodeSelector, false, p.Child("nodeSelector"))...)
		if len(s.NodeSelector.NodeSelectorTerms) != 1 {
			errs = append(errs, field.Invalid(p.Child("nodeSelector", "nodeSelectorTerms"), convert.InternalJSON(s.NodeSelector.NodeSelectorTerms), "must have exactly one node selector term"))
		}
	}
	for _, b := range []struct {
		v    *bool
		name string
	}{{s.AllNodes, "allNodes"}, {s.PerDeviceNodeSelection, "perDeviceNodeSelection"}} {
		switch {
		case b.v == nil:
		case *b.v:
			set = append(set, "`"+b.name+"`")
		default:
			errs = append(errs, field.Invalid(p.Child(b.name), *b.v, "must be either unset or set to true"))
		}
	}
	switch len(set) {
	case 0:
		errs = append(errs, field.Required(p, "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"))
	case 1:
	default:
		errs = append(errs, field.Invalid(p, "{"+strings.Join(set, ", ")+"}", "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"))
	}
	if s.SharedCounters != nil && s.Devices != nil {
		errs = append(errs, field.Invalid(p, "", "only one of `sharedCounters` or `devices` is allowed"))
	}
	dp := p.Child("devices")
	errs = append(errs, tooMany(len(s.Devices), resourcev1.ResourceSliceMaxDevices, dp)...)
	seen := map[string]bool{}
	for i := range s.Devices {
		d := &s.Devices[i]
		if seen[d.Name] {
			errs = append(errs, field.Duplicate(dp.Index(i), d.Name))
		}
		seen[d.Name] = true
		errs = append(errs, dns1123Label(d.Name, dp.Index(i).Child("name"))...)
		errs = append(errs, deviceNodeSelection(d, s.PerDeviceNodeSelection != nil && *s.PerDeviceNodeSelection, dp.Index(i))...)
	}
	return errs
}

// deviceNodeSelection is the node part of upstream's validateDevice: with per-device node
// selection each device names exactly one of a node, a node selector or all nodes; without
// it, none.
func deviceNodeSelection(d *resourcev1.Device, perDevice bool, p *field.Path) field.ErrorList {
	if !perDevice {
		if d.NodeName != nil || d.NodeSelector != nil || d.AllNodes != nil {
			return field.ErrorList{field.Invalid(p, nil, "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec")}
		}
		return nil
	}
	var errs field.ErrorList
	var set []string
	if d.NodeName != nil {
		if *d.NodeName != "" {
			set = append(set, "`nodeName`")
			errs = append(errs, dns1123Subdomain(*d.NodeName, p.Child("nodeName"))...)
		} else {
			errs = append(errs, field.Invalid(p.Child("nodeName"), *d.NodeName, "must not be empty"))
		}
	}
	if d.NodeSelector != nil {
		set = append(set, "`nodeSelector`")
		errs = append(errs, nodeSelector(d.NodeSelector, false, p.Child("nodeSelector"))...)
	}
	if d.AllNodes != nil {
		if *d.AllNodes {
			set = append(set, "`allNodes`")
		} else {
			errs = append(errs, field.Invalid(p.Child("allNodes"), *d.AllNodes, "must be either unset or set to true"))
		}
	}
	const one = "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"
	switch len(set) {
	case 0:
		errs = append(errs, field.Required(p, one))
	case 1:
	default:
		errs = append(errs, field.Invalid(p, "{"+strings.Join(set, ", ")+"}", one))
	}
	return errs
}

// tooMany reports a list longer than max.
func tooMany(n, max int, p *field.Path) field.ErrorList {
	if n > max {
		return field.ErrorList{field.TooMany(p, n, max)}
	}
	return nil
}

// DeviceTaintRule validates a DeviceTaintRule (upstream ValidateDeviceTaintRule).
func DeviceTaintRule(r *resourcev1.DeviceTaintRule) field.ErrorList {
	errs := objectMeta(&r.ObjectMeta, false, nameIsDNSSubdomain, metaPath)
	return append(errs, deviceTaintRuleSpec(&r.Spec, nil, field.NewPath("spec"))...)
}

// DeviceTaintRuleUpdate validates an update of a DeviceTaintRule: the effect is checked only
// when it changes, as upstream.
func DeviceTaintRuleUpdate(n, o *resourcev1.DeviceTaintRule) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	return append(errs, deviceTaintRuleSpec(&n.Spec, &o.Spec, field.NewPath("spec"))...)
}

// DeviceTaintRuleStatusUpdate validates a write through /status (upstream
// ValidateDeviceTaintRuleStatusUpdate).
func DeviceTaintRuleStatusUpdate(n, o *resourcev1.DeviceTaintRule) field.ErrorList {
	sp := field.NewPath("status")
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, metav1validation.ValidateConditions(n.Status.Conditions, sp.Child("conditions"))...)
	return append(errs, tooMany(len(n.Status.Conditions), resourcev1.DeviceTaintRuleStatusMaxConditions, sp.Child("conditions"))...)
}

func deviceTaintRuleSpec(s, old *resourcev1.DeviceTaintRuleSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if sel := s.DeviceSelector; sel != nil {
		sp := p.Child("deviceSelector")
		if sel.Driver != nil {
			errs = append(errs, csiDriverName(*sel.Driver, sp.Child("driver"))...)
		}
		if sel.Pool != nil {
			errs = append(errs, poolName(*sel.Pool, sp.Child("pool"))...)
		}
		if sel.Device != nil {
			errs = append(errs, dns1123Label(*sel.Device, sp.Child("device"))...)
		}
	}
	t, tp := &s.Taint, p.Child("taint")
	errs = append(errs, labelName(t.Key, tp.Child("key"))...)
	if t.Value != "" {
		for _, msg := range utilvalidation.IsValidLabelValue(t.Value) {
			errs = append(errs, field.Invalid(tp.Child("value"), t.Value, msg))
		}
	}
	if old == nil || old.Taint.Effect != t.Effect {
		effects := []string{string(resourcev1.DeviceTaintEffectNoExecute), string(resourcev1.DeviceTaintEffectNoSchedule), string(resourcev1.DeviceTaintEffectNone)}
		switch {
		case t.Effect == "":
			errs = append(errs, field.Required(tp.Child("effect"), ""))
		case !slices.Contains(effects, string(t.Effect)):
			errs = append(errs, field.NotSupported(tp.Child("effect"), t.Effect, effects))
		}
	}
	return errs
}

// poolName is upstream's validatePoolName: DNS subdomains separated by slashes.
func poolName(name string, p *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if len(name) > resourcev1.PoolNameMaxLength {
		errs = append(errs, field.TooLong(p, "", resourcev1.PoolNameMaxLength))
	}
	for _, part := range strings.Split(name, "/") {
		errs = append(errs, dns1123Subdomain(part, p)...)
	}
	return errs
}
