package registry

import (
	"context"

	"github.com/quotad/quotad/internal/auth"
)

// requestUser is the user a write is made by, for admission: the one the HTTP edge put in
// the request's context, or the zero User for in-process writers.
func requestUser(ctx context.Context) auth.User {
	u, _ := auth.UserFrom(ctx)
	return u
}
