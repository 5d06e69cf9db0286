// Package policy is quotad's evaluation of admissionregistration.k8s.io/v1 admission
// policies, upstream's k8s.io/apiserver/pkg/admission/plugin/policy written again: the
// ValidatingAdmissionPolicy plugin (Validating) and the MutatingAdmissionPolicy plugin
// (Mutating), sharing one matching and CEL core.
//
// For each request: the bindings and policies are read from watch-fed caches (the
// admission.Reader); each policy is compiled once per generation (compiledCache); policies
// by name whose matchConstraints select the request (rules with groups, versions,
// operations, resources and subresources, resourceNames, scope, exclusions, namespace and
// object selectors; match.go), then their bindings by name whose matchResources do, each
// with its params (paramRef by name or selector, parameterNotFoundAction), make the
// invocations; an invocation's matchConditions must all be true; then its validations (or
// mutations) run.
//
// CEL (cel.go): the variables object, oldObject, request, params, namespaceObject and
// variables (composited, each evaluated lazily at most once), all dynamically typed when
// expressions run: objects are their JSON form. Type checking for status.typeChecking
// (typecheck.go) types object and oldObject by the published OpenAPI schemas instead. The libraries are cel-go's strings, lists, sets, math, encoders,
// two-variable comprehensions and optionals, plus Kubernetes' quantity() and the regex
// find/findAll (library.go), and the authorizer library: `authorizer` checks as the
// requesting user (or authorizer.serviceAccount(ns, name)), `authorizer.requestResource` is
// the request's own resource (authz.go; quotad's RBAC answers).
//
// Invariants:
//   - Every expression is bounded: PerCallLimit cost units each, RuntimeCELCostBudget for a
//     whole invocation, and the request's context interrupts comprehensions, so a hostile
//     policy cannot stall the server.
//   - User-visible texts (refusals, warnings, audit annotations, errors of expressions) are
//     upstream's, pinned by golden tests.
//   - Objects read from the caches are never modified; a mutation builds a new object and
//     copies it into the request's object (which the registry holds), then defaults it.
//   - reinvocationPolicy IfNeeded is not honoured: each policy runs once, after the
//     built-in mutating plugins, which do not run again.
//   - A request no binding applies to costs two cache listings and nothing else.
package policy
