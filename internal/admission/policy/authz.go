package policy

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"

	"github.com/quotad/quotad/internal/auth"
)

// The authorizer library (upstream's k8s.io/apiserver/pkg/cel/library/authz.go): the
// variables `authorizer` (checks as the requesting user) and `authorizer.requestResource`
// (a check of the request's own resource), e.g.
// `authorizer.group('apps').resource('deployments').namespace('x').check('delete').allowed()`
// or `authorizer.serviceAccount('ns', 'sa').path('/healthz').check('get').allowed()`.
var (
	authorizerType    = cel.OpaqueType("kubernetes.authorization.Authorizer")
	pathCheckType     = cel.OpaqueType("kubernetes.authorization.PathCheck")
	groupCheckType    = cel.OpaqueType("kubernetes.authorization.GroupCheck")
	resourceCheckType = cel.OpaqueType("kubernetes.authorization.ResourceCheck")
	decisionType      = cel.OpaqueType("kubernetes.authorization.Decision")
)

const (
	varAuthorizer      = "authorizer"
	varRequestResource = "authorizer.requestResource"
)

// authzVal is every value of the library: an authorizer, a path, group or resource check
// being built, or a decision.
type authzVal struct {
	t     *types.Type
	az    auth.Authorizer
	user  auth.User
	attrs auth.Attributes
	// A decision.
	allowed bool
	reason  string
	err     error
}

func (v authzVal) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion error from '%s' to '%v'", v.t, t)
}

func (v authzVal) ConvertToType(t ref.Type) ref.Val {
	if t == types.TypeType {
		return v.t
	}
	if t.TypeName() == v.t.TypeName() {
		return v
	}
	return types.NewErr("type conversion error from '%s' to '%s'", v.t, t)
}

func (v authzVal) Equal(o ref.Val) ref.Val { return types.MaybeNoSuchOverloadErr(o) }
func (v authzVal) Type() ref.Type          { return v.t }
func (v authzVal) Value() any              { return v }

// newAuthorizerVals returns the values of `authorizer` and `authorizer.requestResource`
// for a request; az nil means no authorizer is configured (every check has no opinion).
func newAuthorizerVals(az auth.Authorizer, u auth.User, gvr attributesResource) (authzVal, authzVal) {
	a := authzVal{t: authorizerType, az: az, user: u}
	r := a
	r.t = resourceCheckType
	r.attrs = auth.Attributes{ResourceRequest: true, APIGroup: gvr.group, Resource: gvr.resource, Subresource: gvr.subresource, Namespace: gvr.namespace, Name: gvr.name}
	return a, r
}

type attributesResource struct{ group, resource, subresource, namespace, name string }

func (v authzVal) decide(verb string) ref.Val {
	attrs := v.attrs
	attrs.Verb, attrs.User = verb, v.user
	if attrs.ResourceRequest {
		attrs.APIVersion = "*"
	}
	d := authzVal{t: decisionType}
	if v.az == nil {
		return d
	}
	dec, reason, err := v.az.Authorize(context.Background(), attrs)
	d.allowed, d.reason, d.err = dec == auth.Allow, reason, err
	return d
}

func authzArgs(kind *types.Type, recv, arg ref.Val) (authzVal, string, ref.Val) {
	v, ok := recv.(authzVal)
	if !ok || v.t != kind {
		return authzVal{}, "", types.MaybeNoSuchOverloadErr(recv)
	}
	s, ok := arg.(types.String)
	if !ok {
		return authzVal{}, "", types.MaybeNoSuchOverloadErr(arg)
	}
	return v, string(s), nil
}

func authzLibrary() []cel.EnvOption {
	bin := func(kind *types.Type, f func(v authzVal, s string) ref.Val) cel.OverloadOpt {
		return cel.BinaryBinding(func(l, r ref.Val) ref.Val {
			v, s, e := authzArgs(kind, l, r)
			if e != nil {
				return e
			}
			return f(v, s)
		})
	}
	setter := func(set func(a *auth.Attributes, s string)) func(v authzVal, s string) ref.Val {
		return func(v authzVal, s string) ref.Val {
			set(&v.attrs, s)
			return v
		}
	}
	decision := func(f func(d authzVal) ref.Val) cel.OverloadOpt {
		return cel.UnaryBinding(func(arg ref.Val) ref.Val {
			d, ok := arg.(authzVal)
			if !ok || d.t != decisionType {
				return types.MaybeNoSuchOverloadErr(arg)
			}
			return f(d)
		})
	}
	return []cel.EnvOption{
		cel.Variable(varAuthorizer, authorizerType),
		cel.Variable(varRequestResource, resourceCheckType),
		cel.Function("path", cel.MemberOverload("authorizer_path", []*cel.Type{authorizerType, cel.StringType}, pathCheckType,
			bin(authorizerType, func(v authzVal, s string) ref.Val {
				if strings.TrimSpace(s) == "" {
					return types.NewErr("path must not be empty")
				}
				v.t, v.attrs = pathCheckType, auth.Attributes{Path: s}
				return v
			}))),
		cel.Function("group", cel.MemberOverload("authorizer_group", []*cel.Type{authorizerType, cel.StringType}, groupCheckType,
			bin(authorizerType, func(v authzVal, s string) ref.Val {
				v.t, v.attrs = groupCheckType, auth.Attributes{ResourceRequest: true, APIGroup: s}
				return v
			}))),
		cel.Function("serviceAccount", cel.MemberOverload("authorizer_serviceaccount", []*cel.Type{authorizerType, cel.StringType, cel.StringType}, authorizerType,
			cel.FunctionBinding(func(args ...ref.Val) ref.Val {
				v, ns, e := authzArgs(authorizerType, args[0], args[1])
				if e != nil {
					return e
				}
				name, ok := args[2].(types.String)
				if !ok {
					return types.MaybeNoSuchOverloadErr(args[2])
				}
				if errs := apivalidation.ValidateServiceAccountName(string(name), false); len(errs) > 0 {
					return types.NewErr("Invalid service account name")
				}
				if errs := apivalidation.ValidateNamespaceName(ns, false); len(errs) > 0 {
					return types.NewErr("Invalid service account namespace")
				}
				v.user = auth.User{Name: auth.ServiceAccountPrefix + ns + ":" + string(name),
					Groups: []string{auth.AllServiceAccounts, auth.AllServiceAccounts + ":" + ns}}
				return v
			}))),
		cel.Function("resource", cel.MemberOverload("groupcheck_resource", []*cel.Type{groupCheckType, cel.StringType}, resourceCheckType,
			bin(groupCheckType, func(v authzVal, s string) ref.Val {
				if strings.TrimSpace(s) == "" {
					return types.NewErr("resource must not be empty")
				}
				v.t, v.attrs.Resource = resourceCheckType, s
				return v
			}))),
		cel.Function("subresource", cel.MemberOverload("resourcecheck_subresource", []*cel.Type{resourceCheckType, cel.StringType}, resourceCheckType,
			bin(resourceCheckType, setter(func(a *auth.Attributes, s string) { a.Subresource = s })))),
		cel.Function("namespace", cel.MemberOverload("resourcecheck_namespace", []*cel.Type{resourceCheckType, cel.StringType}, resourceCheckType,
			bin(resourceCheckType, setter(func(a *auth.Attributes, s string) { a.Namespace = s })))),
		cel.Function("name", cel.MemberOverload("resourcecheck_name", []*cel.Type{resourceCheckType, cel.StringType}, resourceCheckType,
			bin(resourceCheckType, setter(func(a *auth.Attributes, s string) { a.Name = s })))),
		cel.Function("check",
			cel.MemberOverload("pathcheck_check", []*cel.Type{pathCheckType, cel.StringType}, decisionType,
				bin(pathCheckType, func(v authzVal, verb string) ref.Val { return v.decide(verb) })),
			cel.MemberOverload("resourcecheck_check", []*cel.Type{resourceCheckType, cel.StringType}, decisionType,
				bin(resourceCheckType, func(v authzVal, verb string) ref.Val { return v.decide(verb) }))),
		cel.Function("errored", cel.MemberOverload("decision_errored", []*cel.Type{decisionType}, cel.BoolType,
			decision(func(d authzVal) ref.Val { return types.Bool(d.err != nil) }))),
		cel.Function("error", cel.MemberOverload("decision_error", []*cel.Type{decisionType}, cel.StringType,
			decision(func(d authzVal) ref.Val {
				if d.err == nil {
					return types.String("")
				}
				return types.String(d.err.Error())
			}))),
		cel.Function("allowed", cel.MemberOverload("decision_allowed", []*cel.Type{decisionType}, cel.BoolType,
			decision(func(d authzVal) ref.Val { return types.Bool(d.allowed) }))),
		cel.Function("reason", cel.MemberOverload("decision_reason", []*cel.Type{decisionType}, cel.StringType,
			decision(func(d authzVal) ref.Val { return types.String(d.reason) }))),
	}
}
