package table

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ---- EndpointSlice ----

func EndpointSlicePrinter() Printer {
	return typedPrinter(discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"), func() *discoveryv1.EndpointSlice { return &discoveryv1.EndpointSlice{} },
		func() []metav1.TableColumnDefinition {
			d := discoveryv1.EndpointSlice{}.SwaggerDoc()
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "AddressType", Type: "string", Description: d["addressType"]},
				{Name: "Ports", Type: "string", Description: d["ports"]},
				{Name: "Endpoints", Type: "string", Description: d["endpoints"]},
				ageColumn(),
			}
		},
		func(es *discoveryv1.EndpointSlice, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			return []interface{}{es.Name, string(es.AddressType), formatSlicePorts(es.Ports), formatSliceEndpoints(es.Endpoints), since(es.CreationTimestamp, now)}, nil
		})
}

// sliceListMax is how many ports or addresses a cell lists before "+ N more...".
const sliceListMax = 3

// formatSlicePorts lists the ports' numbers (a name when there is no number, "*" when
// neither), as upstream's formatDiscoveryPorts.
func formatSlicePorts(ports []discoveryv1.EndpointPort) string {
	var list []string
	more := false
	for _, p := range ports {
		if len(list) < sliceListMax {
			n := "*"
			if p.Port != nil {
				n = strconv.Itoa(int(*p.Port))
			} else if p.Name != nil {
				n = *p.Name
			}
			list = append(list, n)
		} else {
			more = true
		}
	}
	return listWithMore(list, more, len(ports))
}

// formatSliceEndpoints lists the endpoints' addresses, as upstream's formatDiscoveryEndpoints.
func formatSliceEndpoints(eps []discoveryv1.Endpoint) string {
	var list []string
	more := false
	count := 0
	for _, ep := range eps {
		for _, a := range ep.Addresses {
			if len(list) < sliceListMax {
				list = append(list, a)
			} else {
				more = true
			}
			count++
		}
	}
	return listWithMore(list, more, count)
}

// listWithMore is upstream's listWithMoreString: "<unset>" for an empty list.
func listWithMore(list []string, more bool, count int) string {
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-sliceListMax)
	}
	if ret == "" {
		ret = "<unset>"
	}
	return ret
}
