package validation

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"github.com/quotad/quotad/internal/registry/convert"
)

// ---- NetworkPolicy ----

// NetworkPolicy validates a NetworkPolicy on create (upstream ValidateNetworkPolicy).
func NetworkPolicy(np *networkingv1.NetworkPolicy) field.ErrorList {
	errs := objectMeta(&np.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	return append(errs, networkPolicySpec(&np.Spec, nil, field.NewPath("spec"))...)
}

// NetworkPolicyUpdate validates an update of a NetworkPolicy: CIDRs already
// stored are not validated again.
func NetworkPolicyUpdate(n, o *networkingv1.NetworkPolicy) field.ErrorList {
	var old []string
	add := func(peers []networkingv1.NetworkPolicyPeer) {
		for _, peer := range peers {
			if peer.IPBlock != nil {
				old = append(old, peer.IPBlock.CIDR)
				old = append(old, peer.IPBlock.Except...)
			}
		}
	}
	for _, r := range o.Spec.Ingress {
		add(r.From)
	}
	for _, r := range o.Spec.Egress {
		add(r.To)
	}
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	return append(errs, networkPolicySpec(&n.Spec, old, field.NewPath("spec"))...)
}

func networkPolicySpec(s *networkingv1.NetworkPolicySpec, oldCIDRs []string, p *field.Path) field.ErrorList {
	opts := metav1validation.LabelSelectorValidationOptions{}
	errs := metav1validation.ValidateLabelSelector(&s.PodSelector, opts, p.Child("podSelector"))
	for i, r := range s.Ingress {
		rp := p.Child("ingress").Index(i)
		for j := range r.Ports {
			errs = append(errs, networkPolicyPort(&r.Ports[j], rp.Child("ports").Index(j))...)
		}
		for j := range r.From {
			errs = append(errs, networkPolicyPeer(&r.From[j], oldCIDRs, rp.Child("from").Index(j))...)
		}
	}
	for i, r := range s.Egress {
		rp := p.Child("egress").Index(i)
		for j := range r.Ports {
			errs = append(errs, networkPolicyPort(&r.Ports[j], rp.Child("ports").Index(j))...)
		}
		for j := range r.To {
			errs = append(errs, networkPolicyPeer(&r.To[j], oldCIDRs, rp.Child("to").Index(j))...)
		}
	}
	allowed := []string{string(networkingv1.PolicyTypeIngress), string(networkingv1.PolicyTypeEgress)}
	if len(s.PolicyTypes) > len(allowed) {
		return append(errs, field.Invalid(p.Child("policyTypes"), &s.PolicyTypes, "may not specify more than two policyTypes"))
	}
	for i, t := range s.PolicyTypes {
		if t != networkingv1.PolicyTypeIngress && t != networkingv1.PolicyTypeEgress {
			errs = append(errs, field.NotSupported(p.Child("policyTypes").Index(i), t, allowed))
		}
	}
	return errs
}

func networkPolicyPort(port *networkingv1.NetworkPolicyPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if port.Protocol != nil && *port.Protocol != corev1.ProtocolTCP && *port.Protocol != corev1.ProtocolUDP && *port.Protocol != corev1.ProtocolSCTP {
		errs = append(errs, field.NotSupported(p.Child("protocol"), *port.Protocol, []string{string(corev1.ProtocolTCP), string(corev1.ProtocolUDP), string(corev1.ProtocolSCTP)}))
	}
	switch {
	case port.Port == nil:
		if port.EndPort != nil {
			errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "may not be specified when `port` is not specified"))
		}
	case port.Port.Type == intstr.Int:
		for _, msg := range validation.IsValidPortNum(int(port.Port.IntVal)) {
			errs = append(errs, field.Invalid(p.Child("port"), port.Port.IntVal, msg))
		}
		if port.EndPort != nil {
			if *port.EndPort < port.Port.IntVal {
				errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "must be greater than or equal to `port`"))
			}
			for _, msg := range validation.IsValidPortNum(int(*port.EndPort)) {
				errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, msg))
			}
		}
	default:
		if port.EndPort != nil {
			errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "may not be specified when `port` is non-numeric"))
		}
		for _, msg := range validation.IsValidPortName(port.Port.StrVal) {
			errs = append(errs, field.Invalid(p.Child("port"), port.Port.StrVal, msg))
		}
	}
	return errs
}

func networkPolicyPeer(peer *networkingv1.NetworkPolicyPeer, oldCIDRs []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	opts := metav1validation.LabelSelectorValidationOptions{}
	n := 0
	if peer.PodSelector != nil {
		n++
		errs = append(errs, metav1validation.ValidateLabelSelector(peer.PodSelector, opts, p.Child("podSelector"))...)
	}
	if peer.NamespaceSelector != nil {
		n++
		errs = append(errs, metav1validation.ValidateLabelSelector(peer.NamespaceSelector, opts, p.Child("namespaceSelector"))...)
	}
	if peer.IPBlock != nil {
		n++
		errs = append(errs, ipBlock(peer.IPBlock, oldCIDRs, p.Child("ipBlock"))...)
	}
	if n == 0 {
		errs = append(errs, field.Required(p, "must specify a peer"))
	} else if n > 1 && peer.IPBlock != nil {
		errs = append(errs, field.Forbidden(p, "may not specify both ipBlock and another peer"))
	}
	return errs
}

func ipBlock(b *networkingv1.IPBlock, oldCIDRs []string, p *field.Path) field.ErrorList {
	if b.CIDR == "" {
		return field.ErrorList{field.Required(p.Child("cidr"), "")}
	}
	errs := validation.IsValidCIDRForLegacyField(p.Child("cidr"), b.CIDR, false, oldCIDRs)
	_, cidr, err := netutils.ParseCIDRSloppy(b.CIDR)
	if err != nil {
		return errs
	}
	for i, ex := range b.Except {
		ep := p.Child("except").Index(i)
		errs = append(errs, validation.IsValidCIDRForLegacyField(ep, ex, false, oldCIDRs)...)
		_, exNet, err := netutils.ParseCIDRSloppy(ex)
		if err != nil {
			continue
		}
		cidrLen, _ := cidr.Mask.Size()
		exLen, _ := exNet.Mask.Size()
		if !cidr.Contains(exNet.IP) || cidrLen >= exLen {
			errs = append(errs, field.Invalid(ep, ex, "must be a strict subset of `cidr`"))
		}
	}
	return errs
}

// ---- Ingress ----

const annotationIngressClass = "kubernetes.io/ingress.class"

var (
	supportedPathTypes   = []string{string(networkingv1.PathTypeExact), string(networkingv1.PathTypeImplementationSpecific), string(networkingv1.PathTypePrefix)}
	invalidPathSequences = []string{"//", "/./", "/../", "%2f", "%2F"}
	invalidPathSuffixes  = []string{"/..", "/."}
)

// ingressOptions are upstream's IngressValidationOptions: what an update may
// keep of an invalid stored object.
type ingressOptions struct {
	invalidSecretName, invalidWildcardHostRule bool
}

// Ingress validates an Ingress on create (upstream ValidateIngressCreate).
func Ingress(ing *networkingv1.Ingress) field.ErrorList {
	errs := ingress(ing, ingressOptions{})
	if v, ok := ing.Annotations[annotationIngressClass]; ok && ing.Spec.IngressClassName != nil && v != *ing.Spec.IngressClassName {
		errs = append(errs, field.Invalid(field.NewPath("annotations").Child(annotationIngressClass), v, "must match `ingressClassName` when both are specified"))
	}
	return errs
}

// IngressUpdate validates an update of an Ingress.
func IngressUpdate(n, o *networkingv1.Ingress) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	opts := ingressOptions{}
	for _, t := range o.Spec.TLS {
		opts.invalidSecretName = opts.invalidSecretName || len(tlsSecretName(t.SecretName)) > 0
	}
	for _, r := range o.Spec.Rules {
		if strings.Contains(r.Host, "*") && len(ingressRuleValue(&r.IngressRuleValue, nil, ingressOptions{})) > 0 {
			opts.invalidWildcardHostRule = true
		}
	}
	errs = append(errs, ingress(n, opts)...)
	return append(errs, ingressLoadBalancer(&n.Status.LoadBalancer, &o.Status.LoadBalancer, field.NewPath("status", "loadBalancer"))...)
}

// ingressLoadBalancer is upstream's ValidateIngressLoadBalancerStatus (what /status writes):
// IPs already stored are not validated again.
func ingressLoadBalancer(s, old *networkingv1.IngressLoadBalancerStatus, p *field.Path) field.ErrorList {
	var oldIPs []string
	for _, i := range old.Ingress {
		if i.IP != "" {
			oldIPs = append(oldIPs, i.IP)
		}
	}
	var errs field.ErrorList
	for i, in := range s.Ingress {
		ip := p.Child("ingress").Index(i)
		if in.IP != "" {
			errs = append(errs, validation.IsValidIPForLegacyField(ip.Child("ip"), in.IP, false, oldIPs)...)
		}
		if in.Hostname != "" {
			for _, msg := range validation.IsDNS1123Subdomain(in.Hostname) {
				errs = append(errs, field.Invalid(ip.Child("hostname"), in.Hostname, msg))
			}
			if netutils.ParseIPSloppy(in.Hostname) != nil {
				errs = append(errs, field.Invalid(ip.Child("hostname"), in.Hostname, "must be a DNS name, not an IP address"))
			}
		}
	}
	return errs
}

func ingress(ing *networkingv1.Ingress, opts ingressOptions) field.ErrorList {
	errs := objectMeta(&ing.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	return append(errs, ingressSpec(&ing.Spec, field.NewPath("spec"), opts)...)
}

func ingressSpec(s *networkingv1.IngressSpec, p *field.Path, opts ingressOptions) field.ErrorList {
	var errs field.ErrorList
	if len(s.Rules) == 0 && s.DefaultBackend == nil {
		errs = append(errs, field.Invalid(p, convert.InternalJSON(s.Rules), fmt.Sprintf("either `%s` or `rules` must be specified", "defaultBackend")))
	}
	if s.DefaultBackend != nil {
		errs = append(errs, ingressBackend(s.DefaultBackend, p.Child("defaultBackend"))...)
	}
	for i := range s.Rules {
		r := &s.Rules[i]
		rp := p.Child("rules").Index(i)
		wildcard := false
		if r.Host != "" {
			if netutils.ParseIPSloppy(r.Host) != nil {
				errs = append(errs, field.Invalid(rp.Child("host"), r.Host, "must be a DNS name, not an IP address"))
			}
			if strings.Contains(r.Host, "*") {
				for _, msg := range validation.IsWildcardDNS1123Subdomain(r.Host) {
					errs = append(errs, field.Invalid(rp.Child("host"), r.Host, msg))
				}
				wildcard = true
			} else {
				for _, msg := range validation.IsDNS1123Subdomain(r.Host) {
					errs = append(errs, field.Invalid(rp.Child("host"), r.Host, msg))
				}
			}
		}
		if !wildcard || !opts.invalidWildcardHostRule {
			errs = append(errs, ingressRuleValue(&r.IngressRuleValue, rp, opts)...)
		}
	}
	tp := p.Child("tls")
	for i, t := range s.TLS {
		for j, h := range t.Hosts {
			hp := tp.Index(i).Child("hosts").Index(j)
			check := validation.IsDNS1123Subdomain
			if strings.Contains(h, "*") {
				check = validation.IsWildcardDNS1123Subdomain
			}
			for _, msg := range check(h) {
				errs = append(errs, field.Invalid(hp, h, msg))
			}
		}
		if !opts.invalidSecretName {
			for _, msg := range tlsSecretName(t.SecretName) {
				errs = append(errs, field.Invalid(tp.Index(i).Child("secretName"), t.SecretName, msg))
			}
		}
	}
	if s.IngressClassName != nil {
		errs = append(errs, nameErrs(nameIsDNSSubdomain, *s.IngressClassName, p.Child("ingressClassName"))...)
	}
	return errs
}

func tlsSecretName(name string) []string {
	if name == "" {
		return nil
	}
	return nameIsDNSSubdomain(name, false)
}

func ingressRuleValue(v *networkingv1.IngressRuleValue, p *field.Path, opts ingressOptions) field.ErrorList {
	if v.HTTP == nil {
		return nil
	}
	hp := p.Child("http")
	var errs field.ErrorList
	if len(v.HTTP.Paths) == 0 {
		errs = append(errs, field.Required(hp.Child("paths"), ""))
	}
	for i := range v.HTTP.Paths {
		errs = append(errs, httpIngressPath(&v.HTTP.Paths[i], hp.Child("paths").Index(i))...)
	}
	return errs
}

func httpIngressPath(hp *networkingv1.HTTPIngressPath, p *field.Path) field.ErrorList {
	if hp.PathType == nil {
		return field.ErrorList{field.Required(p.Child("pathType"), "pathType must be specified")}
	}
	var errs field.ErrorList
	switch *hp.PathType {
	case networkingv1.PathTypeExact, networkingv1.PathTypePrefix:
		if !strings.HasPrefix(hp.Path, "/") {
			errs = append(errs, field.Invalid(p.Child("path"), hp.Path, "must be an absolute path"))
		}
		if hp.Path != "" {
			for _, seq := range invalidPathSequences {
				if strings.Contains(hp.Path, seq) {
					errs = append(errs, field.Invalid(p.Child("path"), hp.Path, fmt.Sprintf("must not contain '%s'", seq)))
				}
			}
			for _, suf := range invalidPathSuffixes {
				if strings.HasSuffix(hp.Path, suf) {
					errs = append(errs, field.Invalid(p.Child("path"), hp.Path, fmt.Sprintf("cannot end with '%s'", suf)))
				}
			}
		}
	case networkingv1.PathTypeImplementationSpecific:
		if hp.Path != "" && !strings.HasPrefix(hp.Path, "/") {
			errs = append(errs, field.Invalid(p.Child("path"), hp.Path, "must be an absolute path"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("pathType"), *hp.PathType, supportedPathTypes))
	}
	return append(errs, ingressBackend(&hp.Backend, p.Child("backend"))...)
}

func ingressBackend(b *networkingv1.IngressBackend, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case b.Resource != nil && b.Service != nil:
		return field.ErrorList{field.Invalid(p, "", "cannot set both resource and service backends")}
	case b.Resource != nil:
		rp := p.Child("resource")
		if b.Resource.APIGroup != nil {
			for _, msg := range validation.IsDNS1123Subdomain(*b.Resource.APIGroup) {
				errs = append(errs, field.Invalid(rp.Child("apiGroup"), *b.Resource.APIGroup, msg))
			}
		}
		errs = append(errs, pathSegment(b.Resource.Kind, rp.Child("kind"))...)
		errs = append(errs, pathSegment(b.Resource.Name, rp.Child("name"))...)
	case b.Service != nil:
		sp := p.Child("service")
		if b.Service.Name == "" {
			errs = append(errs, field.Required(sp.Child("name"), ""))
		} else {
			errs = append(errs, nameErrs(nameIsDNSLabel, b.Service.Name, sp.Child("name"))...)
		}
		hasName, hasNumber := b.Service.Port.Name != "", b.Service.Port.Number != 0
		switch {
		case hasName && hasNumber:
			errs = append(errs, field.Invalid(p, "", "cannot set both port name & port number"))
		case hasName:
			for _, msg := range validation.IsValidPortName(b.Service.Port.Name) {
				errs = append(errs, field.Invalid(sp.Child("port", "name"), b.Service.Port.Name, msg))
			}
		case hasNumber:
			for _, msg := range validation.IsValidPortNum(int(b.Service.Port.Number)) {
				errs = append(errs, field.Invalid(sp.Child("port", "number"), b.Service.Port.Number, msg))
			}
		default:
			errs = append(errs, field.Required(p, "port name or number is required"))
		}
	default:
		errs = append(errs, field.Invalid(p, "", "resource or service backend is required"))
	}
	return errs
}

func pathSegment(v string, p *field.Path) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	for _, msg := range content.IsPathSegmentName(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

// ---- IngressClass ----

const maxLenIngressClassController = 250

// IngressClass validates an IngressClass (upstream ValidateIngressClass).
func IngressClass(ic *networkingv1.IngressClass) field.ErrorList {
	errs := objectMeta(&ic.ObjectMeta, false, nameIsDNSSubdomain, metaPath)
	// An empty parameters kind or name is upstream's declarative validation's (1.37): after
	// the rest.
	var declared field.ErrorList
	sp := field.NewPath("spec")
	if ic.Spec.Controller == "" {
		errs = append(errs, field.Required(sp.Child("controller"), ""))
	} else {
		if len(ic.Spec.Controller) > maxLenIngressClassController {
			errs = append(errs, field.TooLong(sp.Child("controller"), "", maxLenIngressClassController))
		}
		errs = append(errs, validation.IsDomainPrefixedPath(sp.Child("controller"), ic.Spec.Controller)...)
	}
	if pr := ic.Spec.Parameters; pr != nil {
		pp := sp.Child("parameters")
		if pr.APIGroup != nil {
			for _, msg := range validation.IsDNS1123Subdomain(*pr.APIGroup) {
				errs = append(errs, field.Invalid(pp.Child("apiGroup"), *pr.APIGroup, msg))
			}
		}
		for _, f := range []struct{ name, v string }{{"kind", pr.Kind}, {"name", pr.Name}} {
			if f.v == "" {
				declared = append(declared, field.Required(pp.Child(f.name), ""))
			} else {
				errs = append(errs, pathSegment(f.v, pp.Child(f.name))...)
			}
		}
		switch {
		case pr.Scope == nil:
			errs = append(errs, field.Required(pp.Child("scope"), ""))
		case *pr.Scope != networkingv1.IngressClassParametersReferenceScopeCluster && *pr.Scope != networkingv1.IngressClassParametersReferenceScopeNamespace:
			errs = append(errs, field.NotSupported(pp.Child("scope"), *pr.Scope, []string{networkingv1.IngressClassParametersReferenceScopeCluster, networkingv1.IngressClassParametersReferenceScopeNamespace}))
		case *pr.Scope == networkingv1.IngressClassParametersReferenceScopeNamespace:
			if pr.Namespace == nil {
				errs = append(errs, field.Required(pp.Child("namespace"), "`parameters.scope` is set to 'Namespace'"))
			} else {
				errs = append(errs, nameErrs(nameIsDNSLabel, *pr.Namespace, pp.Child("namespace"))...)
			}
		case pr.Namespace != nil:
			errs = append(errs, field.Forbidden(pp.Child("namespace"), "`parameters.scope` is set to 'Cluster'"))
		}
	}
	return append(errs, declared...)
}

// IngressClassUpdate validates an update of an IngressClass: the controller is immutable.
func IngressClassUpdate(n, o *networkingv1.IngressClass) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, immutable(n.Spec.Controller, o.Spec.Controller, field.NewPath("spec", "controller"))...)
	return append(errs, IngressClass(n)...)
}

// IngressWarnings are upstream's warnings on an Ingress write: the class annotation is
// deprecated.
func IngressWarnings(ing *networkingv1.Ingress) []string {
	if _, ok := ing.Annotations[annotationIngressClass]; ok {
		return []string{fmt.Sprintf("annotation %q is deprecated, please use 'spec.ingressClassName' instead", annotationIngressClass)}
	}
	return nil
}
