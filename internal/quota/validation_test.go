package quota_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/quotad/quotad/internal/quota"
)

// quotaFromYAML decodes a ResourceQuota manifest.
func quotaFromYAML(t *testing.T, doc string) *corev1.ResourceQuota {
	t.Helper()
	rq := &corev1.ResourceQuota{}
	if err := yaml.UnmarshalStrict([]byte(doc), rq); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc, "namespace:") {
		rq.Namespace = "ns"
	}
	return rq
}

// render prints each field error on its own line, then the 422 message the HTTP edge
// sends for the list.
func render(name string, errs field.ErrorList) string {
	if len(errs) == 0 {
		return "(valid)"
	}
	var b strings.Builder
	for _, e := range errs {
		b.WriteString(e.Error() + "\n")
	}
	b.WriteString("422: " + apierrors.NewInvalid(schema.GroupKind{Kind: "ResourceQuota"}, name, errs).Error())
	return b.String()
}

// seedCrossNamespace is the documentation's (invalid) manifest, verbatim.
const seedCrossNamespace = `
apiVersion: v1
kind: ResourceQuota
metadata:
  name: disable-cross-namespace-affinity
  namespace: foo-ns
spec:
  hard:
    pods: "0"
  scopeSelector:
    matchExpressions:
    - scopeName: CrossNamespaceAffinity
`

func TestSeedCrossNamespaceManifestIsRejected(t *testing.T) {
	errs := quota.ValidateResourceQuota(quotaFromYAML(t, seedCrossNamespace))
	want := []string{
		`spec.scopeSelector.matchExpressions.scopeName: Invalid value: "CrossNamespaceAffinity": unsupported scope`,
		`spec.scopeSelector.matchExpressions.operator: Invalid value: "": not a valid selector operator`,
	}
	if len(errs) != len(want) {
		t.Fatalf("got %d errors: %v", len(errs), errs)
	}
	for i := range want {
		if errs[i].Error() != want[i] {
			t.Errorf("error %d:\n got %s\nwant %s", i, errs[i].Error(), want[i])
		}
	}
}

func TestValidateResourceQuota(t *testing.T) {
	tests := []struct{ name, doc string }{
		{"documentation compute-resources", `
metadata: {name: compute-resources}
spec:
  hard: {requests.cpu: "1", requests.memory: 1Gi, limits.cpu: "2", limits.memory: 2Gi, requests.nvidia.com/gpu: 4}`},
		{"documentation object-counts", `
metadata: {name: object-counts}
spec:
  hard: {configmaps: "10", persistentvolumeclaims: "4", pods: "4", replicationcontrollers: "20", secrets: "10", services: "10", services.loadbalancers: "2"}`},
		{"every kind of accepted name", `
metadata: {name: names}
spec:
  hard: {count/deployments.apps: "2", count/foos.example.com: "1", gold.storageclass.storage.k8s.io/requests.storage: 500Gi,
    gold.storageclass.storage.k8s.io/persistentvolumeclaims: "10", hugepages-2Mi: 1Gi, requests.hugepages-1Gi: 2Gi,
    requests.example.com/gpu: 500m, example.com/unknown: "3", ephemeral-storage: 1Gi, requests.ephemeral-storage: 1Gi,
    limits.ephemeral-storage: 2Gi, resourcequotas: "1", services.nodeports: "0", requests.storage: 1Ti}`},
		{"seed CrossNamespaceAffinity manifest", seedCrossNamespace},
		{"documentation disable-cross-namespace-affinity (valid form)", `
metadata: {name: disable-cross-namespace-affinity}
spec:
  hard: {pods: "0"}
  scopeSelector:
    matchExpressions: [{scopeName: CrossNamespacePodAffinity, operator: Exists}]`},
		{"invalid name", `
metadata: {name: Compute_Resources}
spec: {hard: {pods: "1"}}`},
		{"missing namespace", `
metadata: {name: q, namespace: ""}
spec: {hard: {pods: "1"}}`},
		{"unknown bare name yields two errors", `
metadata: {name: q}
spec: {hard: {foo: "1"}}`},
		{"storage is not a quota resource", `
metadata: {name: q}
spec: {hard: {storage: 1Gi}}`},
		{"unqualified invalid name", `
metadata: {name: q}
spec: {hard: {"foo bar": "1"}}`},
		{"invalid qualified name", `
metadata: {name: q}
spec: {hard: {"example.com/-x": "1"}}`},
		{"negative quantity", `
metadata: {name: q}
spec: {hard: {cpu: "-1"}}`},
		{"fractions on integer resources", `
metadata: {name: q}
spec: {hard: {pods: 1500m, count/deployments.apps: "1.5", example.com/gpu: 100m, services: 2k}}`},
		{"quantities beyond the bound (2^63-1), checked before any scaling", `
metadata: {name: q}
spec:
  hard: {pods: "1e1000000000", requests.memory: "9223372036854775808", limits.memory: 8Ei, limits.cpu: "9223372036854775807",
    services: "1e19", cpu: "-1e1000000000", count/pods: "-1.5", requests.storage: "1e-1000"}`},
		{"integers beyond MilliValue's range", `
metadata: {name: q}
spec:
  hard: {pods: "10000000000000000.5", services: "9223372036854775807", count/pods: 9E}`},
		{"BestEffort allows only pods", `
metadata: {name: q}
spec:
  hard: {pods: "1", cpu: "1", limits.memory: 1Gi, count/pods: "1", requests.example.com/gpu: "1"}
  scopes: [BestEffort]`},
		{"hugepages and storage under pod scopes", `
metadata: {name: q}
spec:
  hard: {hugepages-2Mi: 1Gi, requests.storage: 1Gi, pods: "2"}
  scopes: [NotTerminating, PriorityClass]`},
		{"conflicting scopes", `
metadata: {name: q}
spec:
  hard: {pods: "1"}
  scopes: [BestEffort, NotBestEffort, Terminating, NotTerminating]`},
		{"unsupported scope", `
metadata: {name: q}
spec:
  hard: {pods: "1"}
  scopes: [CrossNamespaceAffinity]`},
		{"VolumeAttributesClass scope", `
metadata: {name: q}
spec:
  hard: {requests.storage: 10Gi, persistentvolumeclaims: "2", count/persistentvolumeclaims: "2", pods: "1"}
  scopes: [VolumeAttributesClass]`},
		{"selector operator must be Exists for boolean scopes", `
metadata: {name: q}
spec:
  hard: {pods: "1"}
  scopeSelector:
    matchExpressions:
    - {scopeName: BestEffort, operator: In, values: [x]}
    - {scopeName: Terminating, operator: DoesNotExist}
    - {scopeName: CrossNamespacePodAffinity, operator: NotIn, values: [y]}`},
		{"selector values", `
metadata: {name: q}
spec:
  hard: {pods: "1"}
  scopeSelector:
    matchExpressions:
    - {scopeName: PriorityClass, operator: In}
    - {scopeName: PriorityClass, operator: NotIn, values: []}
    - {scopeName: PriorityClass, operator: Exists, values: [high]}
    - {scopeName: PriorityClass, operator: DoesNotExist, values: [high]}
    - {scopeName: PriorityClass, operator: Bogus, values: [high]}`},
		{"selector scope applied to resources", `
metadata: {name: q}
spec:
  hard: {pods: "1", hugepages-2Mi: 1Gi}
  scopeSelector:
    matchExpressions:
    - {scopeName: PriorityClass, operator: In, values: [high]}`},
		{"selector conflicting scopes", `
metadata: {name: q}
spec:
  hard: {pods: "1"}
  scopeSelector:
    matchExpressions:
    - {scopeName: NotBestEffort, operator: Exists}
    - {scopeName: BestEffort, operator: Exists}`},
		{"scopes and selector conflicts are not checked", `
metadata: {name: q}
spec:
  hard: {pods: "1"}
  scopes: [BestEffort]
  scopeSelector:
    matchExpressions:
    - {scopeName: NotBestEffort, operator: Exists}`},
		{"status is validated", `
metadata: {name: q}
spec: {hard: {pods: "1"}}
status:
  hard: {pods: "1", foo: "2"}
  used: {pods: "-1", services: 500m}`},
		{"finalizers", `
metadata: {name: q, finalizers: [kubernetes, orphan, foregroundDeletion, example.com/x, custom]}
spec: {hard: {pods: "1"}}`},
		{"quotad annotations valid", `
metadata: {name: q, annotations: {quota.quotad.io/enforcement: Audit, quota.quotad.io/warn-at: "80%,requests.cpu=90%"}}
spec: {hard: {pods: "1"}}`},
		{"quotad annotations invalid", `
metadata: {name: q, annotations: {quota.quotad.io/enforcement: enforce, quota.quotad.io/warn-at: "80%,bogus name=90%"}}
spec: {hard: {pods: "1"}}`},
		{"quotad warn-at out of range", `
metadata: {name: q, annotations: {quota.quotad.io/warn-at: "0%"}}
spec: {hard: {pods: "1"}}`},
		{"quotad warn-at twice for all", `
metadata: {name: q, annotations: {quota.quotad.io/warn-at: "80%,90%"}}
spec: {hard: {pods: "1"}}`},
	}
	g := newGolden(t, "validation.golden")
	for _, tt := range tests {
		rq := quotaFromYAML(t, tt.doc)
		g.Add(tt.name, render(rq.Name, quota.ValidateResourceQuota(rq)))
	}
	g.Check()
}

func TestValidateResourceQuotaUpdates(t *testing.T) {
	base := func() *corev1.ResourceQuota {
		return &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ns", ResourceVersion: "5"},
			Spec: corev1.ResourceQuotaSpec{
				Hard:   rl(t, "pods=1"),
				Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating, corev1.ResourceQuotaScopeNotBestEffort},
			},
		}
	}
	tests := []struct {
		name   string
		status bool
		change func(rq *corev1.ResourceQuota)
	}{
		{"hard may change", false, func(rq *corev1.ResourceQuota) { rq.Spec.Hard = rl(t, "pods=5", "cpu=1") }},
		{"scope order may change", false, func(rq *corev1.ResourceQuota) {
			rq.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopeNotTerminating}
		}},
		{"scopeSelector may change", false, func(rq *corev1.ResourceQuota) {
			rq.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
				{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpIn, Values: []string{"high"}}}}
		}},
		{"scopes are immutable", false, func(rq *corev1.ResourceQuota) {
			rq.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating}
		}},
		{"scopes are immutable (removed)", false, func(rq *corev1.ResourceQuota) { rq.Spec.Scopes = nil }},
		{"new spec is validated", false, func(rq *corev1.ResourceQuota) { rq.Spec.Hard = rl(t, "cpu=1", "storage=1") }},
		{"name is immutable", false, func(rq *corev1.ResourceQuota) { rq.Name = "other" }},
		{"status update", true, func(rq *corev1.ResourceQuota) {
			rq.Status.Hard = rl(t, "pods=1")
			rq.Status.Used = rl(t, "pods=0")
		}},
		{"status update without resourceVersion", true, func(rq *corev1.ResourceQuota) { rq.ResourceVersion = "" }},
		{"quotad annotation changed to invalid", false, func(rq *corev1.ResourceQuota) {
			rq.Annotations = map[string]string{"quota.quotad.io/enforcement": "Off"}
		}},
		{"quotad annotation changed to valid", false, func(rq *corev1.ResourceQuota) {
			rq.Annotations = map[string]string{"quota.quotad.io/enforcement": "Warn", "quota.quotad.io/warn-at": "95%"}
		}},
		{"status update with bad values", true, func(rq *corev1.ResourceQuota) {
			rq.Status.Hard = rl(t, "pods=1500m", "bogus=1")
			rq.Status.Used = rl(t, "cpu=-2")
		}},
	}
	g := newGolden(t, "validation_update.golden")
	for _, tt := range tests {
		old := base()
		rq := base()
		tt.change(rq)
		var errs field.ErrorList
		if tt.status {
			errs = quota.ValidateResourceQuotaStatusUpdate(rq, old)
		} else {
			errs = quota.ValidateResourceQuotaUpdate(rq, old)
		}
		g.Add(tt.name, render(rq.Name, errs))
	}
	g.Check()
}

func TestResourceQuotaWarnings(t *testing.T) {
	tests := []struct {
		hard []string
		want string
	}{
		{[]string{"requests.cpu=2", "limits.cpu=1"}, "ResourceQuota requests.cpu (2) should be less than limits.cpu (1)"},
		{[]string{"cpu=2", "limits.cpu=1500m"}, "ResourceQuota cpu (2) should be less than limits.cpu (1500m)"},
		{[]string{"cpu=2", "requests.cpu=1", "limits.cpu=1"}, ""},
		{[]string{"memory=2Gi", "limits.memory=1Gi", "requests.storage=10Gi", "limits.storage=5Gi"},
			"ResourceQuota memory (2Gi) should be less than limits.memory (1Gi)|ResourceQuota requests.storage (10Gi) should be less than limits.storage (5Gi)"},
		{[]string{"storage=10Gi", "limits.storage=5Gi"}, ""},
		{[]string{"requests.ephemeral-storage=2Gi", "limits.ephemeral-storage=1Gi"},
			"ResourceQuota requests.ephemeral-storage (2Gi) should be less than limits.ephemeral-storage (1Gi)"},
		{[]string{"requests.cpu=1", "limits.cpu=1"}, ""},
		{[]string{"requests.cpu=2"}, ""},
	}
	for _, tt := range tests {
		rq := &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Hard: rl(t, tt.hard...)}}
		if got := strings.Join(quota.ResourceQuotaWarnings(rq), "|"); got != tt.want {
			t.Errorf("%v:\n got %q\nwant %q", tt.hard, got, tt.want)
		}
	}
}
