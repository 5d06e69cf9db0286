package table

import (
	"slices"
	"sort"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// ---- flowcontrol.apiserver.k8s.io kinds (upstream printers.go) ----

func FlowSchemaPrinter() Printer {
	return typedPrinter(flowcontrolv1.SchemeGroupVersion.WithKind("FlowSchema"), func() *flowcontrolv1.FlowSchema { return &flowcontrolv1.FlowSchema{} },
		func() []metav1.TableColumnDefinition {
			d := flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()
			return []metav1.TableColumnDefinition{
				nameColumn(),
				{Name: "PriorityLevel", Type: "string", Description: flowcontrolv1.PriorityLevelConfigurationReference{}.SwaggerDoc()["name"]},
				{Name: "MatchingPrecedence", Type: "string", Description: d["matchingPrecedence"]},
				{Name: "DistinguisherMethod", Type: "string", Description: d["distinguisherMethod"]},
				ageColumn(),
				{Name: "MissingPL", Type: "string", Description: "references a broken or non-existent PriorityLevelConfiguration"},
			}
		},
		func(o *flowcontrolv1.FlowSchema, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			dm := "<none>"
			if o.Spec.DistinguisherMethod != nil {
				dm = string(o.Spec.DistinguisherMethod.Type)
			}
			missing := "?"
			for _, c := range o.Status.Conditions {
				if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
					missing = string(c.Status)
					break
				}
			}
			return []interface{}{o.Name, o.Spec.PriorityLevelConfiguration.Name, int64(o.Spec.MatchingPrecedence), dm, since(o.CreationTimestamp, now), missing}, nil
		})
}

// SortFlowSchemas returns the FlowSchemas of a list in the order upstream's
// printFlowSchemaList prints them (FlowSchemaSequence): by matching precedence, then by
// name. The list itself is not changed; objects of other types keep their places last.
func SortFlowSchemas(objs []runtime.Object) []runtime.Object {
	out := slices.Clone(objs)
	key := func(obj runtime.Object) (int32, string, bool) {
		switch fs := obj.(type) {
		case *flowcontrolv1.FlowSchema:
			return fs.Spec.MatchingPrecedence, fs.Name, true
		case *unstructured.Unstructured:
			p, _, _ := unstructured.NestedInt64(fs.Object, "spec", "matchingPrecedence")
			return int32(p), fs.GetName(), true
		}
		return 0, "", false
	}
	sort.SliceStable(out, func(i, j int) bool {
		ip, in, iok := key(out[i])
		jp, jn, jok := key(out[j])
		if iok != jok {
			return iok
		}
		if ip != jp {
			return ip < jp
		}
		return in < jn
	})
	return out
}

func PriorityLevelPrinter() Printer {
	return typedPrinter(flowcontrolv1.SchemeGroupVersion.WithKind("PriorityLevelConfiguration"), func() *flowcontrolv1.PriorityLevelConfiguration {
		return &flowcontrolv1.PriorityLevelConfiguration{}
	}, func() []metav1.TableColumnDefinition {
		q := flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()
		return []metav1.TableColumnDefinition{
			nameColumn(),
			{Name: "Type", Type: "string", Description: flowcontrolv1.PriorityLevelConfigurationSpec{}.SwaggerDoc()["type"]},
			{Name: "NominalConcurrencyShares", Type: "string", Description: flowcontrolv1.LimitedPriorityLevelConfiguration{}.SwaggerDoc()["nominalConcurrencyShares"]},
			{Name: "Queues", Type: "string", Description: q["queues"]},
			{Name: "HandSize", Type: "string", Description: q["handSize"]},
			{Name: "QueueLengthLimit", Type: "string", Description: q["queueLengthLimit"]},
			ageColumn(),
		}
	}, func(o *flowcontrolv1.PriorityLevelConfiguration, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
		var ncs, queues, hand, qll interface{} = "<none>", "<none>", "<none>", "<none>"
		if l := o.Spec.Limited; l != nil {
			if l.NominalConcurrencyShares != nil {
				ncs = int64(*l.NominalConcurrencyShares)
			} else {
				ncs = int64(0)
			}
			if q := l.LimitResponse.Queuing; q != nil {
				queues, hand, qll = int64(q.Queues), int64(q.HandSize), int64(q.QueueLengthLimit)
			}
		}
		return []interface{}{o.Name, string(o.Spec.Type), ncs, queues, hand, qll, since(o.CreationTimestamp, now)}, nil
	})
}

// ---- certificates.k8s.io ----

func CSRPrinter() Printer {
	return typedPrinter(certificatesv1.SchemeGroupVersion.WithKind("CertificateSigningRequest"), func() *certificatesv1.CertificateSigningRequest {
		return &certificatesv1.CertificateSigningRequest{}
	}, func() []metav1.TableColumnDefinition {
		d := certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()
		return []metav1.TableColumnDefinition{
			nameColumn(),
			ageColumn(),
			{Name: "SignerName", Type: "string", Description: d["signerName"]},
			{Name: "Requestor", Type: "string", Description: d["request"]},
			{Name: "RequestedDuration", Type: "string", Description: d["expirationSeconds"]},
			{Name: "Condition", Type: "string", Description: certificatesv1beta1.CertificateSigningRequestStatus{}.SwaggerDoc()["conditions"]},
		}
	}, func(o *certificatesv1.CertificateSigningRequest, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
		signer := "<none>"
		if o.Spec.SignerName != "" {
			signer = o.Spec.SignerName
		}
		requested := "<none>"
		if o.Spec.ExpirationSeconds != nil {
			requested = duration.HumanDuration(time.Duration(*o.Spec.ExpirationSeconds) * time.Second)
		}
		return []interface{}{o.Name, since(o.CreationTimestamp, now), signer, o.Spec.Username, requested, csrCondition(o)}, nil
	})
}

// csrCondition is upstream's extractCSRStatus.
func csrCondition(o *certificatesv1.CertificateSigningRequest) string {
	var approved, denied, failed bool
	for _, c := range o.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		case certificatesv1.CertificateFailed:
			failed = true
		}
	}
	status := "Pending"
	if denied {
		status = "Denied"
	} else if approved {
		status = "Approved"
	}
	if failed {
		status += ",Failed"
	}
	if len(o.Status.Certificate) > 0 {
		status += ",Issued"
	}
	return status
}
