package policy_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/utils/ptr"

	"github.com/quotad/quotad/internal/admission"
	"github.com/quotad/quotad/internal/admission/policy"
	"github.com/quotad/quotad/internal/auth"
	"github.com/quotad/quotad/internal/quota/quotatest"
)

var _ = flag.Bool("update", false, "rewrite the golden files")

// store is a 2-method admission.Reader over objects by resource.
type store map[schema.GroupVersionResource][]runtime.Object

func (s store) Get(_ context.Context, gvr schema.GroupVersionResource, ns, name string) (runtime.Object, error) {
	for _, o := range s[gvr] {
		m, _ := meta.Accessor(o)
		if m.GetNamespace() == ns && m.GetName() == name {
			return o, nil
		}
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func (s store) List(_ context.Context, gvr schema.GroupVersionResource, ns string) ([]runtime.Object, error) {
	var out []runtime.Object
	for _, o := range s[gvr] {
		if m, _ := meta.Accessor(o); ns == "" || m.GetNamespace() == ns {
			out = append(out, o)
		}
	}
	return out, nil
}

var (
	vapGVR  = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies")
	vapbGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("validatingadmissionpolicybindings")
	mapGVR  = admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicies")
	mapbGVR = admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingadmissionpolicybindings")
	nsGVR   = corev1.SchemeGroupVersion.WithResource("namespaces")
	cmGVR   = corev1.SchemeGroupVersion.WithResource("configmaps")
	depGVR  = appsv1.SchemeGroupVersion.WithResource("deployments")
)

func resourceFor(gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool, bool) {
	if gvk == corev1.SchemeGroupVersion.WithKind("ConfigMap") {
		return cmGVR, true, true
	}
	return schema.GroupVersionResource{}, false, false
}

func deployment(name string, replicas int32, cpu string) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"app": "web"}},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "nginx"}},
		}}},
	}
	if cpu != "" {
		d.Spec.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
	return d
}

func createAttrs(obj runtime.Object) *admission.Attributes {
	m, _ := meta.Accessor(obj)
	return &admission.Attributes{Operation: admission.Create, Resource: depGVR, Kind: appsv1.SchemeGroupVersion.WithKind("Deployment"),
		Namespace: m.GetNamespace(), Name: m.GetName(), Object: obj, User: auth.User{Name: "alice", Groups: []string{"devs"}}}
}

func deploymentRules() *admissionregistrationv1.MatchResources {
	return &admissionregistrationv1.MatchResources{
		NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
		ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
		}}},
	}
}

// TestValidatingTexts pins the refusals and warnings of ValidatingAdmissionPolicies, one
// request each, in testdata/validating.golden (go test -update rewrites it).
func TestValidatingTexts(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Labels: map[string]string{"env": "prod"}}}
	limits := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "limits", Namespace: "ns"}, Data: map[string]string{"maxReplicas": "3"}}
	ten := "[0,1,2,3,4,5,6,7,8,9]"
	hostile := ten + ".all(a, " + ten + ".all(b, " + ten + ".all(c, " + ten + ".all(d, " + ten + ".all(e, " + ten + ".all(f, a+b+c+d+e+f >= 0))))))"
	tests := []struct {
		name     string
		spec     admissionregistrationv1.ValidatingAdmissionPolicySpec
		binding  admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec
		obj      *appsv1.Deployment
		objectNS string
	}{
		{name: "message", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= 3", Message: "at most 3 replicas"}}}},
		{name: "messageExpression", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= 3", MessageExpression: "'wants at most 3 replicas, got ' + string(object.spec.replicas)"}}}},
		{name: "messageExpression failing falls back to the expression", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{Expression: "  object.spec.replicas <= 3 ", MessageExpression: "'got ' + object.spec.replicas"}}}},
		{name: "reason Forbidden", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= 3", Reason: ptr.To(metav1.StatusReasonForbidden)}}}},
		{name: "reason RequestEntityTooLarge", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= 3", Reason: ptr.To(metav1.StatusReasonRequestEntityTooLarge)}}}},
		{name: "runtime error fails closed", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.paused == true"}}}},
		{name: "has() guards a missing field", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{Expression: "!has(object.spec.paused) || object.spec.paused == false"}}}},
		{name: "runtime error ignored", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Ignore),
			Validations:   []admissionregistrationv1.Validation{{Expression: "object.spec.paused == true"}}}},
		{name: "compile error", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas >"}}}},
		{name: "not a bool", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{Expression: "'yes'"}}}},
		{name: "request and namespaceObject", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{
				Expression:        "request.operation == 'UPDATE'",
				MessageExpression: "request.userInfo.username + ' ' + request.operation + ' ' + request.kind.kind + ' ' + request.resource.group + ' ' + request.namespace + '/' + request.name + ' in ' + namespaceObject.metadata.labels.env + ' dryRun=' + string(request.dryRun)",
			}}}},
		{name: "params by name", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			ParamKind:   &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= int(params.data.maxReplicas)", MessageExpression: "'at most ' + params.data.maxReplicas + ' replicas (' + params.kind + ')'"}}},
			binding: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{ParamRef: &admissionregistrationv1.ParamRef{Name: "limits", ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)}}},
		{name: "params missing, Deny", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			ParamKind:   &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			Validations: []admissionregistrationv1.Validation{{Expression: "true"}}},
			binding: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{ParamRef: &admissionregistrationv1.ParamRef{Name: "absent", ParameterNotFoundAction: ptr.To(admissionregistrationv1.DenyAction)}}},
		{name: "params missing, Allow", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			ParamKind:   &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			Validations: []admissionregistrationv1.Validation{{Expression: "false"}}},
			binding: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{ParamRef: &admissionregistrationv1.ParamRef{Name: "absent", ParameterNotFoundAction: ptr.To(admissionregistrationv1.AllowAction)}}},
		{name: "param kind unknown", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			ParamKind:   &admissionregistrationv1.ParamKind{APIVersion: "example.com/v1", Kind: "Nope"},
			Validations: []admissionregistrationv1.Validation{{Expression: "true"}}},
			binding: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{ParamRef: &admissionregistrationv1.ParamRef{Name: "x"}}},
		{name: "matchConditions false", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "big", Expression: "object.spec.replicas > 100"}},
			Validations:     []admissionregistrationv1.Validation{{Expression: "false"}}}},
		{name: "matchConditions error", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "bad", Expression: "object.nope"}},
			Validations:     []admissionregistrationv1.Validation{{Expression: "false"}}}},
		{name: "variables are lazy", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Variables:   []admissionregistrationv1.Variable{{Name: "broken", Expression: "object.nope"}, {Name: "r", Expression: "object.spec.replicas"}, {Name: "odd", Expression: "variables.r % 2 == 1"}},
			Validations: []admissionregistrationv1.Validation{{Expression: "variables.odd && variables.r < 3"}}}},
		{name: "a failing variable", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Variables:   []admissionregistrationv1.Variable{{Name: "broken", Expression: "object.nope"}},
			Validations: []admissionregistrationv1.Validation{{Expression: "variables.broken == 1"}}}},
		{name: "a quantity beyond the bound is an error, not a stall", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{Expression: "quantity('1e1000000000').isGreaterThan(quantity('1'))"}}}},
		{name: "isQuantity of a text beyond the bound", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{Expression: "isQuantity('1e1000000000')", Message: "not a quantity here"}}}},
		{name: "quantity add and sub", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{
				Expression: "!(quantity('1').add(quantity('500m')).sub(1).compareTo(quantity('500m')) == 0 && quantity('2Gi').add(1).sub(quantity('2Gi')).asInteger() == 1)",
				Message:    "add and sub computed right (a wrong result would allow)",
			}}}},
		{name: "quantity", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{
				Expression: "object.spec.template.spec.containers.all(c, !has(c.resources.limits) || quantity(c.resources.limits.cpu).isLessThan(quantity('2')))",
				Message:    "cpu limits must stay under 2"}}},
			obj: deployment("web", 5, "2500m")},
		{name: "strings and lists libraries", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{
				Expression: "object.metadata.name.upperAscii() == 'WEB' && object.spec.template.spec.containers.map(c, c.image).join(',') == 'nginx' && [3,1,2].sort() == [1,2,3] && sets.contains([1,2], [1]) && 'abc123'.find('[0-9]+') == '123'"}}}},
		{name: "Warn", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= 3", Message: "at most 3 replicas"}}},
			binding: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn}}},
		{name: "Warn and Deny", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{Expression: "object.spec.replicas <= 3", Message: "at most 3 replicas"}}},
			binding: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn, admissionregistrationv1.Deny}}},
		{name: "cost limit", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{Expression: hostile}}}},
		{name: "namespace selector not matching", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{Expression: "false"}}},
			binding: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{MatchResources: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}}}},
		{name: "object selector not matching", spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Validations: []admissionregistrationv1.Validation{{Expression: "false"}}},
			binding: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{MatchResources: &admissionregistrationv1.MatchResources{
				ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}},
	}
	var golden strings.Builder
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.spec
			if spec.MatchConstraints == nil {
				spec.MatchConstraints = deploymentRules()
			}
			b := tt.binding
			b.PolicyName = "p"
			if b.ValidationActions == nil {
				b.ValidationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}
			}
			s := store{
				nsGVR:   {ns},
				cmGVR:   {limits},
				vapGVR:  {&admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "1", Generation: 1}, Spec: spec}},
				vapbGVR: {&admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: b}},
			}
			v, err := policy.NewValidating(s, resourceFor)
			if err != nil {
				t.Fatal(err)
			}
			obj := tt.obj
			if obj == nil {
				obj = deployment("web", 5, "")
			}
			var warnings []string
			ctx := admission.WithWarnings(context.Background(), func(m string) { warnings = append(warnings, m) })
			a := createAttrs(obj)
			err = v.Validate(ctx, a)
			fmt.Fprintf(&golden, "== %s\n%s", tt.name, describe(err))
			for _, w := range warnings {
				fmt.Fprintf(&golden, "warning: %s\n", w)
			}
		})
	}
	compareGolden(t, "validating.golden", golden.String())
}

// describe renders an admission error as a client sees it.
func describe(err error) string {
	if err == nil {
		return "allowed\n"
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return "error: " + err.Error() + "\n"
	}
	st := status.Status()
	out := fmt.Sprintf("%d %s: %s\n", st.Code, st.Reason, st.Message)
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			out += "  cause: " + c.Message + "\n"
		}
	}
	return out
}

func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	quotatest.GoldenFile(t, name, got)
}

// TestMutatingJSONPatch: a JSON patch mutation changes the request's typed object in place
// (defaulted afterwards); a failing one refuses with upstream's text, or is ignored under
// failurePolicy Ignore; a policy whose matchConditions are false leaves the object alone.
func TestMutatingJSONPatch(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}
	tests := []struct {
		name      string
		expr      string
		failure   admissionregistrationv1.FailurePolicyType
		condition string
		want      string // the replicas and labels after, or the error
	}{
		{name: "replace and add", expr: `[JSONPatch{op: "replace", path: "/spec/replicas", value: object.spec.replicas * 2}, JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("example.com/x"), value: "y"}]`,
			want: "replicas 10, labels map[app:web example.com/x:y], defaulted true"},
		{name: "bad path", expr: `[JSONPatch{op: "remove", path: "/spec/nope"}]`,
			want: "403 Invalid: policy 'p' with binding 'b' denied request: JSON Patch: error in remove for path: '/spec/nope': Unable to remove nonexistent key: nope: missing value\n  cause: policy 'p' with binding 'b' denied request: JSON Patch: error in remove for path: '/spec/nope': Unable to remove nonexistent key: nope: missing value\n"},
		{name: "failed test leaves the object", expr: `[JSONPatch{op: "test", path: "/spec/replicas", value: 1}, JSONPatch{op: "replace", path: "/spec/replicas", value: 1}]`,
			want: "replicas 5, labels map[app:web], defaulted true"},
		{name: "bad path ignored", expr: `[JSONPatch{op: "remove", path: "/spec/nope"}]`, failure: admissionregistrationv1.Ignore,
			want: "replicas 5, labels map[app:web], defaulted false"},
		{name: "matchConditions false", expr: `[JSONPatch{op: "replace", path: "/spec/replicas", value: 1}]`, condition: "object.spec.replicas > 100",
			want: "replicas 5, labels map[app:web], defaulted false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := admissionregistrationv1.MutatingAdmissionPolicySpec{
				MatchConstraints:   deploymentRules(),
				ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
				Mutations: []admissionregistrationv1.Mutation{{PatchType: admissionregistrationv1.PatchTypeJSONPatch,
					JSONPatch: &admissionregistrationv1.JSONPatch{Expression: tt.expr}}},
			}
			if tt.failure != "" {
				spec.FailurePolicy = &tt.failure
			}
			if tt.condition != "" {
				spec.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "c", Expression: tt.condition}}
			}
			s := store{
				nsGVR:   {ns},
				mapGVR:  {&admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "1", Generation: 1}, Spec: spec}},
				mapbGVR: {&admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "p"}}},
			}
			defaulted := false
			m, err := policy.NewMutating(s, resourceFor, nil, func(runtime.Object) { defaulted = true })
			if err != nil {
				t.Fatal(err)
			}
			d := deployment("web", 5, "")
			err = m.Admit(context.Background(), createAttrs(d))
			got := fmt.Sprintf("replicas %d, labels %v, defaulted %v", *d.Spec.Replicas, d.Labels, defaulted)
			if err != nil {
				got = describe(err)
			}
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// fakeAuthz allows alice to create and delete deployments in ns, and nothing else.
type fakeAuthz struct{ seen *[]auth.Attributes }

func (f fakeAuthz) Authorize(_ context.Context, a auth.Attributes) (auth.Decision, string, error) {
	*f.seen = append(*f.seen, a)
	if a.User.Name == "alice" && a.ResourceRequest && a.APIGroup == "apps" && a.Resource == "deployments" && a.Namespace == "ns" && (a.Verb == "create" || a.Verb == "delete") {
		return auth.Allow, "", nil
	}
	return auth.NoOpinion, "no rule", nil
}

// TestAuthorizer: the authorizer variable checks as the requesting user (or a service
// account), authorizer.requestResource is the request's own resource.
func TestAuthorizer(t *testing.T) {
	exprs := []string{
		"authorizer.group('apps').resource('deployments').namespace('ns').check('delete').allowed()",
		"authorizer.requestResource.check('create').allowed()",
		"!authorizer.requestResource.check('update').allowed() && authorizer.requestResource.check('update').reason() == 'no rule'",
		"!authorizer.serviceAccount('ns', 'sa').group('apps').resource('deployments').namespace('ns').check('delete').allowed()",
		"!authorizer.path('/healthz').check('get').errored()",
	}
	for _, expr := range exprs {
		t.Run(expr, func(t *testing.T) {
			spec := admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: deploymentRules(),
				Validations: []admissionregistrationv1.Validation{{Expression: expr}}}
			s := store{
				nsGVR:   {&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}},
				vapGVR:  {&admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: spec}},
				vapbGVR: {&admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}}},
			}
			v, err := policy.NewValidating(s, resourceFor)
			if err != nil {
				t.Fatal(err)
			}
			var seen []auth.Attributes
			v.Authorizer = fakeAuthz{&seen}
			if err := v.Validate(context.Background(), createAttrs(deployment("web", 1, ""))); err != nil {
				t.Errorf("refused: %v (checks %+v)", err, seen)
			}
		})
	}
}

// TestMutatingApplyConfiguration: an apply configuration merges into the request's object
// (the rest of it kept); an Object whose type names do not follow its field path, or an
// expression that is not an Object, refuses with upstream's texts.
func TestMutatingApplyConfiguration(t *testing.T) {
	tests := []struct {
		name, expr, want string
	}{
		{name: "merge", expr: `Object{spec: Object.spec{replicas: object.spec.replicas + 1}, metadata: Object.metadata{annotations: {"a": "b"}}}`,
			want: "replicas 6, annotations map[a:b], image nginx"},
		{name: "type names follow the field path", expr: `Object{spec: Object.metadata{replicas: 3}}`,
			want: "403 Invalid: policy 'p' with binding 'b' denied request: type mismatch: unexpected type name \"Object.metadata\", expected \"Object.spec\", which matches field name path from root Object type\n  cause: policy 'p' with binding 'b' denied request: type mismatch: unexpected type name \"Object.metadata\", expected \"Object.spec\", which matches field name path from root Object type\n"},
		{name: "not an Object", expr: `'x'`,
			want: "403 Invalid: policy 'p' with binding 'b' denied request: must evaluate to Object but got string\n  cause: policy 'p' with binding 'b' denied request: must evaluate to Object but got string\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := admissionregistrationv1.MutatingAdmissionPolicySpec{
				MatchConstraints:   deploymentRules(),
				ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
				Mutations: []admissionregistrationv1.Mutation{{PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
					ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{Expression: tt.expr}}},
			}
			s := store{
				nsGVR:   {&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}},
				mapGVR:  {&admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: spec}},
				mapbGVR: {&admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "p"}}},
			}
			m, err := policy.NewMutating(s, resourceFor, func() (managedfields.TypeConverter, error) { return managedfields.NewDeducedTypeConverter(), nil }, nil)
			if err != nil {
				t.Fatal(err)
			}
			d := deployment("web", 5, "")
			err = m.Admit(context.Background(), createAttrs(d))
			got := fmt.Sprintf("replicas %d, annotations %v, image %s", *d.Spec.Replicas, d.Annotations, d.Spec.Template.Spec.Containers[0].Image)
			if err != nil {
				got = describe(err)
			}
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// BenchmarkValidate: a create no binding applies to, and one judged by a policy of two
// validations (the conformance spec's).
func BenchmarkValidate(b *testing.B) {
	spec := admissionregistrationv1.ValidatingAdmissionPolicySpec{MatchConstraints: deploymentRules(), Validations: []admissionregistrationv1.Validation{
		{Expression: "object.spec.replicas > 1", MessageExpression: "'wants replicas > 1, got ' + string(object.spec.replicas)"},
		{Expression: "namespaceObject.metadata.name == 'ns'"}}}
	for _, bound := range []bool{false, true} {
		s := store{nsGVR: {&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}},
			vapGVR: {&admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: spec}}}
		if bound {
			s[vapbGVR] = []runtime.Object{&admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"},
				Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}}}
		}
		v, err := policy.NewValidating(s, resourceFor)
		if err != nil {
			b.Fatal(err)
		}
		a := createAttrs(deployment("web", 3, "100m"))
		b.Run(fmt.Sprintf("bound=%v", bound), func(b *testing.B) {
			for b.Loop() {
				if err := v.Validate(context.Background(), a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
