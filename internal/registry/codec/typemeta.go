package codec

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
)

// A body's apiVersion and kind, answered as kube-apiserver's decoder answers them.
//
// Upstream reads them first (its JSON serializer's meta factory), so a body that is not a
// JSON object with string apiVersion and kind, or whose apiVersion is not a group/version,
// is "unrecognized". For a built-in kind an empty apiVersion or kind takes the resource's
// (and a group without a version, the resource's version when it is the resource's group);
// a version missing then is an error, as is a kind its scheme does not register for that
// version; a registered kind of another version is decoded as such and converted to the
// resource's internal type, which only the same kind (of the same internal group) can be,
// and then refused for its version. A custom resource takes no defaults: its kind must be
// given, its apiVersion must be the resource's, and a wrong kind is invalid (422).

// typeMeta is what upstream's meta factory reads of a body: this exact type, so that a body
// whose apiVersion or kind is not a string gets its error text byte for byte.
type typeMeta = struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

// schemeName is how upstream's errors name kube-apiserver's scheme.
const schemeName = "pkg/runtime/scheme.go:111"

// typeMetaError returns upstream's error for a body (data, as JSON; original, as sent)
// whose apiVersion and kind, after upstream's defaults, are not exactly the resource's (or
// a custom resource whose metadata is not an object); nil when they are.
func typeMetaError(res Kind, data, original []byte) error {
	gvk := res.GVK()
	var tm typeMeta
	if err := json.Unmarshal(data, &tm); err != nil {
		return unrecognized(gvk.Kind, fmt.Errorf("couldn't get version/kind; json parse error: %v", err), original)
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil {
		return unrecognized(gvk.Kind, err, original)
	}
	sent := gv.WithKind(tm.Kind)
	if res.GoType() == nil {
		return customTypeMetaError(gvk, sent, data, original)
	}
	actual := kindWithDefaults(sent, gvk)
	if actual == gvk {
		return nil
	}
	if actual.Version == "" {
		return cannotHandle(actual, gvk.Kind, fmt.Errorf("Object 'apiVersion' is missing in '%s'", original))
	}
	if actual.Version == "__internal" {
		// The internal version: the resource's own internal type decodes as itself; any
		// other is not converted to it.
		if internalKind(actual.GroupKind()) == internalKind(gvk.GroupKind()) {
			return versionMismatch(actual.GroupVersion(), gvk.GroupVersion())
		}
		if !kindKnown(actual.GroupKind()) {
			return cannotHandle(actual, gvk.Kind, fmt.Errorf("no kind %q is registered for the internal version of group %q in scheme %q", actual.Kind, actual.Group, schemeName))
		}
		return cannotHandle(actual, gvk.Kind, unknownConversion(internalTypeName(actual.GroupKind()), gvk))
	}
	obj, err := protobufScheme.New(actual)
	if err != nil {
		return cannotHandle(actual, gvk.Kind, fmt.Errorf("no kind %q is registered for version %q in scheme %q", actual.Kind, actual.GroupVersion().String(), schemeName))
	}
	// Decoded as its own kind first (whose errors come first), unless it holds quantity
	// texts that would take ParseQuantity minutes: those are not read.
	if checkQuantityTexts(schemeKind{actual, reflect.TypeOf(obj).Elem()}, data) == nil {
		if err := kjson.UnmarshalCaseSensitivePreserveInts(data, obj); err != nil {
			return cannotHandle(actual, gvk.Kind, err)
		}
	}
	if internalKind(actual.GroupKind()) != internalKind(gvk.GroupKind()) {
		return cannotHandle(actual, gvk.Kind, unknownConversion(reflect.TypeOf(obj).Elem().String(), gvk))
	}
	return versionMismatch(actual.GroupVersion(), gvk.GroupVersion())
}

// BuiltinKind describes the built-in kind gvk, whose objects are of obj's type, to the
// decoder: a subresource's kind (Scale, Eviction, Binding), which no Resource describes.
func BuiltinKind(gvk schema.GroupVersionKind, obj runtime.Object) Kind {
	return schemeKind{gvk, reflect.TypeOf(obj).Elem()}
}

// schemeKind is a kind of the scheme as a Kind (a subresource's; for checkQuantityTexts).
type schemeKind struct {
	gvk schema.GroupVersionKind
	typ reflect.Type
}

func (k schemeKind) GVK() schema.GroupVersionKind { return k.gvk }
func (k schemeKind) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: k.gvk.Group}
}
func (k schemeKind) New() runtime.Object  { return reflect.New(k.typ).Interface().(runtime.Object) }
func (k schemeKind) GoType() reflect.Type { return k.typ }
func (k schemeKind) CustomSchema() (*apiextensionsv1.JSONSchemaProps, bool) {
	return nil, false
}

// customTypeMetaError is typeMetaError for a custom resource: no defaults.
func customTypeMetaError(gvk, sent schema.GroupVersionKind, data, original []byte) error {
	if sent.Kind == "" {
		return unrecognized(gvk.Kind, fmt.Errorf("Object 'Kind' is missing in '%s'", original), original)
	}
	if sent.GroupVersion() != gvk.GroupVersion() {
		return versionMismatch(sent.GroupVersion(), gvk.GroupVersion())
	}
	if err := metadataError(data); err != nil {
		return cannotHandle(sent, gvk.Kind, err)
	}
	if sent.Kind != gvk.Kind {
		var m struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(data, &m)
		return customTypeMetaInvalid(gvk, sent.Kind, gvk.GroupVersion().String(), m.Metadata.Name)
	}
	return nil
}

// customTypeMetaInvalid is upstream's 422 for a custom resource whose kind or apiVersion
// (as sent) is not its version's: its validation's type meta check, which reports these
// alone (a patch's result of another version of the resource included).
func customTypeMetaInvalid(gvk schema.GroupVersionKind, kind, apiVersion, name string) error {
	var errs field.ErrorList
	if kind != gvk.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), kind, "must be "+gvk.Kind))
	}
	if want := gvk.GroupVersion().String(); apiVersion != want {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), apiVersion, "must be "+want))
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: gvk.Group, Kind: kind}, name, errs)
}

// sentAs reports whether a decoded object's apiVersion and kind are gvk's: exactly, or
// (for a built-in kind) left empty for upstream's defaults to make them gvk's. Without
// building an apiVersion string or reading the body again: what needs no typeMetaError.
func sentAs(obj runtime.Object, gvk schema.GroupVersionKind) bool {
	var av, kind string
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		av, kind = o.GetAPIVersion(), o.GetKind()
		if av == "" || kind == "" {
			return false
		}
	default:
		tm, ok := obj.GetObjectKind().(*metav1.TypeMeta)
		if !ok {
			return false
		}
		av, kind = tm.APIVersion, tm.Kind
		if kind == "" {
			kind = gvk.Kind
		}
		if av == "" {
			return kind == gvk.Kind
		}
	}
	if kind != gvk.Kind {
		return false
	}
	if gvk.Group == "" {
		return av == gvk.Version
	}
	g, v := len(gvk.Group), len(gvk.Version)
	return len(av) == g+1+v && av[:g] == gvk.Group && av[g] == '/' && av[g+1:] == gvk.Version
}

// metadataObject reports whether a custom resource's metadata is an object, null or absent.
func metadataObject(u *unstructured.Unstructured) bool {
	switch u.Object["metadata"].(type) {
	case map[string]interface{}, nil:
		return true
	}
	return false
}

// kindWithDefaults is upstream's defaulting of a body's group, version and kind: an empty
// kind, or an empty group and version, take the resource's; an empty version of the
// resource's group takes its version.
func kindWithDefaults(actual, def schema.GroupVersionKind) schema.GroupVersionKind {
	if actual.Kind == "" {
		actual.Kind = def.Kind
	}
	if actual.Version == "" && actual.Group == "" {
		actual.Group, actual.Version = def.Group, def.Version
	}
	if actual.Version == "" && actual.Group == def.Group {
		actual.Version = def.Version
	}
	return actual
}

// internalKind is the group and kind of the internal type a kind of a group decodes to:
// its own, except for the kinds groups moved (extensions' workloads to apps, its ingresses
// and network policies to networking, events.k8s.io's Event to the core group's, Scale to
// autoscaling's).
func internalKind(gk schema.GroupKind) schema.GroupKind {
	base := strings.TrimSuffix(gk.Kind, "List")
	switch gk.Group {
	case "extensions":
		switch base {
		case "Deployment", "DaemonSet", "ReplicaSet", "DeploymentRollback":
			gk.Group = "apps"
		case "Ingress", "NetworkPolicy":
			gk.Group = "networking.k8s.io"
		}
	case "events.k8s.io":
		if base == "Event" {
			gk.Group = ""
		}
	}
	if gk.Kind == "Scale" {
		gk.Group = "autoscaling"
	}
	return gk
}

// internalTypeName is how upstream's conversion errors print the internal type of a kind
// ("core.Pod", "apps.Deployment"): the internal package, named after the group.
func internalTypeName(gk schema.GroupKind) string {
	gk = internalKind(gk)
	pkg, _, _ := strings.Cut(gk.Group, ".")
	switch gk.Group {
	case "":
		pkg = "core"
	case "internal.apiserver.k8s.io":
		pkg = "apiserverinternal"
	}
	return pkg + "." + gk.Kind
}

// kindKnown reports whether any version of the kind's group registers it.
func kindKnown(gk schema.GroupKind) bool {
	for _, gv := range protobufScheme.PrioritizedVersionsForGroup(gk.Group) {
		if protobufScheme.Recognizes(gv.WithKind(gk.Kind)) {
			return true
		}
	}
	return false
}

// unknownConversion is upstream's error converting a decoded type (named as Go prints it)
// to the resource's internal type.
func unknownConversion(from string, to schema.GroupVersionKind) error {
	return fmt.Errorf("converting (%s) to (%s): unknown conversion", from, internalTypeName(to.GroupKind()))
}

// decodeError is a body the decoder refused: the answer to a create or an update, and the
// decoder's own error, which a patch's answer gives instead (DecodePatched).
type decodeError struct {
	*apierrors.StatusError
	cause error
}

// cannotHandle is upstream's 400 for a body it read as the kind and version actual and
// could not decode as the resource's kind.
func cannotHandle(actual schema.GroupVersionKind, kind string, err error) error {
	return &decodeError{apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", actual.Kind, actual.Version, kind, err)), err}
}

// versionMismatch is upstream's 400 for a body of another version than the resource's,
// which its decoder took (a check after decoding: not a decodeError).
func versionMismatch(sent, want schema.GroupVersion) error {
	return &versionMismatchError{apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", sent.String(), want.String()))}
}

// versionMismatchError is versionMismatch's error.
type versionMismatchError struct{ *apierrors.StatusError }

// isVersionMismatch reports versionMismatch's error.
func isVersionMismatch(err error) bool {
	_, ok := err.(*versionMismatchError)
	return ok
}

// unrecognized is upstream's 400 for a body whose kind it could not tell, with the start
// of the body as sent.
func unrecognized(kind string, err error, original []byte) error {
	return &decodeError{apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", kind, err, summarize(original, 30))), err}
}

// summarize is how upstream quotes a body in errors: up to max bytes, as text when it is a
// JSON object, else in hex.
func summarize(data []byte, max int) string {
	switch {
	case len(data) == 0:
		return "<empty>"
	case data[0] == '{':
		if len(data) > max {
			return string(data[:max]) + " ..."
		}
		return string(data)
	default:
		if len(data) > max {
			return hex.EncodeToString(data[:max]) + " ..."
		}
		return hex.EncodeToString(data)
	}
}

// metadataError is upstream's error for a custom resource whose metadata is not an object
// (nil when it is one, null, or absent): what decoding it as ObjectMeta says.
func metadataError(data []byte) error {
	var m struct {
		Metadata json.RawMessage `json:"metadata"`
	}
	if json.Unmarshal(data, &m) != nil || len(m.Metadata) == 0 || m.Metadata[0] == '{' || string(m.Metadata) == "null" {
		return nil
	}
	return json.Unmarshal(m.Metadata, &metav1.ObjectMeta{})
}
