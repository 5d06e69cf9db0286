package integration

import (
	"context"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestFlowControlKinds walks the flowcontrol kinds through their typed clients, checks the
// mandatory objects exist from the start and come back when deleted, the Dangling
// condition, upstream's defaults and validation.
func TestFlowControlKinds(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	c := s.Client.FlowcontrolV1()
	ctx := ctxT(t)

	// 1. The mandatory objects exist before the first request.
	for _, name := range []string{"exempt", "catch-all"} {
		if _, err := c.PriorityLevelConfigurations().Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("priority level %s: %v", name, err)
		}
		if _, err := c.FlowSchemas().Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("flow schema %s: %v", name, err)
		}
	}

	rules := []flowcontrolv1.PolicyRulesWithSubjects{{
		Subjects:      []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "alice"}}},
		ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}, Namespaces: []string{"*"}}},
	}}
	limited := flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
		LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: &flowcontrolv1.QueuingConfiguration{}}}}
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"prioritylevelconfigurations", kindCase[*flowcontrolv1.PriorityLevelConfiguration, *flowcontrolv1.PriorityLevelConfigurationList]{
			client: c.PriorityLevelConfigurations(), obj: &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: meta("tenants"), Spec: *limited.DeepCopy()},
			spec: func(o *flowcontrolv1.PriorityLevelConfiguration) { o.Spec.Limited.NominalConcurrencyShares = int32p(7) },
			specOf: func(o *flowcontrolv1.PriorityLevelConfiguration) interface{} {
				return *o.Spec.Limited.NominalConcurrencyShares
			},
			status: func(o *flowcontrolv1.PriorityLevelConfiguration) {
				o.Status.Conditions = []flowcontrolv1.PriorityLevelConfigurationCondition{{Type: "Test", Status: "True"}}
			},
			statusOf:   func(o *flowcontrolv1.PriorityLevelConfiguration) interface{} { return len(o.Status.Conditions) },
			generation: true,
		}.run},
		{"flowschemas", kindCase[*flowcontrolv1.FlowSchema, *flowcontrolv1.FlowSchemaList]{
			client: c.FlowSchemas(), obj: &flowcontrolv1.FlowSchema{ObjectMeta: meta("alice"), Spec: flowcontrolv1.FlowSchemaSpec{
				PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "catch-all"}, Rules: rules}},
			spec:       func(o *flowcontrolv1.FlowSchema) { o.Spec.MatchingPrecedence = 500 },
			specOf:     func(o *flowcontrolv1.FlowSchema) interface{} { return o.Spec.MatchingPrecedence },
			generation: true,
		}.run},
	}
	for _, tc := range cases {
		t.Run(tc.name, tc.run)
	}

	// 2. Upstream's defaults.
	pl, err := c.PriorityLevelConfigurations().Create(ctx, &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: meta("defaults"), Spec: *limited.DeepCopy()}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l := pl.Spec.Limited
	if *l.NominalConcurrencyShares != 30 || *l.LendablePercent != 0 || l.LimitResponse.Queuing.Queues != 64 || l.LimitResponse.Queuing.HandSize != 8 || l.LimitResponse.Queuing.QueueLengthLimit != 50 {
		t.Errorf("priority level defaults: %+v %+v", *l, *l.LimitResponse.Queuing)
	}

	// 3. A schema referencing a missing level is Dangling; creating the level clears it.
	w, err := c.FlowSchemas().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=bob"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	fs, err := c.FlowSchemas().Create(ctx, &flowcontrolv1.FlowSchema{ObjectMeta: meta("bob"), Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "bobs"}, Rules: rules}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fs.Spec.MatchingPrecedence != 1000 {
		t.Errorf("matchingPrecedence default = %d", fs.Spec.MatchingPrecedence)
	}
	waitDangling(ctx, t, w, flowcontrolv1.ConditionTrue, `This FlowSchema references the PriorityLevelConfiguration object named "bobs" but there is no such object`)
	if _, err := c.PriorityLevelConfigurations().Create(ctx, &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: meta("bobs"), Spec: *limited.DeepCopy()}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDangling(ctx, t, w, flowcontrolv1.ConditionFalse, `This FlowSchema references the PriorityLevelConfiguration object named "bobs" and it exists`)

	// 4. A deleted mandatory object comes back; its spec is fixed.
	pw, err := c.PriorityLevelConfigurations().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=catch-all"})
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Stop()
	if err := c.PriorityLevelConfigurations().Delete(ctx, "catch-all", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for deleted := false; ; {
		ev, ok := <-pw.ResultChan()
		if !ok {
			t.Fatal("watch closed before catch-all came back")
		}
		if ev.Type == watch.Deleted {
			deleted = true
		}
		if ev.Type == watch.Added && deleted {
			break
		}
	}
	ca, err := c.PriorityLevelConfigurations().Get(ctx, "catch-all", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ca.Spec.Limited.NominalConcurrencyShares = int32p(50)
	if _, err := c.PriorityLevelConfigurations().Update(ctx, ca, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("catch-all spec change: err = %v, want Invalid", err)
	}

	// 5. Validation errors with upstream's text.
	_, err = c.FlowSchemas().Create(ctx, &flowcontrolv1.FlowSchema{ObjectMeta: meta("first"), Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "catch-all"}, MatchingPrecedence: 1, Rules: rules}}, metav1.CreateOptions{})
	expectInvalid(t, err, `FlowSchema.flowcontrol.apiserver.k8s.io "first" is invalid: spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1`)
	_, err = c.PriorityLevelConfigurations().Create(ctx, &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: meta("nolimit"), Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited}}, metav1.CreateOptions{})
	expectInvalid(t, err, `PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "nolimit" is invalid: spec.limited: Required value: must not be empty when type is Limited`)
}

func waitDangling(ctx context.Context, t *testing.T, w watch.Interface, status flowcontrolv1.ConditionStatus, msg string) {
	t.Helper()
	for {
		select {
		case <-ctx.Done():
			t.Fatalf("no Dangling=%s condition", status)
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch closed")
			}
			fs, _ := ev.Object.(*flowcontrolv1.FlowSchema)
			if fs == nil {
				continue
			}
			for _, c := range fs.Status.Conditions {
				if c.Type == flowcontrolv1.FlowSchemaConditionDangling && c.Status == status {
					if c.Message != msg {
						t.Errorf("Dangling message %q, want %q", c.Message, msg)
					}
					return
				}
			}
		}
	}
}

// TestFlowControlSuggested: upstream's suggested objects exist from the start, come back when
// deleted, and have their spec put back unless their autoupdate-spec annotation is "false".
func TestFlowControlSuggested(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	c := s.Client.FlowcontrolV1()
	ctx := ctxT(t)
	for _, name := range []string{"system", "node-high", "leader-election", "workload-high", "workload-low", "global-default"} {
		if _, err := c.PriorityLevelConfigurations().Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("priority level %s: %v", name, err)
		}
	}
	for _, name := range []string{"system-nodes", "system-node-high", "probes", "system-leader-election", "kube-controller-manager", "kube-scheduler",
		"kube-system-service-accounts", "service-accounts", "global-default"} {
		if _, err := c.FlowSchemas().Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("flow schema %s: %v", name, err)
		}
	}
	w, err := c.PriorityLevelConfigurations().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=workload-low"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	next := func() *flowcontrolv1.PriorityLevelConfiguration {
		t.Helper()
		for {
			select {
			case <-ctx.Done():
				t.Fatal("no event")
			case ev := <-w.ResultChan():
				if pl, ok := ev.Object.(*flowcontrolv1.PriorityLevelConfiguration); ok && ev.Type != watch.Deleted {
					return pl
				}
			}
		}
	}
	next() // the initial state
	// 1. A spec change is put back.
	pl, err := c.PriorityLevelConfigurations().Get(ctx, "workload-low", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pl.Spec.Limited.NominalConcurrencyShares = int32p(1)
	if _, err := c.PriorityLevelConfigurations().Update(ctx, pl, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for pl = next(); *pl.Spec.Limited.NominalConcurrencyShares != 100; pl = next() {
	}
	// 2. With autoupdate-spec "false" the owner's spec stays.
	pl.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] = "false"
	pl.Spec.Limited.NominalConcurrencyShares = int32p(2)
	if _, err := c.PriorityLevelConfigurations().Update(ctx, pl, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Another change makes the controller look again; still the owner's value.
	if _, err := c.PriorityLevelConfigurations().Create(ctx, &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: meta("poke"), Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	fw, err := c.FlowSchemas().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=global-default"})
	if err != nil {
		t.Fatal(err)
	}
	defer fw.Stop()
	// 3. A deleted suggested schema comes back.
	if err := c.FlowSchemas().Delete(ctx, "global-default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for deleted := false; ; {
		ev := <-fw.ResultChan()
		if ev.Type == watch.Deleted {
			deleted = true
		}
		if ev.Type == watch.Added && deleted {
			break
		}
		if ev.Type == watch.Error || ev.Object == nil {
			t.Fatal("watch ended before global-default came back")
		}
	}
	got, err := c.PriorityLevelConfigurations().Get(ctx, "workload-low", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := *got.Spec.Limited.NominalConcurrencyShares; n != 2 {
		t.Errorf("workload-low with autoupdate false: nominalConcurrencyShares %d, want the owner's 2", n)
	}
}
