// Package auth holds what authentication, authorization and audit share: the User a
// request is made by (carried in its context), the attributes an authorizer decides on, and
// RBAC's rule matching. It does no IO; internal/auth/authn turns credentials into a User,
// internal/auth/rbac decides from Roles and bindings kept in memory.
//
// Invariants: a request's context carries exactly one User once the HTTP edge has
// authenticated it; in-process controllers act as SystemUser; a User is read-only once in a
// context.
package auth
