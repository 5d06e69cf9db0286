package integration

import (
	"testing"

	ar "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/server/servertest"
)

func sideEffectsNone() *ar.SideEffectClass { s := ar.SideEffectClassNone; return &s }

func webhookRules() []ar.RuleWithOperations {
	return []ar.RuleWithOperations{{Operations: []ar.OperationType{ar.Create}, Rule: ar.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}}
}

func matchPods() *ar.MatchResources {
	return &ar.MatchResources{ResourceRules: []ar.NamedRuleWithOperations{{RuleWithOperations: ar.RuleWithOperations{
		Operations: []ar.OperationType{ar.Create, ar.Update}, Rule: ar.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}}}}}}
}

// TestAdmissionRegistrationKinds walks the admissionregistration.k8s.io kinds through their
// typed clients and checks upstream's defaults and one validation error of each.
func TestAdmissionRegistrationKinds(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	c := s.Client.AdmissionregistrationV1()
	svc := func() ar.WebhookClientConfig {
		return ar.WebhookClientConfig{Service: &ar.ServiceReference{Namespace: "default", Name: "hook"}}
	}
	vwh := ar.ValidatingWebhook{Name: "check.example.com", ClientConfig: svc(), Rules: webhookRules(), SideEffects: sideEffectsNone(), AdmissionReviewVersions: []string{"v1"}}
	mwh := ar.MutatingWebhook{Name: "mutate.example.com", ClientConfig: svc(), Rules: webhookRules(), SideEffects: sideEffectsNone(), AdmissionReviewVersions: []string{"v1"}}
	vap := &ar.ValidatingAdmissionPolicy{ObjectMeta: meta("replicas"), Spec: ar.ValidatingAdmissionPolicySpec{
		MatchConstraints: matchPods(), Validations: []ar.Validation{{Expression: "object.spec.replicas <= 5"}}}}
	mapol := &ar.MutatingAdmissionPolicy{ObjectMeta: meta("labels"), Spec: ar.MutatingAdmissionPolicySpec{
		MatchConstraints: matchPods(), ReinvocationPolicy: ar.NeverReinvocationPolicy,
		Mutations: []ar.Mutation{{PatchType: ar.PatchTypeApplyConfiguration, ApplyConfiguration: &ar.ApplyConfiguration{Expression: `Object{metadata: Object.metadata{labels: {"a": "b"}}}`}}}}}
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"validatingwebhookconfigurations", kindCase[*ar.ValidatingWebhookConfiguration, *ar.ValidatingWebhookConfigurationList]{
			client: c.ValidatingWebhookConfigurations(), obj: &ar.ValidatingWebhookConfiguration{ObjectMeta: meta("vwc"), Webhooks: []ar.ValidatingWebhook{vwh}},
			spec:       func(o *ar.ValidatingWebhookConfiguration) { o.Webhooks[0].TimeoutSeconds = int32p(5) },
			specOf:     func(o *ar.ValidatingWebhookConfiguration) interface{} { return *o.Webhooks[0].TimeoutSeconds },
			generation: true,
		}.run},
		{"mutatingwebhookconfigurations", kindCase[*ar.MutatingWebhookConfiguration, *ar.MutatingWebhookConfigurationList]{
			client: c.MutatingWebhookConfigurations(), obj: &ar.MutatingWebhookConfiguration{ObjectMeta: meta("mwc"), Webhooks: []ar.MutatingWebhook{mwh}},
			spec:       func(o *ar.MutatingWebhookConfiguration) { o.Webhooks[0].TimeoutSeconds = int32p(5) },
			specOf:     func(o *ar.MutatingWebhookConfiguration) interface{} { return *o.Webhooks[0].TimeoutSeconds },
			generation: true,
		}.run},
		{"validatingadmissionpolicies", kindCase[*ar.ValidatingAdmissionPolicy, *ar.ValidatingAdmissionPolicyList]{
			client: c.ValidatingAdmissionPolicies(), obj: vap.DeepCopy(),
			spec:       func(o *ar.ValidatingAdmissionPolicy) { o.Spec.Validations[0].Message = "too many" },
			specOf:     func(o *ar.ValidatingAdmissionPolicy) interface{} { return o.Spec.Validations[0].Message },
			status:     func(o *ar.ValidatingAdmissionPolicy) { o.Status.ObservedGeneration = 9 },
			statusOf:   func(o *ar.ValidatingAdmissionPolicy) interface{} { return o.Status.ObservedGeneration },
			generation: true,
		}.run},
		{"validatingadmissionpolicybindings", kindCase[*ar.ValidatingAdmissionPolicyBinding, *ar.ValidatingAdmissionPolicyBindingList]{
			client: c.ValidatingAdmissionPolicyBindings(), obj: &ar.ValidatingAdmissionPolicyBinding{ObjectMeta: meta("replicas-binding"), Spec: ar.ValidatingAdmissionPolicyBindingSpec{
				PolicyName: "replicas", ValidationActions: []ar.ValidationAction{ar.Deny}}},
			spec: func(o *ar.ValidatingAdmissionPolicyBinding) {
				o.Spec.ValidationActions = []ar.ValidationAction{ar.Warn}
			},
			specOf:     func(o *ar.ValidatingAdmissionPolicyBinding) interface{} { return o.Spec.ValidationActions[0] },
			generation: true,
		}.run},
		{"mutatingadmissionpolicies", kindCase[*ar.MutatingAdmissionPolicy, *ar.MutatingAdmissionPolicyList]{
			client: c.MutatingAdmissionPolicies(), obj: mapol.DeepCopy(),
			spec:       func(o *ar.MutatingAdmissionPolicy) { o.Spec.ReinvocationPolicy = ar.IfNeededReinvocationPolicy },
			specOf:     func(o *ar.MutatingAdmissionPolicy) interface{} { return o.Spec.ReinvocationPolicy },
			generation: true,
		}.run},
		{"mutatingadmissionpolicybindings", kindCase[*ar.MutatingAdmissionPolicyBinding, *ar.MutatingAdmissionPolicyBindingList]{
			client: c.MutatingAdmissionPolicyBindings(), obj: &ar.MutatingAdmissionPolicyBinding{ObjectMeta: meta("labels-binding"), Spec: ar.MutatingAdmissionPolicyBindingSpec{PolicyName: "labels"}},
			spec:       func(o *ar.MutatingAdmissionPolicyBinding) { o.Spec.PolicyName = "labels2" },
			specOf:     func(o *ar.MutatingAdmissionPolicyBinding) interface{} { return o.Spec.PolicyName },
			generation: true,
		}.run},
	}
	for _, tc := range cases {
		t.Run(tc.name, tc.run)
	}

	ctx := ctxT(t)
	// Upstream's defaults.
	got, err := c.ValidatingWebhookConfigurations().Create(ctx, &ar.ValidatingWebhookConfiguration{ObjectMeta: meta("defaults"), Webhooks: []ar.ValidatingWebhook{vwh}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := got.Webhooks[0]
	if *w.FailurePolicy != ar.Fail || *w.MatchPolicy != ar.Equivalent || *w.TimeoutSeconds != 10 || w.NamespaceSelector == nil || w.ObjectSelector == nil ||
		*w.ClientConfig.Service.Port != 443 || *w.Rules[0].Scope != ar.AllScopes {
		t.Errorf("webhook defaults: %+v", w)
	}
	gotVAP, err := c.ValidatingAdmissionPolicies().Create(ctx, func() *ar.ValidatingAdmissionPolicy { p := vap.DeepCopy(); p.Name = "defaults"; return p }(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *gotVAP.Spec.FailurePolicy != ar.Fail || *gotVAP.Spec.MatchConstraints.MatchPolicy != ar.Equivalent || gotVAP.Generation != 1 {
		t.Errorf("policy defaults: %+v", gotVAP.Spec)
	}

	// One validation error of each kind, with upstream's text.
	bad := vwh
	bad.Name = "check"
	_, err = c.ValidatingWebhookConfigurations().Create(ctx, &ar.ValidatingWebhookConfiguration{ObjectMeta: meta("bad"), Webhooks: []ar.ValidatingWebhook{bad}}, metav1.CreateOptions{})
	expectInvalid(t, err, `ValidatingWebhookConfiguration.admissionregistration.k8s.io "bad" is invalid: webhooks[0].name: Invalid value: "check": should be a domain with at least three segments separated by dots`)
	badM := mwh
	badM.SideEffects = nil
	_, err = c.MutatingWebhookConfigurations().Create(ctx, &ar.MutatingWebhookConfiguration{ObjectMeta: meta("bad"), Webhooks: []ar.MutatingWebhook{badM}}, metav1.CreateOptions{})
	expectInvalid(t, err, `MutatingWebhookConfiguration.admissionregistration.k8s.io "bad" is invalid: webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun`)
	_, err = c.ValidatingAdmissionPolicies().Create(ctx, &ar.ValidatingAdmissionPolicy{ObjectMeta: meta("bad"), Spec: ar.ValidatingAdmissionPolicySpec{MatchConstraints: matchPods()}}, metav1.CreateOptions{})
	expectInvalid(t, err, `ValidatingAdmissionPolicy.admissionregistration.k8s.io "bad" is invalid: [spec.validations: Required value: validations or auditAnnotations must contain at least one item, spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item]`)
	_, err = c.ValidatingAdmissionPolicyBindings().Create(ctx, &ar.ValidatingAdmissionPolicyBinding{ObjectMeta: meta("bad"), Spec: ar.ValidatingAdmissionPolicyBindingSpec{PolicyName: "replicas"}}, metav1.CreateOptions{})
	expectInvalid(t, err, `ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "bad" is invalid: spec.validationActions: Required value: at least one validation action is required`)
	badMAP := mapol.DeepCopy()
	badMAP.Name, badMAP.Spec.ReinvocationPolicy = "bad", ""
	_, err = c.MutatingAdmissionPolicies().Create(ctx, badMAP, metav1.CreateOptions{})
	expectInvalid(t, err, `MutatingAdmissionPolicy.admissionregistration.k8s.io "bad" is invalid: spec.reinvocationPolicy: Required value`)
	_, err = c.MutatingAdmissionPolicyBindings().Create(ctx, &ar.MutatingAdmissionPolicyBinding{ObjectMeta: meta("bad")}, metav1.CreateOptions{})
	expectInvalid(t, err, `MutatingAdmissionPolicyBinding.admissionregistration.k8s.io "bad" is invalid: spec.policyName: Required value`)
}
