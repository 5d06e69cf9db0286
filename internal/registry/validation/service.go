package validation

import (
	"fmt"
	"net"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	supportedServiceTypes = []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeExternalName,
		corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort}
	supportedSessionAffinities = []corev1.ServiceAffinity{corev1.ServiceAffinityClientIP, corev1.ServiceAffinityNone}
	supportedIPFamilies        = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	supportedIPFamilyPolicies  = []corev1.IPFamilyPolicy{corev1.IPFamilyPolicyPreferDualStack,
		corev1.IPFamilyPolicyRequireDualStack, corev1.IPFamilyPolicySingleStack}
	supportedInternalTrafficPolicies = []corev1.ServiceInternalTrafficPolicy{corev1.ServiceInternalTrafficPolicyCluster, corev1.ServiceInternalTrafficPolicyLocal}
	supportedExternalTrafficPolicies = []corev1.ServiceExternalTrafficPolicy{corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal}
)

// maxClientIPServiceAffinitySeconds is the upper bound of the ClientIP
// session affinity timeout.
const maxClientIPServiceAffinitySeconds = 86400

// isHeadless reports a Service whose only cluster IP is None (upstream's
// isHeadlessService).
func isHeadless(s *corev1.Service) bool {
	return len(s.Spec.ClusterIPs) == 1 && s.Spec.ClusterIPs[0] == corev1.ClusterIPNone
}

// servicePortKey mirrors the internal core.ServicePort upstream prints for
// duplicate ports: no JSON tags, so its fields print with Go names.
type servicePortKey struct {
	Name        string
	Protocol    corev1.Protocol
	AppProtocol *string
	Port        int32
	TargetPort  intstr.IntOrString
	NodePort    int32
}

// Service validates a Service on create (upstream ValidateService). The
// object must have been normalized so that clusterIPs[0] mirrors clusterIP
// (defaults.Service does that).
func Service(s *corev1.Service) field.ErrorList {
	errs := objectMeta(&s.ObjectMeta, true, nameIsDNS1035Label, metaPath)
	const hintsKey, modeKey = "service.kubernetes.io/topology-aware-hints", "service.kubernetes.io/topology-mode"
	if hv, ok := s.Annotations[hintsKey]; ok {
		if mv, ok := s.Annotations[modeKey]; ok && mv != hv {
			errs = append(errs, field.Invalid(metaPath.Child("annotations").Key(modeKey), mv, fmt.Sprintf("must match annotations[%s] when both are specified", hintsKey)))
		}
	}
	sp := field.NewPath("spec")
	spec := &s.Spec
	if len(spec.Ports) == 0 && !isHeadless(s) && spec.Type != corev1.ServiceTypeExternalName {
		errs = append(errs, field.Required(sp.Child("ports"), ""))
	}
	switch spec.Type {
	case corev1.ServiceTypeLoadBalancer:
		if isHeadless(s) {
			errs = append(errs, field.Invalid(sp.Child("clusterIPs").Index(0), spec.ClusterIPs[0], "may not be set to 'None' for LoadBalancer services"))
		}
	case corev1.ServiceTypeNodePort:
		if isHeadless(s) {
			errs = append(errs, field.Invalid(sp.Child("clusterIPs").Index(0), spec.ClusterIPs[0], "may not be set to 'None' for NodePort services"))
		}
	case corev1.ServiceTypeExternalName:
		if len(spec.ClusterIPs) > 0 {
			errs = append(errs, field.Forbidden(sp.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		if len(spec.IPFamilies) > 0 {
			errs = append(errs, field.Forbidden(sp.Child("ipFamilies"), "may not be set for ExternalName services"))
		}
		if spec.IPFamilyPolicy != nil {
			errs = append(errs, field.Forbidden(sp.Child("ipFamilyPolicy"), "may not be set for ExternalName services"))
		}
		if cname := strings.TrimSuffix(spec.ExternalName, "."); cname != "" {
			errs = append(errs, dns1123Subdomain(cname, sp.Child("externalName"))...)
		} else {
			errs = append(errs, field.Required(sp.Child("externalName"), ""))
		}
	}
	names := sets.Set[string]{}
	for i := range spec.Ports {
		errs = append(errs, servicePort(&spec.Ports[i], len(spec.Ports) > 1, names, sp.Child("ports").Index(i))...)
	}
	if spec.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabels(spec.Selector, sp.Child("selector"))...)
	}
	switch spec.SessionAffinity {
	case "":
		errs = append(errs, field.Required(sp.Child("sessionAffinity"), ""))
	case corev1.ServiceAffinityClientIP:
		errs = append(errs, clientIPAffinity(spec.SessionAffinityConfig, sp.Child("sessionAffinityConfig"))...)
	case corev1.ServiceAffinityNone:
		if spec.SessionAffinityConfig != nil {
			errs = append(errs, field.Forbidden(sp.Child("sessionAffinityConfig"), fmt.Sprintf("must not be set when session affinity is %s", corev1.ServiceAffinityNone)))
		}
	default:
		errs = append(errs, field.NotSupported(sp.Child("sessionAffinity"), spec.SessionAffinity, supportedSessionAffinities))
	}
	errs = append(errs, clusterIPFields(s)...)
	for i, ip := range spec.ExternalIPs {
		ipp := sp.Child("externalIPs").Index(i)
		if e := validation.IsValidIP(ipp, ip); len(e) != 0 {
			errs = append(errs, e...)
		} else {
			errs = append(errs, nonSpecialIP(ip, ipp)...)
		}
	}
	switch spec.Type {
	case "":
		errs = append(errs, field.Required(sp.Child("type"), ""))
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName:
	default:
		errs = append(errs, field.NotSupported(sp.Child("type"), spec.Type, supportedServiceTypes))
	}
	if spec.Type == corev1.ServiceTypeClusterIP {
		for i := range spec.Ports {
			if spec.Ports[i].NodePort != 0 {
				errs = append(errs, field.Forbidden(sp.Child("ports").Index(i).Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
			}
		}
	}
	nodePorts := map[servicePortKey]bool{}
	for i, port := range spec.Ports {
		if port.NodePort == 0 {
			continue
		}
		k := servicePortKey{Protocol: port.Protocol, NodePort: port.NodePort}
		if nodePorts[k] {
			errs = append(errs, field.Duplicate(sp.Child("ports").Index(i).Child("nodePort"), port.NodePort))
		}
		nodePorts[k] = true
	}
	ports := map[servicePortKey]bool{}
	for i, port := range spec.Ports {
		k := servicePortKey{Protocol: port.Protocol, Port: port.Port}
		if ports[k] {
			errs = append(errs, field.Duplicate(sp.Child("ports").Index(i), k))
		}
		ports[k] = true
	}
	if len(spec.LoadBalancerSourceRanges) > 0 {
		fp := sp.Child("LoadBalancerSourceRanges")
		if spec.Type != corev1.ServiceTypeLoadBalancer {
			errs = append(errs, field.Forbidden(fp, "may only be used when `type` is 'LoadBalancer'"))
		}
		for i, v := range spec.LoadBalancerSourceRanges {
			errs = append(errs, validation.IsValidCIDR(fp.Index(i), strings.TrimSpace(v))...)
		}
	} else if v, ok := s.Annotations[corev1.AnnotationLoadBalancerSourceRangesKey]; ok {
		fp := metaPath.Child("annotations").Key(corev1.AnnotationLoadBalancerSourceRangesKey)
		if spec.Type != corev1.ServiceTypeLoadBalancer {
			errs = append(errs, field.Forbidden(fp, "may only be used when `type` is 'LoadBalancer'"))
		}
		if v = strings.TrimSpace(v); v != "" {
			for _, c := range strings.Split(v, ",") {
				errs = append(errs, validation.IsValidCIDR(fp, strings.TrimSpace(c))...)
			}
		}
	}
	if spec.AllocateLoadBalancerNodePorts != nil && spec.Type != corev1.ServiceTypeLoadBalancer {
		errs = append(errs, field.Forbidden(sp.Child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"))
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer && spec.AllocateLoadBalancerNodePorts == nil {
		errs = append(errs, field.Required(field.NewPath("allocateLoadBalancerNodePorts"), ""))
	}
	if spec.LoadBalancerClass != nil {
		if spec.Type != corev1.ServiceTypeLoadBalancer {
			errs = append(errs, field.Forbidden(sp.Child("loadBalancerClass"), "may only be used when `type` is 'LoadBalancer'"))
		} else {
			errs = append(errs, qualifiedName(*spec.LoadBalancerClass, sp.Child("loadBalancerClass"))...)
		}
	}
	errs = append(errs, externalTrafficPolicy(s)...)
	if spec.InternalTrafficPolicy == nil {
		if spec.Type == corev1.ServiceTypeNodePort || spec.Type == corev1.ServiceTypeLoadBalancer || spec.Type == corev1.ServiceTypeClusterIP {
			errs = append(errs, field.Required(sp.Child("internalTrafficPolicy"), ""))
		}
	} else if *spec.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyCluster && *spec.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyLocal {
		errs = append(errs, field.NotSupported(sp.Child("internalTrafficPolicy"), *spec.InternalTrafficPolicy, supportedInternalTrafficPolicies))
	}
	if td := spec.TrafficDistribution; td != nil {
		switch *td {
		case corev1.ServiceTrafficDistributionPreferClose, corev1.ServiceTrafficDistributionPreferSameZone, corev1.ServiceTrafficDistributionPreferSameNode:
		default:
			errs = append(errs, field.NotSupported(sp.Child("trafficDistribution"), *td, []string{
				corev1.ServiceTrafficDistributionPreferClose, corev1.ServiceTrafficDistributionPreferSameZone, corev1.ServiceTrafficDistributionPreferSameNode}))
		}
	}
	return errs
}

func servicePort(sp *corev1.ServicePort, requireName bool, names sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if requireName && sp.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else if sp.Name != "" {
		errs = append(errs, dns1123Label(sp.Name, p.Child("name"))...)
		if names.Has(sp.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), sp.Name))
		} else {
			names.Insert(sp.Name)
		}
	}
	for _, m := range validation.IsValidPortNum(int(sp.Port)) {
		errs = append(errs, field.Invalid(p.Child("port"), sp.Port, m))
	}
	if sp.Protocol == "" {
		errs = append(errs, field.Required(p.Child("protocol"), ""))
	} else if !supportedProtocol(sp.Protocol) {
		errs = append(errs, field.NotSupported(p.Child("protocol"), sp.Protocol, supportedPortProtocols))
	}
	errs = append(errs, portNumOrName(sp.TargetPort, p.Child("targetPort"))...)
	if sp.AppProtocol != nil {
		errs = append(errs, qualifiedName(*sp.AppProtocol, p.Child("appProtocol"))...)
	}
	return errs
}

func clientIPAffinity(c *corev1.SessionAffinityConfig, p *field.Path) field.ErrorList {
	when := fmt.Sprintf("when session affinity type is %s", corev1.ServiceAffinityClientIP)
	switch {
	case c == nil:
		return field.ErrorList{field.Required(p, when)}
	case c.ClientIP == nil:
		return field.ErrorList{field.Required(p.Child("clientIP"), when)}
	case c.ClientIP.TimeoutSeconds == nil:
		return field.ErrorList{field.Required(p.Child("clientIP").Child("timeoutSeconds"), when)}
	}
	if t := c.ClientIP.TimeoutSeconds; *t <= 0 || *t > maxClientIPServiceAffinitySeconds {
		return field.ErrorList{field.Invalid(p.Child("clientIP").Child("timeoutSeconds"), t,
			fmt.Sprintf("must be greater than 0 and less than %d", maxClientIPServiceAffinitySeconds))}
	}
	return nil
}

func externallyAccessible(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer || s.Spec.Type == corev1.ServiceTypeNodePort ||
		(s.Spec.Type == corev1.ServiceTypeClusterIP && len(s.Spec.ExternalIPs) > 0)
}

func needsHealthCheck(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

func externalTrafficPolicy(s *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	sp := field.NewPath("spec")
	etp := s.Spec.ExternalTrafficPolicy
	if !externallyAccessible(s) {
		if etp != "" {
			errs = append(errs, field.Invalid(sp.Child("externalTrafficPolicy"), etp, "may only be set for externally-accessible services"))
		}
	} else if etp == "" {
		errs = append(errs, field.Required(sp.Child("externalTrafficPolicy"), ""))
	} else if etp != corev1.ServiceExternalTrafficPolicyCluster && etp != corev1.ServiceExternalTrafficPolicyLocal {
		errs = append(errs, field.NotSupported(sp.Child("externalTrafficPolicy"), etp, supportedExternalTrafficPolicies))
	}
	hc := s.Spec.HealthCheckNodePort
	if !needsHealthCheck(s) {
		if hc != 0 {
			errs = append(errs, field.Invalid(sp.Child("healthCheckNodePort"), hc, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
		}
	} else if hc != 0 {
		for _, m := range validation.IsValidPortNum(int(hc)) {
			errs = append(errs, field.Invalid(sp.Child("healthCheckNodePort"), hc, m))
		}
	}
	return errs
}

// clusterIPFields is upstream ValidateServiceClusterIPsRelatedFields.
func clusterIPFields(s *corev1.Service) field.ErrorList {
	if s.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	var errs field.ErrorList
	sp := field.NewPath("spec")
	ipsPath, famPath, polPath := sp.Child("clusterIPs"), sp.Child("ipFamilies"), sp.Child("ipFamilyPolicy")
	spec := &s.Spec
	if spec.ClusterIP != "" {
		if len(spec.ClusterIPs) == 0 {
			errs = append(errs, field.Required(ipsPath, ""))
		} else if spec.ClusterIPs[0] != spec.ClusterIP {
			errs = append(errs, field.Invalid(ipsPath, spec.ClusterIPs, "first value must match `clusterIP`"))
		}
	} else if len(spec.ClusterIPs) != 0 {
		errs = append(errs, field.Invalid(ipsPath, spec.ClusterIPs, "must be empty when `clusterIP` is not specified"))
	}
	seen := map[corev1.IPFamily]bool{}
	for i, f := range spec.IPFamilies {
		if f != corev1.IPv4Protocol && f != corev1.IPv6Protocol {
			errs = append(errs, field.NotSupported(famPath.Index(i), f, supportedIPFamilies))
		}
		if seen[f] {
			errs = append(errs, field.Duplicate(famPath.Index(i), f))
		}
		seen[f] = true
	}
	if pol := spec.IPFamilyPolicy; pol != nil {
		switch *pol {
		case corev1.IPFamilyPolicySingleStack, corev1.IPFamilyPolicyPreferDualStack, corev1.IPFamilyPolicyRequireDualStack:
		default:
			errs = append(errs, field.NotSupported(polPath, pol, supportedIPFamilyPolicies))
		}
	}
	invalid := false
	for i, ip := range spec.ClusterIPs {
		if i == 0 && ip == corev1.ClusterIPNone {
			if len(spec.ClusterIPs) > 1 {
				invalid = true
				errs = append(errs, field.Invalid(ipsPath, spec.ClusterIPs, "'None' must be the first and only value"))
			}
			continue
		}
		e := validation.IsValidIP(ipsPath.Index(i), ip)
		invalid = invalid || len(e) != 0
		errs = append(errs, e...)
	}
	if len(spec.ClusterIPs) > 2 {
		errs = append(errs, field.Invalid(ipsPath, spec.ClusterIPs, "may only hold up to 2 values"))
	}
	if invalid {
		return errs
	}
	if len(spec.ClusterIPs) > 1 {
		v6 := 0
		for _, ip := range spec.ClusterIPs {
			if isIPv6(ip) {
				v6++
			}
		}
		if v6 != 1 || len(spec.ClusterIPs) != 2 {
			errs = append(errs, field.Invalid(ipsPath, spec.ClusterIPs, "may specify no more than one IP for each IP family"))
		}
	}
	if !isHeadless(s) && len(spec.ClusterIPs) > 0 && len(spec.IPFamilies) > 0 {
		for i, ip := range spec.ClusterIPs {
			if i > len(spec.IPFamilies)-1 {
				break
			}
			if spec.IPFamilies[i] == corev1.IPv4Protocol && isIPv6(ip) {
				errs = append(errs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv4 value as indicated by `ipFamilies[%v]`", i)))
			}
			if spec.IPFamilies[i] == corev1.IPv6Protocol && !isIPv6(ip) {
				errs = append(errs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv6 value as indicated by `ipFamilies[%v]`", i)))
			}
		}
	}
	return errs
}

func isIPv6(s string) bool {
	ip := net.ParseIP(s)
	return ip != nil && ip.To4() == nil
}

// nonSpecialIP is upstream ValidateNonSpecialIP.
func nonSpecialIP(s string, p *field.Path) field.ErrorList {
	ip := net.ParseIP(s)
	if ip == nil {
		return field.ErrorList{field.Invalid(p, s, "must be a valid IP address")}
	}
	var errs field.ErrorList
	if ip.IsUnspecified() {
		errs = append(errs, field.Invalid(p, s, fmt.Sprintf("may not be unspecified (%v)", s)))
	}
	if ip.IsLoopback() {
		errs = append(errs, field.Invalid(p, s, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if ip.IsLinkLocalUnicast() {
		errs = append(errs, field.Invalid(p, s, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if ip.IsLinkLocalMulticast() {
		errs = append(errs, field.Invalid(p, s, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return errs
}

// ServiceAllocation is what upstream's allocator checks of a Service before the Service
// is validated (initIPFamilyFields, on create and on update; o nil on create), on a
// cluster whose services have IPv4 addresses only, as quotad's: the cluster IPs and IP
// families (ValidateServiceClusterIPsRelatedFields), the IP family policy against
// released secondary addresses and families, and families this cluster has. When these
// fail, upstream answers with their errors alone.
func ServiceAllocation(n, o *corev1.Service) field.ErrorList {
	if n.Spec.Type == corev1.ServiceTypeExternalName || preferDualStackUnchanged(n, o) {
		return nil
	}
	policy := n.Spec.IPFamilyPolicy
	if policy == nil {
		p := corev1.IPFamilyPolicySingleStack
		switch {
		case o != nil && o.Spec.IPFamilyPolicy != nil:
			p = *o.Spec.IPFamilyPolicy
		case n.Spec.ClusterIP == corev1.ClusterIPNone && len(n.Spec.Selector) == 0:
			p = corev1.IPFamilyPolicyRequireDualStack
		}
		policy = &p
	}
	if errs := clusterIPFields(n); len(errs) > 0 {
		return errs
	}
	var errs field.ErrorList
	pp := field.NewPath("spec", "ipFamilyPolicy")
	if o != nil && *policy != corev1.IPFamilyPolicySingleStack {
		if len(n.Spec.ClusterIPs) != 0 && len(n.Spec.ClusterIPs) < len(o.Spec.ClusterIPs) {
			errs = append(errs, field.Invalid(pp, policy, "must be 'SingleStack' to release the secondary cluster IP"))
		}
		if len(n.Spec.IPFamilies) != 0 && len(n.Spec.IPFamilies) < len(o.Spec.IPFamilies) {
			errs = append(errs, field.Invalid(pp, policy, "must be 'SingleStack' to release the secondary IP family"))
		}
	}
	if *policy == corev1.IPFamilyPolicySingleStack {
		if len(n.Spec.ClusterIPs) == 2 {
			errs = append(errs, field.Invalid(pp, policy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"))
		}
		if len(n.Spec.IPFamilies) == 2 {
			errs = append(errs, field.Invalid(pp, policy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"))
		}
	}
	// The families of the cluster IPs given without one.
	for i, ip := range n.Spec.ClusterIPs {
		if ip == corev1.ClusterIPNone {
			break
		}
		if i >= len(n.Spec.IPFamilies) && isIPv6(ip) {
			errs = append(errs, field.Invalid(field.NewPath("spec", "clusterIPs").Index(i), n.Spec.ClusterIPs, "IPv6 is not configured on this cluster"))
		}
	}
	if len(errs) > 0 || (n.Spec.ClusterIP == corev1.ClusterIPNone && len(n.Spec.Selector) == 0) {
		return errs // headless and selectorless: any families
	}
	if *policy == corev1.IPFamilyPolicyRequireDualStack {
		errs = append(errs, field.Invalid(pp, policy, "this cluster is not configured for dual-stack services"))
	}
	for i, f := range n.Spec.IPFamilies {
		if f != corev1.IPv4Protocol {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilies").Index(i), f, "not configured on this cluster"))
		}
	}
	return errs
}

// preferDualStackUnchanged is upstream's isMatchingPreferDualStackClusterIPFields: an
// update of a PreferDualStack Service of the same type, with an address, whose cluster
// IPs and families are unchanged, is not checked again.
func preferDualStackUnchanged(n, o *corev1.Service) bool {
	if o == nil || n.Spec.IPFamilyPolicy == nil || o.Spec.Type != n.Spec.Type {
		return false
	}
	switch n.Spec.Type {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
	default:
		return false
	}
	if *n.Spec.IPFamilyPolicy != corev1.IPFamilyPolicyPreferDualStack ||
		(o.Spec.IPFamilyPolicy != nil && *o.Spec.IPFamilyPolicy != corev1.IPFamilyPolicyPreferDualStack) {
		return false
	}
	return slices.Equal(n.Spec.ClusterIPs, o.Spec.ClusterIPs) && slices.Equal(n.Spec.IPFamilies, o.Spec.IPFamilies)
}

// ServiceCreate validates a new Service as upstream answers its create: the allocator's
// checks first (ServiceAllocation), alone when they fail, then Service.
func ServiceCreate(s *corev1.Service) field.ErrorList {
	if errs := ServiceAllocation(s, nil); len(errs) > 0 {
		return errs
	}
	return Service(s)
}

// ServiceUpdate validates an update of a Service as upstream's ValidateServiceUpdate: the
// cluster IPs and IP families may be upgraded to dual-stack or downgraded, but the
// primary (and an unreleased secondary) may not change, except to or from ExternalName;
// the load balancer class and health check node port are fixed; then the new service
// must be valid.
func ServiceUpdate(n, o *corev1.Service) field.ErrorList {
	if errs := ServiceAllocation(n, o); len(errs) > 0 {
		return errs
	}
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, upgradeDowngradeClusterIPs(o, n)...)
	errs = append(errs, upgradeDowngradeIPFamilies(o, n)...)
	sp := field.NewPath("spec")
	if o.Spec.Type == corev1.ServiceTypeLoadBalancer && n.Spec.Type == corev1.ServiceTypeLoadBalancer {
		if !ptrEqual(o.Spec.LoadBalancerClass, n.Spec.LoadBalancerClass) {
			errs = append(errs, field.Invalid(sp.Child("loadBalancerClass"), n.Spec.LoadBalancerClass, "may not change once set"))
		}
	}
	if needsHealthCheck(o) && needsHealthCheck(n) && n.Spec.HealthCheckNodePort != o.Spec.HealthCheckNodePort {
		errs = append(errs, field.Forbidden(sp.Child("healthCheckNodePort"), "field is immutable"))
	}
	return append(errs, Service(n)...)
}

// upgradeDowngradeClusterIPs is upstream's validateUpgradeDowngradeClusterIPs.
func upgradeDowngradeClusterIPs(o, n *corev1.Service) field.ErrorList {
	if n.Spec.Type == corev1.ServiceTypeExternalName || o.Spec.Type == corev1.ServiceTypeExternalName || (isHeadless(o) && isHeadless(n)) {
		return nil
	}
	ips, old := n.Spec.ClusterIPs, o.Spec.ClusterIPs
	p := field.NewPath("spec", "clusterIPs")
	var errs field.ErrorList
	switch {
	case len(old) == len(ips):
		for i := range old {
			if old[i] != ips[i] {
				errs = append(errs, field.Invalid(p.Index(i), ips, "may not change once set"))
			}
		}
	case len(old) > len(ips):
		if len(ips) == 0 {
			errs = append(errs, field.Invalid(p.Index(0), ips, "primary clusterIP can not be unset"))
		}
		if len(old) > 0 && len(ips) > 0 && ips[0] != old[0] {
			errs = append(errs, field.Invalid(p.Index(0), ips, "may not change once set"))
		}
		if len(ips) == 1 && (n.Spec.IPFamilyPolicy == nil || *n.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack) {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), n.Spec.IPFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary clusterIP"))
		}
	default:
		if len(old) > 0 && ips[0] != old[0] {
			errs = append(errs, field.Invalid(p.Index(0), ips, "may not change once set"))
		}
	}
	return errs
}

// upgradeDowngradeIPFamilies is upstream's validateUpgradeDowngradeIPFamilies, its paths
// and values as upstream has them (every changed family reported at index 0; some with
// the cluster IPs as value).
func upgradeDowngradeIPFamilies(o, n *corev1.Service) field.ErrorList {
	if n.Spec.Type == corev1.ServiceTypeExternalName || o.Spec.Type == corev1.ServiceTypeExternalName || isHeadless(o) || isHeadless(n) {
		return nil // and headless services may change families
	}
	fams, old := n.Spec.IPFamilies, o.Spec.IPFamilies
	p := field.NewPath("spec", "ipFamilies").Index(0)
	var errs field.ErrorList
	switch {
	case len(old) == len(fams):
		for i := range old {
			if old[i] != fams[i] {
				errs = append(errs, field.Invalid(p, fams, "may not change once set"))
			}
		}
	case len(old) > len(fams):
		if len(n.Spec.ClusterIPs) == 0 {
			errs = append(errs, field.Invalid(p, fams, "primary ipFamily can not be unset"))
		}
		if len(fams) > 0 && fams[0] != old[0] {
			errs = append(errs, field.Invalid(p, n.Spec.ClusterIPs, "may not change once set"))
		}
		if len(fams) == 1 && (n.Spec.IPFamilyPolicy == nil || *n.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack) {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), n.Spec.IPFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary ipFamily"))
		}
	default:
		if len(old) > 0 && len(fams) > 0 && fams[0] != old[0] {
			errs = append(errs, field.Invalid(p, n.Spec.ClusterIPs, "may not change once set"))
		}
	}
	return errs
}

func ptrEqual[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
