package validation

import (
	"net/netip"

	networkingv1 "k8s.io/api/networking/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/convert"
)

var cidrsPath = field.NewPath("spec", "cidrs")

// ServiceCIDR validates a ServiceCIDR (upstream ValidateServiceCIDR).
func ServiceCIDR(c *networkingv1.ServiceCIDR) field.ErrorList {
	errs := objectMeta(&c.ObjectMeta, false, nameIsDNSSubdomain, metaPath)
	return append(errs, serviceCIDRSpec(c)...)
}

func serviceCIDRSpec(c *networkingv1.ServiceCIDR) field.ErrorList {
	cidrs := c.Spec.CIDRs
	switch {
	case len(cidrs) == 0:
		return field.ErrorList{field.Required(cidrsPath, "at least one CIDR required")}
	case len(cidrs) > 2:
		return field.ErrorList{field.Invalid(cidrsPath, convert.InternalJSON(c.Spec), "may only hold up to 2 values")}
	}
	var errs field.ErrorList
	for i, cidr := range cidrs {
		errs = append(errs, utilvalidation.IsValidCIDR(cidrsPath.Index(i), cidr)...)
	}
	if len(errs) == 0 && len(cidrs) == 2 {
		a, errA := netip.ParsePrefix(cidrs[0])
		b, errB := netip.ParsePrefix(cidrs[1])
		if errA != nil || errB != nil || a.Addr().Is4() == b.Addr().Is4() {
			errs = append(errs, field.Invalid(cidrsPath, c.Spec.CIDRs, "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"))
		}
	}
	return errs
}

// ServiceCIDRUpdate validates an update of a ServiceCIDR (also through /status): the
// CIDRs are immutable, except that a single-family ServiceCIDR may gain the other family.
func ServiceCIDRUpdate(n, o *networkingv1.ServiceCIDR) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	switch {
	case len(o.Spec.CIDRs) == 1 && len(n.Spec.CIDRs) == 2 && n.Spec.CIDRs[0] == o.Spec.CIDRs[0]:
		errs = append(errs, serviceCIDRSpec(n)...)
	default:
		errs = append(errs, apimachineryvalidation.ValidateImmutableField(n.Spec.CIDRs, o.Spec.CIDRs, cidrsPath)...)
	}
	// As upstream's, the status (conditions included) is not validated.
	return errs
}

// IPAddress validates an IPAddress (upstream ValidateIPAddress): the name is an IP
// address in canonical form, the parent reference names a resource and an object.
func IPAddress(a *networkingv1.IPAddress) field.ErrorList {
	errs := objectMeta(&a.ObjectMeta, false, ipAddressName, metaPath)
	return append(errs, ipParentRef(a.Spec.ParentRef, field.NewPath("spec"))...)
}

// IPAddressUpdate validates an update of an IPAddress: the parent reference is immutable.
func IPAddressUpdate(n, o *networkingv1.IPAddress) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, ipParentRef(n.Spec.ParentRef, field.NewPath("spec"))...)
	return append(errs, apimachineryvalidation.ValidateImmutableField(n.Spec.ParentRef, o.Spec.ParentRef, field.NewPath("spec", "parentRef"))...)
}

// ipAddressName is upstream ValidateIPAddressName.
func ipAddressName(name string, _ bool) []string {
	ip, err := netip.ParseAddr(name)
	if err != nil {
		return []string{err.Error()}
	}
	if ip.String() != name {
		return []string{"must be a canonical format IP address"}
	}
	return nil
}

func ipParentRef(r *networkingv1.ParentReference, p *field.Path) field.ErrorList {
	if r == nil {
		return field.ErrorList{field.Required(p.Child("parentRef"), "")}
	}
	p = p.Child("parentRef")
	var errs field.ErrorList
	if r.Group != "" {
		errs = append(errs, dns1123Subdomain(r.Group, p.Child("group"))...)
	}
	if r.Resource == "" {
		errs = append(errs, field.Required(p.Child("resource"), ""))
	} else {
		for _, msg := range path.IsValidPathSegmentName(r.Resource) {
			errs = append(errs, field.Invalid(p.Child("resource"), r.Resource, msg))
		}
	}
	if r.Namespace != "" {
		for _, msg := range path.ValidatePathSegmentName(r.Namespace, false) {
			errs = append(errs, field.Invalid(p.Child("namespace"), r.Namespace, msg))
		}
	}
	if r.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		for _, msg := range path.ValidatePathSegmentName(r.Name, false) {
			errs = append(errs, field.Invalid(p.Child("name"), r.Name, msg))
		}
	}
	return errs
}
