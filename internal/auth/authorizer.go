package auth

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// Attributes are what an authorizer decides on, as upstream's authorizer.Attributes: a
// resource request (verb on group/resource/subresource, namespace, name) or a non-resource
// request (verb on a path).
type Attributes struct {
	User            User
	Verb            string
	ResourceRequest bool
	// Resource requests.
	Namespace   string
	APIGroup    string
	APIVersion  string
	Resource    string
	Subresource string
	Name        string
	// Fields is the field selector of a list, watch or deletecollection (nil when it has
	// none, or one too long to parse before the request has a seat): the Node authorizer
	// allows a node's list of pods with spec.nodeName=<itself>.
	Fields fields.Selector
	// Path is the URL path of a non-resource request.
	Path string
}

// Decision is an authorizer's answer.
type Decision int

const (
	// NoOpinion: nothing allows the request (upstream's DecisionNoOpinion): it is forbidden
	// unless another authorizer allows it.
	NoOpinion Decision = iota
	// Allow: a rule allows the request.
	Allow
	// Deny: the request is refused outright.
	Deny
)

// Authorizer decides whether a request may proceed. reason is upstream's explanation that
// follows the forbidden message (empty when there is none).
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (d Decision, reason string, err error)
}

// RuleResolver lists the rules that apply to a user in a namespace ("" for cluster-wide
// rules only): what SelfSubjectRulesReview reports and what escalation checks compare a
// new Role's rules against. incomplete is true when some binding could not be resolved
// (such as one naming a missing role).
type RuleResolver interface {
	RulesFor(ctx context.Context, u User, namespace string) (rules []rbacv1.PolicyRule, incomplete bool, err error)
}
