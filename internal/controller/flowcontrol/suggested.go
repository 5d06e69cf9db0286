package flowcontrol

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The suggested configuration kube-apiserver v1.37 creates and keeps (k8s.io/apiserver
// pkg/apis/flowcontrol/bootstrap): kept like the mandatory objects, except that one whose
// apf.kubernetes.io/autoupdate-spec annotation is not "true" is left as its owner wrote it.

func annotated() map[string]string {
	return map[string]string{flowcontrolv1.AutoUpdateAnnotationKey: "true"}
}

func queued(name string, shares, lendable, queues, hand int32) flowcontrolv1.PriorityLevelConfiguration {
	return flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotated()},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: &shares, LendablePercent: &lendable,
			LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
				Queuing: &flowcontrolv1.QueuingConfiguration{Queues: queues, HandSize: hand, QueueLengthLimit: 50}}}}}
}

// SuggestedPriorityLevelConfigurations are upstream's suggested priority levels.
func SuggestedPriorityLevelConfigurations() []flowcontrolv1.PriorityLevelConfiguration {
	return []flowcontrolv1.PriorityLevelConfiguration{
		queued("system", 30, 33, 64, 6),
		queued("node-high", 40, 25, 64, 6),
		queued("leader-election", 10, 0, 16, 4),
		queued("workload-high", 40, 50, 128, 6),
		queued("workload-low", 100, 90, 128, 6),
		queued("global-default", 20, 50, 128, 6),
	}
}

func groupSubjects(names ...string) []flowcontrolv1.Subject {
	out := make([]flowcontrolv1.Subject, len(names))
	for i, n := range names {
		out[i] = flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: n}}
	}
	return out
}

func userSubjects(names ...string) []flowcontrolv1.Subject {
	out := make([]flowcontrolv1.Subject, len(names))
	for i, n := range names {
		out[i] = flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: n}}
	}
	return out
}

func kubeSystemServiceAccounts() []flowcontrolv1.Subject {
	return []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindServiceAccount, ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Name: "*", Namespace: metav1.NamespaceSystem}}}
}

func schema(name, pl string, precedence int32, dm flowcontrolv1.FlowDistinguisherMethodType, rules ...flowcontrolv1.PolicyRulesWithSubjects) flowcontrolv1.FlowSchema {
	fs := flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotated()}, Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: pl}, MatchingPrecedence: precedence, Rules: rules}}
	if dm != "" {
		fs.Spec.DistinguisherMethod = &flowcontrolv1.FlowDistinguisherMethod{Type: dm}
	}
	return fs
}

// everything is the rule of the schemas that match all of their subjects' requests.
func everything(subjects []flowcontrolv1.Subject) flowcontrolv1.PolicyRulesWithSubjects {
	return flowcontrolv1.PolicyRulesWithSubjects{Subjects: subjects,
		ResourceRules:    []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}, Namespaces: []string{"*"}, ClusterScope: true}},
		NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}}}
}

// SuggestedFlowSchemas are upstream's suggested flow schemas.
func SuggestedFlowSchemas() []flowcontrolv1.FlowSchema {
	const byUser, byNamespace = flowcontrolv1.FlowDistinguisherMethodByUserType, flowcontrolv1.FlowDistinguisherMethodByNamespaceType
	leases := func(namespaced bool) flowcontrolv1.ResourcePolicyRule {
		verbs := []string{"get", "create", "update"}
		if namespaced {
			verbs = []string{"*"}
		}
		return flowcontrolv1.ResourcePolicyRule{Verbs: verbs, APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Namespaces: []string{"*"}}
	}
	return []flowcontrolv1.FlowSchema{
		schema("system-nodes", "system", 500, byUser, everything(groupSubjects("system:nodes"))),
		schema("system-node-high", "node-high", 400, byUser, flowcontrolv1.PolicyRulesWithSubjects{Subjects: groupSubjects("system:nodes"),
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{
				{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"nodes", "nodes/status"}, Namespaces: []string{"*"}, ClusterScope: true},
				leases(true)}}),
		schema("probes", "exempt", 2, "", flowcontrolv1.PolicyRulesWithSubjects{Subjects: groupSubjects("system:unauthenticated", "system:authenticated"),
			NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/readyz", "/livez"}}}}),
		schema("system-leader-election", "leader-election", 100, byUser, flowcontrolv1.PolicyRulesWithSubjects{
			Subjects:      append(userSubjects("system:kube-controller-manager", "system:kube-scheduler"), kubeSystemServiceAccounts()...),
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{leases(false)}}),
		schema("kube-controller-manager", "workload-high", 800, byNamespace, everything(userSubjects("system:kube-controller-manager"))),
		schema("kube-scheduler", "workload-high", 800, byNamespace, everything(userSubjects("system:kube-scheduler"))),
		schema("kube-system-service-accounts", "workload-high", 900, byNamespace, everything(kubeSystemServiceAccounts())),
		schema("service-accounts", "workload-low", 9000, byUser, everything(groupSubjects("system:serviceaccounts"))),
		schema("global-default", "global-default", 9900, byUser, everything(groupSubjects("system:unauthenticated", "system:authenticated"))),
	}
}
