package auth

import (
	"context"
	"slices"
)

// Well-known user and group names, as upstream names them.
const (
	// SystemMasters is the group every authorizer allows everything.
	SystemMasters = "system:masters"
	// AllAuthenticated is the group of every authenticated user.
	AllAuthenticated = "system:authenticated"
	// AllUnauthenticated is the group of the anonymous user.
	AllUnauthenticated = "system:unauthenticated"
	// Anonymous is the user name of unauthenticated requests.
	Anonymous = "system:anonymous"
	// ServiceAccountPrefix starts the user name of a ServiceAccount:
	// system:serviceaccount:<namespace>:<name>.
	ServiceAccountPrefix = "system:serviceaccount:"
	// AllServiceAccounts is the group of every ServiceAccount; each is also in
	// system:serviceaccounts:<namespace>.
	AllServiceAccounts = "system:serviceaccounts"
	// Controllers is the name in-process controllers act as.
	Controllers = "system:quotad"
)

// User is who makes a request.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// InGroup reports whether u is in group g.
func (u User) InGroup(g string) bool { return slices.Contains(u.Groups, g) }

// SystemUser is the identity of quotad's own controllers: a member of system:masters.
func SystemUser() User {
	return User{Name: Controllers, Groups: []string{SystemMasters, AllAuthenticated}}
}

type userKey struct{}

// WithUser returns ctx carrying u.
func WithUser(ctx context.Context, u User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the User ctx carries; ok is false for a context the edge did not
// authenticate (in-process callers, which act as SystemUser).
func UserFrom(ctx context.Context) (User, bool) {
	u, ok := ctx.Value(userKey{}).(User)
	return u, ok
}
