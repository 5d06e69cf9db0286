package table

import (
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ---- admissionregistration.k8s.io kinds (upstream printers.go) ----

var admissionGV = admissionregistrationv1.SchemeGroupVersion

func webhookColumns() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "Webhooks", Type: "integer", Description: "Webhooks indicates the number of webhooks registered in this configuration"},
		ageColumn(),
	}
}

func MutatingWebhookPrinter() Printer {
	return typedPrinter(admissionGV.WithKind("MutatingWebhookConfiguration"), func() *admissionregistrationv1.MutatingWebhookConfiguration {
		return &admissionregistrationv1.MutatingWebhookConfiguration{}
	}, webhookColumns, func(o *admissionregistrationv1.MutatingWebhookConfiguration, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
		return []interface{}{o.Name, int64(len(o.Webhooks)), since(o.CreationTimestamp, now)}, nil
	})
}

func ValidatingWebhookPrinter() Printer {
	return typedPrinter(admissionGV.WithKind("ValidatingWebhookConfiguration"), func() *admissionregistrationv1.ValidatingWebhookConfiguration {
		return &admissionregistrationv1.ValidatingWebhookConfiguration{}
	}, webhookColumns, func(o *admissionregistrationv1.ValidatingWebhookConfiguration, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
		return []interface{}{o.Name, int64(len(o.Webhooks)), since(o.CreationTimestamp, now)}, nil
	})
}

func policyColumns(count, countDoc string) func() []metav1.TableColumnDefinition {
	return func() []metav1.TableColumnDefinition {
		return []metav1.TableColumnDefinition{
			nameColumn(),
			{Name: count, Type: "integer", Description: countDoc},
			{Name: "ParamKind", Type: "string", Description: "ParamKind specifies the kind of resources used to parameterize this policy"},
			ageColumn(),
		}
	}
}

func paramKind(pk *admissionregistrationv1.ParamKind) string {
	if pk == nil {
		return "<unset>"
	}
	return pk.APIVersion + "/" + pk.Kind
}

func ValidatingAdmissionPolicyPrinter() Printer {
	return typedPrinter(admissionGV.WithKind("ValidatingAdmissionPolicy"), func() *admissionregistrationv1.ValidatingAdmissionPolicy {
		return &admissionregistrationv1.ValidatingAdmissionPolicy{}
	}, policyColumns("Validations", "Validations indicates the number of validation rules defined in this configuration"),
		func(o *admissionregistrationv1.ValidatingAdmissionPolicy, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			return []interface{}{o.Name, int64(len(o.Spec.Validations)), paramKind(o.Spec.ParamKind), since(o.CreationTimestamp, now)}, nil
		})
}

func MutatingAdmissionPolicyPrinter() Printer {
	return typedPrinter(admissionGV.WithKind("MutatingAdmissionPolicy"), func() *admissionregistrationv1.MutatingAdmissionPolicy {
		return &admissionregistrationv1.MutatingAdmissionPolicy{}
	}, policyColumns("Mutations", "Mutation indicates the number of mutations rules defined in this configuration"),
		func(o *admissionregistrationv1.MutatingAdmissionPolicy, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
			return []interface{}{o.Name, int64(len(o.Spec.Mutations)), paramKind(o.Spec.ParamKind), since(o.CreationTimestamp, now)}, nil
		})
}

func policyBindingColumns() []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		nameColumn(),
		{Name: "PolicyName", Type: "string", Description: "PolicyName indicates the policy definition which the policy binding binded to"},
		{Name: "ParamRef", Type: "string", Description: "ParamRef indicates the param resource which sets the configuration param"},
		ageColumn(),
	}
}

func paramRef(pr *admissionregistrationv1.ParamRef) string {
	switch {
	case pr == nil:
		return "<unset>"
	case pr.Name != "" && pr.Namespace != "":
		return pr.Namespace + "/" + pr.Name
	case pr.Name != "":
		return "*/" + pr.Name
	case pr.Selector != nil:
		return pr.Selector.String()
	}
	return "<unset>"
}

func ValidatingAdmissionPolicyBindingPrinter() Printer {
	return typedPrinter(admissionGV.WithKind("ValidatingAdmissionPolicyBinding"), func() *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
		return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
	}, policyBindingColumns, func(o *admissionregistrationv1.ValidatingAdmissionPolicyBinding, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
		return []interface{}{o.Name, o.Spec.PolicyName, paramRef(o.Spec.ParamRef), since(o.CreationTimestamp, now)}, nil
	})
}

func MutatingAdmissionPolicyBindingPrinter() Printer {
	return typedPrinter(admissionGV.WithKind("MutatingAdmissionPolicyBinding"), func() *admissionregistrationv1.MutatingAdmissionPolicyBinding {
		return &admissionregistrationv1.MutatingAdmissionPolicyBinding{}
	}, policyBindingColumns, func(o *admissionregistrationv1.MutatingAdmissionPolicyBinding, now time.Time) ([]interface{}, []metav1.TableRowCondition) {
		return []interface{}{o.Name, o.Spec.PolicyName, paramRef(o.Spec.ParamRef), since(o.CreationTimestamp, now)}, nil
	})
}
