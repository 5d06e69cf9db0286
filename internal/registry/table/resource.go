package table

import (
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func nameAgeColumns() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{nameColumn(), ageColumn()}
}

// DeviceClassPrinter prints NAME AGE.
func DeviceClassPrinter() Printer {
	return typedPrinter(resourcev1.SchemeGroupVersion.WithKind("DeviceClass"), func() *resourcev1.DeviceClass { return &resourcev1.DeviceClass{} },
		nameAgeColumns,
		func(c *resourcev1.DeviceClass, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			return []interface{}{c.Name, since(c.CreationTimestamp, now)}, nil
		})
}

// ResourceClaimPrinter prints NAME STATE AGE.
func ResourceClaimPrinter() Printer {
	return typedPrinter(resourcev1.SchemeGroupVersion.WithKind("ResourceClaim"), func() *resourcev1.ResourceClaim { return &resourcev1.ResourceClaim{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "State", Type: "string", Description: "A summary of the current state (allocated, pending, reserved, etc.)."},
				ageColumn(),
			}
		},
		func(c *resourcev1.ResourceClaim, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			return []interface{}{c.Name, resourceClaimState(c), since(c.CreationTimestamp, now)}, nil
		})
}

// resourceClaimState is upstream's summary: deleted, pending, allocated, reserved.
func resourceClaimState(c *resourcev1.ResourceClaim) string {
	var states []string
	if c.DeletionTimestamp != nil {
		states = append(states, "deleted")
	}
	switch {
	case c.Status.Allocation == nil:
		if c.DeletionTimestamp == nil {
			states = append(states, "pending")
		}
	default:
		states = append(states, "allocated")
		if len(c.Status.ReservedFor) > 0 {
			states = append(states, "reserved")
		}
	}
	return strings.Join(states, ",")
}

// ResourceClaimTemplatePrinter prints NAME AGE.
func ResourceClaimTemplatePrinter() Printer {
	return typedPrinter(resourcev1.SchemeGroupVersion.WithKind("ResourceClaimTemplate"), func() *resourcev1.ResourceClaimTemplate { return &resourcev1.ResourceClaimTemplate{} },
		nameAgeColumns,
		func(c *resourcev1.ResourceClaimTemplate, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			return []interface{}{c.Name, since(c.CreationTimestamp, now)}, nil
		})
}

// ResourceSlicePrinter prints NAME NODE DRIVER POOL AGE.
func ResourceSlicePrinter() Printer {
	return typedPrinter(resourcev1.SchemeGroupVersion.WithKind("ResourceSlice"), func() *resourcev1.ResourceSlice { return &resourcev1.ResourceSlice{} },
		func() []metav1.TableColumnDefinition {
			spec := resourcev1.ResourceSliceSpec{}.SwaggerDoc()
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Node", Type: "string", Description: spec["nodeName"]},
				{Name: "Driver", Type: "string", Description: spec["driver"]},
				{Name: "Pool", Type: "string", Description: resourcev1.ResourcePool{}.SwaggerDoc()["name"]},
				ageColumn(),
			}
		},
		func(s *resourcev1.ResourceSlice, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			node := ""
			if s.Spec.NodeName != nil {
				node = *s.Spec.NodeName
			}
			return []interface{}{s.Name, node, s.Spec.Driver, s.Spec.Pool.Name, since(s.CreationTimestamp, now)}, nil
		})
}

// ServiceCIDRPrinter prints NAME CIDRS AGE.
func ServiceCIDRPrinter() Printer {
	return typedPrinter(networkingv1.SchemeGroupVersion.WithKind("ServiceCIDR"), func() *networkingv1.ServiceCIDR { return &networkingv1.ServiceCIDR{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "CIDRs", Type: "string", Description: networkingv1.ServiceCIDRSpec{}.SwaggerDoc()["cidrs"]},
				ageColumn(),
			}
		},
		func(c *networkingv1.ServiceCIDR, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			return []interface{}{c.Name, strings.Join(c.Spec.CIDRs, ","), since(c.CreationTimestamp, now)}, nil
		})
}

// IPAddressPrinter prints NAME PARENTREF (and an age cell no column names, as upstream);
// the reference reads
// <resource>[.<group>]/[<namespace>/]<name>.
func IPAddressPrinter() Printer {
	return typedPrinter(networkingv1.SchemeGroupVersion.WithKind("IPAddress"), func() *networkingv1.IPAddress { return &networkingv1.IPAddress{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				// As upstream's printer: no Age column, though each row ends with the age.
				nameColumn(),
				{Name: "ParentRef", Type: "string", Description: networkingv1.IPAddressSpec{}.SwaggerDoc()["parentRef"]},
			}
		},
		func(a *networkingv1.IPAddress, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			ref := "<none>"
			if r := a.Spec.ParentRef; r != nil {
				ref = strings.ToLower(schema.GroupResource{Group: r.Group, Resource: r.Resource}.String())
				if r.Namespace != "" {
					ref += "/" + r.Namespace
				}
				ref += "/" + r.Name
			}
			return []interface{}{a.Name, ref, since(a.CreationTimestamp, now)}, nil
		})
}

// DeviceTaintRulePrinter prints NAME KEY VALUE EFFECT TIMEADDED AGE.
func DeviceTaintRulePrinter() Printer {
	return typedPrinter(resourcev1.SchemeGroupVersion.WithKind("DeviceTaintRule"), func() *resourcev1.DeviceTaintRule { return &resourcev1.DeviceTaintRule{} },
		func() []metav1.TableColumnDefinition {
			taint := resourcev1.DeviceTaint{}.SwaggerDoc()
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Key", Type: "string", Description: taint["key"]},
				{Name: "Value", Type: "string", Description: taint["value"]},
				{Name: "Effect", Type: "string", Description: taint["effect"]},
				{Name: "TimeAdded", Type: "string", Description: taint["timeAdded"]},
				ageColumn(),
			}
		},
		func(r *resourcev1.DeviceTaintRule, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			added := ""
			if t := r.Spec.Taint.TimeAdded; t != nil {
				added = since(*t, now)
			}
			return []interface{}{r.Name, r.Spec.Taint.Key, r.Spec.Taint.Value, string(r.Spec.Taint.Effect), added, since(r.CreationTimestamp, now)}, nil
		})
}
