package defaults

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// webhookCommon defaults the fields validating and mutating webhooks share.
func webhookCommon(failure **admissionregistrationv1.FailurePolicyType, match **admissionregistrationv1.MatchPolicyType, nsSel, objSel **metav1.LabelSelector, timeout **int32, cc *admissionregistrationv1.WebhookClientConfig, rules []admissionregistrationv1.RuleWithOperations) {
	if *failure == nil {
		p := admissionregistrationv1.Fail
		*failure = &p
	}
	if *match == nil {
		p := admissionregistrationv1.Equivalent
		*match = &p
	}
	if *nsSel == nil {
		*nsSel = &metav1.LabelSelector{}
	}
	if *objSel == nil {
		*objSel = &metav1.LabelSelector{}
	}
	if *timeout == nil {
		t := int32(10)
		*timeout = &t
	}
	if cc.Service != nil && cc.Service.Port == nil {
		p := int32(443)
		cc.Service.Port = &p
	}
	for i := range rules {
		rule(&rules[i].Rule)
	}
}

func rule(r *admissionregistrationv1.Rule) {
	if r.Scope == nil {
		s := admissionregistrationv1.AllScopes
		r.Scope = &s
	}
}

// ValidatingWebhookConfiguration applies upstream's defaults to each webhook.
func ValidatingWebhookConfiguration(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		webhookCommon(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, &w.ClientConfig, w.Rules)
	}
}

// MutatingWebhookConfiguration applies upstream's defaults to each webhook.
func MutatingWebhookConfiguration(c *admissionregistrationv1.MutatingWebhookConfiguration) {
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		webhookCommon(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds, &w.ClientConfig, w.Rules)
		if w.ReinvocationPolicy == nil {
			p := admissionregistrationv1.NeverReinvocationPolicy
			w.ReinvocationPolicy = &p
		}
	}
}

// matchResources is upstream's SetDefaults_MatchResources plus its rules.
func matchResources(m *admissionregistrationv1.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		p := admissionregistrationv1.Equivalent
		m.MatchPolicy = &p
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	for i := range m.ResourceRules {
		rule(&m.ResourceRules[i].Rule)
	}
	for i := range m.ExcludeResourceRules {
		rule(&m.ExcludeResourceRules[i].Rule)
	}
}

func failPolicy(p **admissionregistrationv1.FailurePolicyType) {
	if *p == nil {
		f := admissionregistrationv1.Fail
		*p = &f
	}
}

// ValidatingAdmissionPolicy applies upstream's defaults.
func ValidatingAdmissionPolicy(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
	failPolicy(&p.Spec.FailurePolicy)
	matchResources(p.Spec.MatchConstraints)
}

// ValidatingAdmissionPolicyBinding applies upstream's defaults.
func ValidatingAdmissionPolicyBinding(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	matchResources(b.Spec.MatchResources)
}

// MutatingAdmissionPolicy applies upstream's defaults.
func MutatingAdmissionPolicy(p *admissionregistrationv1.MutatingAdmissionPolicy) {
	failPolicy(&p.Spec.FailurePolicy)
	matchResources(p.Spec.MatchConstraints)
}

// MutatingAdmissionPolicyBinding applies upstream's defaults.
func MutatingAdmissionPolicyBinding(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) {
	matchResources(b.Spec.MatchResources)
}
