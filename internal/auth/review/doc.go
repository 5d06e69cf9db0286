// Package review answers the review APIs, which are created and never stored:
// authentication.k8s.io/v1 TokenReview and SelfSubjectReview (`kubectl auth whoami`), and
// authorization.k8s.io/v1 SelfSubjectAccessReview (`kubectl auth can-i`),
// SelfSubjectRulesReview (`kubectl auth can-i --list`), LocalSubjectAccessReview and
// SubjectAccessReview, with upstream's validation texts.
//
// Invariants: a review changes nothing; the self reviews answer for the user the request's
// context carries; access reviews decide through the configured auth.Authorizer and
// auth.RuleResolver, and with none configured system:masters is allowed everything and
// everyone else nothing; system:masters is always allowed, as upstream's privileged group.
package review
