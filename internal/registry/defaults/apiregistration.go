package defaults

import (
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// APIService applies upstream's default: a service port of 443.
func APIService(a *apiregistrationv1.APIService) {
	if s := a.Spec.Service; s != nil && s.Port == nil {
		p := int32(443)
		s.Port = &p
	}
}
