package integration

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/server/servertest"
)

// policyNamespaces creates a namespace labelled name=true, as the conformance specs label
// theirs, and a namespace name-other labelled name-other=true, which bindings selecting
// the first leave alone.
func policyNamespaces(t *testing.T, ctx context.Context, c kubernetes.Interface, name string) {
	t.Helper()
	for ns, labels := range map[string]map[string]string{name: {name: "true"}, name + "-other": {name + "-other": "true"}} {
		if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// deploymentsRule matches CREATE and UPDATE of apps/v1 deployments, in namespaces labelled
// unique=true (the conformance specs' MatchUniqueNamespace).
func deploymentsRule(unique string) *admissionregistrationv1.MatchResources {
	return &admissionregistrationv1.MatchResources{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{unique: "true"}},
		ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
		}}},
	}
}

func bindValidating(t *testing.T, ctx context.Context, c kubernetes.Interface, policy *admissionregistrationv1.ValidatingAdmissionPolicy, unique string, actions ...admissionregistrationv1.ValidationAction) {
	t.Helper()
	if _, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name + "-binding"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			MatchResources:    &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{unique: "true"}}},
			ValidationActions: actions,
		},
	}
	if _, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func nginxDeployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": "nginx"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:latest"}}},
			},
		},
	}
}

func nginxReplicaSet(name string, replicas int32) *appsv1.ReplicaSet {
	d := nginxDeployment(name, replicas)
	return &appsv1.ReplicaSet{ObjectMeta: d.ObjectMeta, Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: d.Spec.Selector, Template: d.Spec.Template}}
}

// TestValidatingAdmissionPolicyDeployment is the conformance spec "should validate against a
// Deployment": a policy with a messageExpression that fails (string + int) and a check of
// namespaceObject refuses a Deployment of 1 replica, with upstream's text, and admits one of
// 2 replicas, a ReplicaSet of 1 replica, and a Deployment in a namespace the binding does
// not select.
func TestValidatingAdmissionPolicyDeployment(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	const ns = "vap-deploy"
	policyNamespaces(t, ctx, s.Client, ns)
	bindValidating(t, ctx, s.Client, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "replicas.policy.example.com"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: deploymentsRule(ns),
			Validations: []admissionregistrationv1.Validation{
				{Expression: "object.spec.replicas > 1", MessageExpression: "'wants replicas > 1, got ' + object.spec.replicas"},
				{Expression: "namespaceObject.metadata.name == '" + ns + "'", Message: "Internal error! Other namespace should not be allowed."},
			},
		},
	}, ns, admissionregistrationv1.Deny)

	_, err := s.Client.AppsV1().Deployments(ns).Create(ctx, nginxDeployment("marker-deployment", 1), metav1.CreateOptions{})
	expectInvalid(t, err, `deployments.apps "marker-deployment" is forbidden: ValidatingAdmissionPolicy 'replicas.policy.example.com' with binding 'replicas.policy.example.com-binding' denied request: failed expression: object.spec.replicas > 1`)
	if _, err := s.Client.AppsV1().Deployments(ns).Create(ctx, nginxDeployment("replicated", 2), metav1.CreateOptions{}); err != nil {
		t.Fatalf("replicated Deployment: %v", err)
	}
	if _, err := s.Client.AppsV1().ReplicaSets(ns).Create(ctx, nginxReplicaSet("non-replicated", 1), metav1.CreateOptions{}); err != nil {
		t.Fatalf("non-replicated ReplicaSet: %v", err)
	}
	if _, err := s.Client.AppsV1().Deployments(ns+"-other").Create(ctx, nginxDeployment("elsewhere", 1), metav1.CreateOptions{}); err != nil {
		t.Fatalf("Deployment in an unselected namespace: %v", err)
	}
	// An update is judged too.
	_, err = s.Client.AppsV1().Deployments(ns).Patch(ctx, "replicated", types.MergePatchType, []byte(`{"spec":{"replicas":0}}`), metav1.PatchOptions{})
	expectInvalid(t, err, `deployments.apps "replicated" is forbidden: ValidatingAdmissionPolicy 'replicas.policy.example.com' with binding 'replicas.policy.example.com-binding' denied request: failed expression: object.spec.replicas > 1`)
}

// TestValidatingAdmissionPolicyVariables is the conformance spec "should allow expressions
// to refer variables": variables composed of variables; and the authorizer variable.
func TestValidatingAdmissionPolicyVariables(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	const ns = "vap-vars"
	policyNamespaces(t, ctx, s.Client, ns)
	reason := metav1.StatusReasonForbidden
	bindValidating(t, ctx, s.Client, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "vars.policy.example.com"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: deploymentsRule(ns),
			Variables: []admissionregistrationv1.Variable{
				{Name: "replicas", Expression: "object.spec.replicas"},
				{Name: "oddReplicas", Expression: "variables.replicas % 2 == 1"},
			},
			Validations: []admissionregistrationv1.Validation{
				{Expression: "variables.replicas > 1"},
				{Expression: "variables.oddReplicas", MessageExpression: "'odd replicas wanted, got ' + string(variables.replicas)", Reason: &reason},
				// The authorizer variable asks RBAC: the admin may create deployments, a
				// service account of the namespace may not.
				{Expression: "authorizer.requestResource.check('create').allowed() && !authorizer.serviceAccount('" + ns + "', 'default').group('apps').resource('deployments').namespace('" + ns + "').check('create').allowed()", Message: "authorizer"},
			},
		},
	}, ns, admissionregistrationv1.Deny)

	_, err := s.Client.AppsV1().Deployments(ns).Create(ctx, nginxDeployment("marker-deployment", 1), metav1.CreateOptions{})
	expectInvalid(t, err, `deployments.apps "marker-deployment" is forbidden: ValidatingAdmissionPolicy 'vars.policy.example.com' with binding 'vars.policy.example.com-binding' denied request: failed expression: variables.replicas > 1`)
	_, err = s.Client.AppsV1().Deployments(ns).Create(ctx, nginxDeployment("even", 2), metav1.CreateOptions{})
	expectForbidden(t, err, `deployments.apps "even" is forbidden: ValidatingAdmissionPolicy 'vars.policy.example.com' with binding 'vars.policy.example.com-binding' denied request: odd replicas wanted, got 2`)
	if _, err := s.Client.AppsV1().Deployments(ns).Create(ctx, nginxDeployment("replicated", 3), metav1.CreateOptions{}); err != nil {
		t.Fatalf("replicated Deployment: %v", err)
	}
	if _, err := s.Client.AppsV1().ReplicaSets(ns).Create(ctx, nginxReplicaSet("non-replicated", 1), metav1.CreateOptions{}); err != nil {
		t.Fatalf("non-replicated ReplicaSet: %v", err)
	}
}

// TestValidatingAdmissionPolicyWarnAndLimits: a Warn binding admits the request with
// upstream's warning; an expression that would run for minutes is stopped by the cost
// limit (its policy fails closed, with upstream's text); a policy matching no resource of
// the request leaves the create path untouched.
func TestValidatingAdmissionPolicyWarnAndLimits(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	const ns = "vap-warn"
	policyNamespaces(t, ctx, s.Client, ns)
	bindValidating(t, ctx, s.Client, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "warn.policy.example.com"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: deploymentsRule(ns),
			Validations:      []admissionregistrationv1.Validation{{Expression: "object.spec.replicas > 1", Message: "wants replicas > 1"}},
		},
	}, ns, admissionregistrationv1.Warn)

	w := &warnings{}
	cfg := rest.CopyConfig(s.Config)
	cfg.WarningHandler = w
	c := kubernetes.NewForConfigOrDie(cfg)
	if _, err := c.AppsV1().Deployments(ns).Create(ctx, nginxDeployment("warned", 1), metav1.CreateOptions{}); err != nil {
		t.Fatalf("a Warn binding refused: %v", err)
	}
	want := []string{"Validation failed for ValidatingAdmissionPolicy 'warn.policy.example.com' with binding 'warn.policy.example.com-binding': wants replicas > 1"}
	if got := w.take(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings = %q, want %q", got, want)
	}

	// A hostile expression: 10^8 iterations, stopped after the per-expression cost limit.
	ten := "[0,1,2,3,4,5,6,7,8,9]"
	hostile := ten + ".all(a, " + ten + ".all(b, " + ten + ".all(c, " + ten + ".all(d, " + ten + ".all(e, " + ten + ".all(f, " + ten + ".all(g, " + ten + ".all(h, a+b+c+d+e+f+g+h >= 0))))))))"
	bindValidating(t, ctx, s.Client, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "hostile.policy.example.com"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: deploymentsRule(ns),
			Validations:      []admissionregistrationv1.Validation{{Expression: hostile}},
		},
	}, ns, admissionregistrationv1.Deny)
	_, err := c.AppsV1().Deployments(ns).Create(ctx, nginxDeployment("hostile", 3), metav1.CreateOptions{})
	expectInvalid(t, err, `deployments.apps "hostile" is forbidden: ValidatingAdmissionPolicy 'hostile.policy.example.com' with binding 'hostile.policy.example.com-binding' denied request: expression '`+hostile+`' resulted in error: operation cancelled: actual cost limit exceeded`)

	// A policy on config maps only: deployments are not its business.
	bindValidating(t, ctx, s.Client, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "configmaps.policy.example.com"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
			}}}},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: "no config maps"}},
		},
	}, ns+"-other", admissionregistrationv1.Deny)
	if _, err := c.AppsV1().Deployments(ns+"-other").Create(ctx, nginxDeployment("untouched", 1), metav1.CreateOptions{}); err != nil {
		t.Fatalf("a policy matching nothing refused: %v", err)
	}
	_, err = c.CoreV1().ConfigMaps(ns+"-other").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{})
	expectInvalid(t, err, `configmaps "cm" is forbidden: ValidatingAdmissionPolicy 'configmaps.policy.example.com' with binding 'configmaps.policy.example.com-binding' denied request: no config maps`)
}

func bindMutating(t *testing.T, ctx context.Context, c kubernetes.Interface, policy *admissionregistrationv1.MutatingAdmissionPolicy, unique string) {
	t.Helper()
	if _, err := c.AdmissionregistrationV1().MutatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b := &admissionregistrationv1.MutatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name + "-binding"},
		Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{
			PolicyName:     policy.Name,
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{unique: "true"}}},
		},
	}
	if _, err := c.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func applyConfiguration(expr string) admissionregistrationv1.Mutation {
	return admissionregistrationv1.Mutation{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration, ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: expr}}
}

// TestMutatingAdmissionPolicyDeployment is the conformance specs "should mutate a
// Deployment" and "... with annotations": apply configurations set spec.replicas and an
// annotation of a created Deployment; a JSON patch adds a label; a Deployment in a namespace
// the bindings do not select is left as it was sent; a mutation that fails refuses the
// request with upstream's text (reason Invalid, code 403).
func TestMutatingAdmissionPolicyDeployment(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	const ns = "map-deploy"
	policyNamespaces(t, ctx, s.Client, ns)
	bindMutating(t, ctx, s.Client, &admissionregistrationv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "a-replicas.policy.example.com"},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			MatchConstraints:   deploymentsRule(ns),
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
			Mutations:          []admissionregistrationv1.Mutation{applyConfiguration(`Object{spec: Object.spec{replicas: 1337}}`)},
		},
	}, ns)
	bindMutating(t, ctx, s.Client, &admissionregistrationv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "b-annotations.policy.example.com"},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			MatchConstraints:   deploymentsRule(ns),
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
			Mutations: []admissionregistrationv1.Mutation{
				applyConfiguration(`
					Object{
						metadata: Object.metadata{
							annotations: {
								"mutated-by": "admission-policy"
							}
						}
					}`),
				{PatchType: admissionregistrationv1.PatchTypeJSONPatch, JSONPatch: &admissionregistrationv1.JSONPatch{
					Expression: `[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("example.com/replicas"), value: string(object.spec.replicas)}]`,
				}},
			},
		},
	}, ns)

	created, err := s.Client.AppsV1().Deployments(ns).Create(ctx, nginxDeployment("marker-deployment", 1), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Spec.Replicas == nil || *created.Spec.Replicas != 1337 {
		t.Errorf("spec.replicas = %v, want 1337", created.Spec.Replicas)
	}
	if got := created.Annotations["mutated-by"]; got != "admission-policy" {
		t.Errorf("annotation mutated-by = %q, want admission-policy", got)
	}
	if got := created.Labels["example.com/replicas"]; got != "1337" {
		t.Errorf("label example.com/replicas = %q, want 1337 (the JSON patch sees the object the policy before it left)", got)
	}
	if got := created.Spec.Template.Spec.Containers[0].Image; got != "nginx:latest" {
		t.Errorf("image = %q: the merge lost the rest of the object", got)
	}
	other, err := s.Client.AppsV1().Deployments(ns+"-other").Create(ctx, nginxDeployment("untouched", 1), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *other.Spec.Replicas != 1 || other.Annotations["mutated-by"] != "" {
		t.Errorf("a Deployment no binding selects was mutated: replicas %d, annotations %v", *other.Spec.Replicas, other.Annotations)
	}

	// A mutation whose expression fails refuses the request (failurePolicy Fail).
	bindMutating(t, ctx, s.Client, &admissionregistrationv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "c-broken.policy.example.com"},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			MatchConstraints:   deploymentsRule(ns),
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
			Mutations:          []admissionregistrationv1.Mutation{applyConfiguration(`Object{spec: Object.spec{replicas: object.spec.missing}}`)},
		},
	}, ns)
	_, err = s.Client.AppsV1().Deployments(ns).Create(ctx, nginxDeployment("broken", 1), metav1.CreateOptions{})
	// As upstream: reason Invalid, code 403 (the generic policy dispatcher keeps Forbidden's code).
	if status, ok := err.(apierrors.APIStatus); !ok || status.Status().Code != 403 {
		t.Errorf("err = %#v, want code 403", err)
	}
	expectInvalid(t, err, `policy 'c-broken.policy.example.com' with binding 'c-broken.policy.example.com-binding' denied request: expression 'Object{spec: Object.spec{replicas: object.spec.missing}}' resulted in error: no such key: missing`)
}

// TestValidatingAdmissionPolicyTypeChecking is the spec "should type check validation
// expressions": status.typeChecking is written for every generation, empty for a policy
// whose expressions type check against the Deployment schema, one warning per expression
// that does not (a type confusion, an undefined field, a syntax error).
func TestValidatingAdmissionPolicyTypeChecking(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	policies := s.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	good := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "good"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: deploymentsRule("x"),
			Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas > 1 && object.metadata.name.startsWith('a') && object.spec.template.spec.containers.all(c, c.image != '')",
				MessageExpression: "'got ' + string(object.spec.replicas) + ' ' + object.metadata.labels['x']"}},
		},
	}
	confused := good.DeepCopy()
	confused.Name = "confused"
	confused.Spec.Validations = []admissionregistrationv1.Validation{
		{Expression: "object.spec.replicas > '1'", MessageExpression: "'wants replicas > 1, got ' + object.spec.replicas"},
		{Expression: "object.spec.maxRetries < 10"},
		{Expression: "object.spec.replicas >"},
	}
	for _, p := range []*admissionregistrationv1.ValidatingAdmissionPolicy{good, confused} {
		if _, err := policies.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	typeChecking := func(name string) *admissionregistrationv1.TypeChecking {
		w, err := policies.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*admissionregistrationv1.ValidatingAdmissionPolicy); ok && p.Status.TypeChecking != nil && p.Status.ObservedGeneration == p.Generation {
				return p.Status.TypeChecking
			}
		}
		t.Fatalf("no typeChecking for %s", name)
		return nil
	}
	if tc := typeChecking("good"); len(tc.ExpressionWarnings) != 0 {
		t.Errorf("good: warnings %v", tc.ExpressionWarnings)
	}
	tc := typeChecking("confused")
	var got []string
	for _, w := range tc.ExpressionWarnings {
		got = append(got, w.FieldRef+": "+strings.SplitN(w.Warning, "\n", 2)[0])
	}
	want := []string{
		"spec.validations[0].expression: apps/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching overload for '_>_' applied to '(int, string)'",
		"spec.validations[0].messageExpression: apps/v1, Kind=Deployment: ERROR: <input>:1:28: found no matching overload for '_+_' applied to '(string, int)'",
		"spec.validations[1].expression: apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'maxRetries'",
		"spec.validations[2].expression: apps/v1, Kind=Deployment: ERROR: <input>:1:23: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n got %q\nwant %q", got, want)
	}
}

// TestValidatingAdmissionPolicyAudit: an Audit binding admits the request and records
// upstream's validation_failure audit annotation; a policy's auditAnnotations record their
// values under <policy>/<key>.
func TestValidatingAdmissionPolicyAudit(t *testing.T) {
	t.Parallel()
	s, logPath := startAudited(t, "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources:\n  - group: apps\n    resources: [deployments]\n")
	ctx := t.Context()
	const ns = "vap-audit"
	policyNamespaces(t, ctx, s.Client, ns)
	bindValidating(t, ctx, s.Client, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "audit.policy.example.com"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: deploymentsRule(ns),
			Validations:      []admissionregistrationv1.Validation{{Expression: "object.spec.replicas > 1", Message: "wants replicas > 1"}},
			AuditAnnotations: []admissionregistrationv1.AuditAnnotation{{Key: "replicas", ValueExpression: "'replicas: ' + string(object.spec.replicas)"}},
		},
	}, ns, admissionregistrationv1.Audit)
	if _, err := s.Client.AppsV1().Deployments(ns).Create(ctx, nginxDeployment("audited", 1), metav1.CreateOptions{}); err != nil {
		t.Fatalf("an Audit binding refused: %v", err)
	}
	evs := requestEvents(stopAndRead(t, s, logPath), "create", "deployments", "audited")
	if len(evs) == 0 {
		t.Fatal("no audit events for the create")
	}
	got := evs[len(evs)-1].Annotations
	want := map[string]string{
		"audit.policy.example.com/replicas":                     "replicas: 1",
		"validation.policy.admission.k8s.io/validation_failure": `[{"message":"wants replicas \u003e 1","policy":"audit.policy.example.com","binding":"audit.policy.example.com-binding","expressionIndex":0,"validationActions":["Audit"]}]`,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, got[k], v)
		}
	}
}

// TestAdmissionPoliciesOnCustomResources: policies judge and mutate custom resources too
// (unstructured objects; the apply configuration merges by the CRD's published schema).
func TestAdmissionPoliciesOnCustomResources(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx := ctxT(t)
	const ns = "cr-policies"
	policyNamespaces(t, ctx, s.Client, ns)
	mkWidgetCRD(t, s)
	widgets := &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{"example.com"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}},
	}}}}
	bindMutating(t, ctx, s.Client, &admissionregistrationv1.MutatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets-replicas"},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			MatchConstraints: widgets, ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
			Mutations: []admissionregistrationv1.Mutation{applyConfiguration(`Object{spec: Object.spec{replicas: object.spec.size * 2}}`)},
		},
	}, ns)
	bindValidating(t, ctx, s.Client, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets-color"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: widgets,
			Validations:      []admissionregistrationv1.Validation{{Expression: "object.spec.color != 'red'", MessageExpression: "object.kind + ' ' + object.metadata.name + ' may not be red'"}},
		},
	}, ns, admissionregistrationv1.Deny)

	res := s.Dynamic.Resource(widgetGVR).Namespace(ns)
	created, err := res.Create(ctx, cr("Widget", "w1", map[string]any{"size": int64(3), "color": "blue"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedInt64(created.Object, "spec", "replicas"); got != 6 {
		t.Errorf("spec.replicas = %d, want 6 (%v)", got, created.Object["spec"])
	}
	_, err = res.Create(ctx, cr("Widget", "w2", map[string]any{"size": int64(1), "color": "red"}), metav1.CreateOptions{})
	expectInvalid(t, err, `widgets.example.com "w2" is forbidden: ValidatingAdmissionPolicy 'widgets-color' with binding 'widgets-color-binding' denied request: Widget w2 may not be red`)
}
