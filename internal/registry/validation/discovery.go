package validation

import (
	"net"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// EndpointSlice and Endpoints limits (upstream pkg/apis/discovery/validation).
const (
	maxSliceEndpoints = 1000
	maxSliceAddresses = 100
	maxSlicePorts     = 20000
)

var supportedAddressTypes = []string{string(discoveryv1.AddressTypeFQDN), string(discoveryv1.AddressTypeIPv4), string(discoveryv1.AddressTypeIPv6)}

// EndpointSlice validates a discovery.k8s.io/v1 EndpointSlice (upstream
// ValidateEndpointSliceCreate).
func EndpointSlice(es *discoveryv1.EndpointSlice) field.ErrorList {
	errs := objectMeta(&es.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	errs = append(errs, slicePorts(es.Ports, field.NewPath("ports"))...)
	errs = append(errs, sliceEndpoints(es.Endpoints, es.AddressType, field.NewPath("endpoints"))...)
	at := field.NewPath("addressType")
	switch {
	case es.AddressType == "":
		errs = append(errs, field.Required(at, ""))
	case !sets.New(supportedAddressTypes...).Has(string(es.AddressType)):
		errs = append(errs, field.NotSupported(at, es.AddressType, supportedAddressTypes))
	}
	return append(errs, endpointsDeclared(es.Endpoints, field.NewPath("endpoints"))...)
}

// endpointsDeclared is what upstream's declarative validation checks of the endpoints
// (1.37; with the address type, checked before it): each has an address. These errors come
// after the handwritten ones, in the order of the fields.
func endpointsDeclared(eps []discoveryv1.Endpoint, p *field.Path) field.ErrorList {
	if len(eps) > maxSliceEndpoints {
		return nil
	}
	var errs field.ErrorList
	for i := range eps {
		if len(eps[i].Addresses) == 0 {
			errs = append(errs, field.Required(p.Index(i).Child("addresses"), ""))
		}
	}
	return errs
}

// EndpointSliceUpdate validates an update: addressType is immutable.
func EndpointSliceUpdate(n, o *discoveryv1.EndpointSlice) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, slicePorts(n.Ports, field.NewPath("ports"))...)
	// Endpoints that did not change keep whatever older servers took (upstream's rule).
	if !semantic.DeepEqual(n.Endpoints, o.Endpoints) {
		errs = append(errs, sliceEndpoints(n.Endpoints, n.AddressType, field.NewPath("endpoints"))...)
		errs = append(errs, endpointsDeclared(n.Endpoints, field.NewPath("endpoints"))...)
	}
	return append(errs, immutable(n.AddressType, o.AddressType, field.NewPath("addressType"))...)
}

func sliceEndpoints(eps []discoveryv1.Endpoint, at discoveryv1.AddressType, p *field.Path) field.ErrorList {
	if len(eps) > maxSliceEndpoints {
		return field.ErrorList{field.TooMany(p, len(eps), maxSliceEndpoints)}
	}
	var errs field.ErrorList
	for i := range eps {
		ep := &eps[i]
		ip := p.Index(i)
		ap := ip.Child("addresses")
		if len(ep.Addresses) > maxSliceAddresses {
			errs = append(errs, field.TooMany(ap, len(ep.Addresses), maxSliceAddresses))
		}
		for j, a := range ep.Addresses {
			aj := ap.Index(j)
			switch at {
			case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6:
				if e := validation.IsValidIPForLegacyField(aj, a, true, nil); len(e) > 0 {
					errs = append(errs, e...)
					continue
				}
				is4 := net.ParseIP(a).To4() != nil
				if at == discoveryv1.AddressTypeIPv4 && !is4 {
					errs = append(errs, field.Invalid(ap, a, "must be an IPv4 address"))
				} else if at == discoveryv1.AddressTypeIPv6 && is4 {
					errs = append(errs, field.Invalid(ap, a, "must be an IPv6 address"))
				}
				errs = append(errs, nonSpecialIP(a, aj)...)
			case discoveryv1.AddressTypeFQDN:
				errs = append(errs, validation.IsFullyQualifiedDomainName(aj, a)...)
			}
		}
		if ep.NodeName != nil {
			errs = append(errs, nameErrs(nameIsDNSSubdomain, *ep.NodeName, ip.Child("nodeName"))...)
		}
		if ep.Hostname != nil {
			errs = append(errs, dns1123Label(*ep.Hostname, ip.Child("hostname"))...)
		}
	}
	return errs
}

func slicePorts(ports []discoveryv1.EndpointPort, p *field.Path) field.ErrorList {
	if len(ports) > maxSlicePorts {
		return field.ErrorList{field.TooMany(p, len(ports), maxSlicePorts)}
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range ports {
		port := &ports[i]
		ip := p.Index(i)
		name := ""
		if port.Name != nil {
			name = *port.Name
		}
		if name != "" {
			errs = append(errs, dns1123Label(name, ip.Child("name"))...)
		}
		if names.Has(name) {
			errs = append(errs, field.Duplicate(ip.Child("name"), name))
		} else {
			names.Insert(name)
		}
		if port.Protocol == nil {
			errs = append(errs, field.Required(ip.Child("protocol"), ""))
		} else if !supportedProtocol(*port.Protocol) {
			errs = append(errs, field.NotSupported(ip.Child("protocol"), *port.Protocol, supportedPortProtocols))
		}
		if port.AppProtocol != nil {
			errs = append(errs, qualifiedName(*port.AppProtocol, ip.Child("appProtocol"))...)
		}
	}
	return errs
}

// Endpoints validates a core/v1 Endpoints object (upstream ValidateEndpointsCreate).
func Endpoints(e *corev1.Endpoints) field.ErrorList {
	errs := objectMeta(&e.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	return append(errs, endpointSubsets(e.Subsets, field.NewPath("subsets"))...)
}

// EndpointsUpdate validates an update of an Endpoints object.
func EndpointsUpdate(n, o *corev1.Endpoints) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	return append(errs, endpointSubsets(n.Subsets, field.NewPath("subsets"))...)
}

func endpointSubsets(subsets []corev1.EndpointSubset, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range subsets {
		ss := &subsets[i]
		ip := p.Index(i)
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			errs = append(errs, field.Required(ip, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j := range ss.Addresses {
			errs = append(errs, endpointAddress(&ss.Addresses[j], ip.Child("addresses").Index(j))...)
		}
		for j := range ss.NotReadyAddresses {
			errs = append(errs, endpointAddress(&ss.NotReadyAddresses[j], ip.Child("notReadyAddresses").Index(j))...)
		}
		for j := range ss.Ports {
			errs = append(errs, endpointPort(&ss.Ports[j], len(ss.Ports) > 1, ip.Child("ports").Index(j))...)
		}
	}
	return errs
}

func endpointAddress(a *corev1.EndpointAddress, p *field.Path) field.ErrorList {
	errs := validation.IsValidIPForLegacyField(p.Child("ip"), a.IP, true, nil)
	if a.Hostname != "" {
		errs = append(errs, dns1123Label(a.Hostname, p.Child("hostname"))...)
	}
	if a.NodeName != nil {
		errs = append(errs, nameErrs(nameIsDNSSubdomain, *a.NodeName, p.Child("nodeName"))...)
	}
	if net.ParseIP(a.IP) != nil {
		errs = append(errs, nonSpecialIP(a.IP, p.Child("ip"))...)
	}
	return errs
}

func endpointPort(port *corev1.EndpointPort, requireName bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if requireName && port.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else if port.Name != "" {
		errs = append(errs, dns1123Label(port.Name, p.Child("name"))...)
	}
	for _, m := range validation.IsValidPortNum(int(port.Port)) {
		errs = append(errs, field.Invalid(p.Child("port"), port.Port, m))
	}
	if port.Protocol == "" {
		errs = append(errs, field.Required(p.Child("protocol"), ""))
	} else if !supportedProtocol(port.Protocol) {
		errs = append(errs, field.NotSupported(p.Child("protocol"), port.Protocol, supportedPortProtocols))
	}
	if port.AppProtocol != nil {
		errs = append(errs, qualifiedName(*port.AppProtocol, p.Child("appProtocol"))...)
	}
	return errs
}
