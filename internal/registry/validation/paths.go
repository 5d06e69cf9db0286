package validation

import "k8s.io/apimachinery/pkg/util/validation/field"

// Field paths are most of validation's allocations, and nearly every request is valid: the
// checks a pod's creation runs on every field build their paths only for the errors that
// name them.

// placeholder is the path withPath checks under first.
var placeholder = field.NewPath("placeholder")

// under runs check at p's child name, a path built only for errors (withPath).
func under(p *field.Path, name string, check func(*field.Path) field.ErrorList) field.ErrorList {
	return withPath(func() *field.Path { return p.Child(name) }, check)
}

// withPath runs check under a shared placeholder path and, only when it finds errors, again
// under the path at builds: a valid value (nearly every request's) then costs no path, and
// building paths is most of validation's allocations. check must be pure.
func withPath(at func() *field.Path, check func(*field.Path) field.ErrorList) field.ErrorList {
	if len(check(placeholder)) == 0 {
		return nil
	}
	return check(at())
}
