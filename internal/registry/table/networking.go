package table

import (
	"fmt"
	"sort"
	"strings"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ---- NetworkPolicy ----

// NetworkPolicyPrinter prints NAME POD-SELECTOR AGE.
func NetworkPolicyPrinter() Printer {
	return typedPrinter(networkingv1.SchemeGroupVersion.WithKind("NetworkPolicy"), func() *networkingv1.NetworkPolicy { return &networkingv1.NetworkPolicy{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Pod-Selector", Type: "string", Description: networkingv1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"]},
				ageColumn(),
			}
		},
		func(np *networkingv1.NetworkPolicy, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			return []interface{}{np.Name, metav1.FormatLabelSelector(&np.Spec.PodSelector), since(np.CreationTimestamp, now)}, nil
		})
}

// ---- Ingress ----

// IngressPrinter prints NAME CLASS HOSTS ADDRESS PORTS AGE.
func IngressPrinter() Printer {
	return typedPrinter(networkingv1.SchemeGroupVersion.WithKind("Ingress"), func() *networkingv1.Ingress { return &networkingv1.Ingress{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Class", Type: "string", Description: "The name of the IngressClass resource that should be used for additional configuration"},
				{Name: "Hosts", Type: "string", Description: "Hosts that incoming requests are matched against before the ingress rule"},
				{Name: "Address", Type: "string", Description: "Address is a list containing ingress points for the load-balancer"},
				{Name: "Ports", Type: "string", Description: "Ports of TLS configurations that open"},
				ageColumn(),
			}
		},
		func(ing *networkingv1.Ingress, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			class := "<none>"
			if ing.Spec.IngressClassName != nil {
				class = *ing.Spec.IngressClassName
			}
			ports := "80"
			if len(ing.Spec.TLS) != 0 {
				ports = "80, 443"
			}
			return []interface{}{ing.Name, class, ingressHosts(ing.Spec.Rules), ingressAddress(ing.Status.LoadBalancer), ports, since(ing.CreationTimestamp, now)}, nil
		})
}

// ingressHosts is upstream's formatHosts: up to three hosts, "*" for none.
func ingressHosts(rules []networkingv1.IngressRule) string {
	const max = 3
	var list []string
	more := false
	for _, r := range rules {
		if len(list) == max {
			more = true
		}
		if !more && r.Host != "" {
			list = append(list, r.Host)
		}
	}
	if len(list) == 0 {
		return "*"
	}
	out := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", out, len(rules)-max)
	}
	return out
}

// ingressAddress is upstream's ingressLoadBalancerStatusStringer, wide (as the
// server renders it): the sorted, distinct IPs or else hostnames.
func ingressAddress(s networkingv1.IngressLoadBalancerStatus) string {
	seen := map[string]bool{}
	var out []string
	for _, i := range s.Ingress {
		v := i.IP
		if v == "" {
			v = i.Hostname
		}
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// ---- IngressClass ----

// IngressClassPrinter prints NAME CONTROLLER PARAMETERS AGE; a class annotated as the
// default is named "<name> (default)".
func IngressClassPrinter() Printer {
	return typedPrinter(networkingv1.SchemeGroupVersion.WithKind("IngressClass"), func() *networkingv1.IngressClass { return &networkingv1.IngressClass{} },
		func() []metav1.TableColumnDefinition {
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "Controller", Type: "string", Description: "Controller that is responsible for handling this class"},
				{Name: "Parameters", Type: "string", Description: "A reference to a resource with additional parameters"},
				ageColumn(),
			}
		},
		func(ic *networkingv1.IngressClass, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			params := "<none>"
			if p := ic.Spec.Parameters; p != nil {
				params = p.Kind
				if p.APIGroup != nil {
					params += "." + *p.APIGroup
				}
				params += "/" + p.Name
			}
			name := ic.Name
			if ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
				name += " (default)"
			}
			return []interface{}{name, ic.Spec.Controller, params, since(ic.CreationTimestamp, now)}, nil
		})
}
