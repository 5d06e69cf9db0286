package validation

import (
	"strings"
	"testing"

	ar "k8s.io/api/admissionregistration/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/quotad/quotad/internal/registry/defaults"
)

func ptrTo[T any](v T) *T { return &v }

func TestWebhookAndFlowControlValidationMessages(t *testing.T) {
	om := metav1.ObjectMeta{Name: "x"}
	none := ar.SideEffectClassNone
	hook := func(mut func(*ar.ValidatingWebhook)) runtime.Object {
		w := ar.ValidatingWebhook{Name: "a.b.c", SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
			ClientConfig: ar.WebhookClientConfig{URL: ptrTo("https://h.example.com/x")}}
		mut(&w)
		return &ar.ValidatingWebhookConfiguration{ObjectMeta: om, Webhooks: []ar.ValidatingWebhook{w}}
	}
	limited := func(q flowcontrolv1.QueuingConfiguration) runtime.Object {
		return &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: om, Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: &q}}}}
	}
	cases := []struct {
		name string
		obj  runtime.Object
		want []string
	}{
		{"webhook http url", hook(func(w *ar.ValidatingWebhook) { w.ClientConfig.URL = ptrTo("http://h.example.com") }),
			[]string{`webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`}},
		{"webhook both url and service", hook(func(w *ar.ValidatingWebhook) {
			w.ClientConfig.Service = &ar.ServiceReference{Namespace: "n", Name: "s"}
		}),
			[]string{`webhooks[0].clientConfig: Required value: exactly one of url or service is required`}},
		{"webhook timeout", hook(func(w *ar.ValidatingWebhook) { w.TimeoutSeconds = ptrTo(int32(31)) }),
			[]string{`webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds`}},
		{"webhook review versions", hook(func(w *ar.ValidatingWebhook) { w.AdmissionReviewVersions = nil }),
			[]string{`webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1`}},
		{"webhook rule wildcard", hook(func(w *ar.ValidatingWebhook) {
			w.Rules = []ar.RuleWithOperations{{Operations: []ar.OperationType{"*", "CREATE"}, Rule: ar.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"*", "pods"}}}}
		}), []string{
			`webhooks[0].rules[0].operations: Invalid value: ["*","CREATE"]: if '*' is present, must not specify other operations`,
			`webhooks[0].rules[0].resources: Invalid value: ["*","pods"]: if '*' is present, must not specify other resources without subresources`}},
		{"plc entropy", limited(flowcontrolv1.QueuingConfiguration{Queues: 128, HandSize: 10, QueueLengthLimit: 50}),
			[]string{`spec.limited.limitResponse.queuing.handSize: Invalid value: 10: required entropy bits of deckSize 128 and handSize 10 should not be greater than 60`}},
		{"plc hand over queues", limited(flowcontrolv1.QueuingConfiguration{Queues: 4, HandSize: 5, QueueLengthLimit: 50}),
			[]string{`spec.limited.limitResponse.queuing.handSize: Invalid value: 5: should not be greater than queues (4)`}},
		{"flow schema user subject", &flowcontrolv1.FlowSchema{ObjectMeta: om, Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: 10,
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "p"},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/a/*/b"}}}}}}},
			[]string{`spec.rules[0].subjects[0].user: Required value: user is required when subject kind is 'User'`,
				`spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: "/a/*/b": wildcard can only do suffix matching`}},
		{"apiservice priorities", &apiregistrationv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: "v1.g.example.com"}, Spec: apiregistrationv1.APIServiceSpec{Group: "g.example.com", Version: "v1"}},
			[]string{`spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000`, `spec.versionPriority: Invalid value: 0: must be positive and less than 1000`}},
		{"csistoragecapacity name", &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "n"}, StorageClassName: "Fast"},
			[]string{`storageClassName: Invalid value: "Fast": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defaults.Apply(tc.obj)
			got := Validate(tc.obj)
			if strings.Join(texts(got), "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("errors:\n got %s\nwant %s", strings.Join(texts(got), "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func texts(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}

// TestMandatoryFlowControlObjectsValidate: the bootstrap objects pass validation after
// defaults, and their specs may not change.
func TestMandatoryFlowControlObjectsValidate(t *testing.T) {
	for _, pl := range MandatoryPriorityLevelConfigurations() {
		defaults.Apply(&pl)
		if errs := Validate(&pl); len(errs) > 0 {
			t.Errorf("%s: %v", pl.Name, errs)
		}
	}
	for _, fs := range MandatoryFlowSchemas() {
		defaults.Apply(&fs)
		if errs := Validate(&fs); len(errs) > 0 {
			t.Errorf("%s: %v", fs.Name, errs)
		}
		changed := fs.DeepCopy()
		changed.Spec.MatchingPrecedence = 5000
		if errs := ValidateUpdate(changed, &fs); len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), "must equal the fixed value") {
			t.Errorf("%s spec change: %v", fs.Name, errs)
		}
	}
}
