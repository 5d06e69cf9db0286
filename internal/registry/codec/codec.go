package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// FieldValidation is the request's fieldValidation directive.
type FieldValidation string

// The three directives of kube-apiserver.
const (
	FieldValidationIgnore FieldValidation = "Ignore"
	FieldValidationWarn   FieldValidation = "Warn"
	FieldValidationStrict FieldValidation = "Strict"
)

// Decoded is a request body turned into an object.
type Decoded struct {
	Object runtime.Object
	// Warnings are the unknown or duplicate fields reported under fieldValidation=Warn.
	Warnings []string
}

// isYAML reports whether a body is read as YAML: by its media type, or because it is not
// a JSON object or array.
func isYAML(body []byte, contentType string) bool {
	ct, _, _ := strings.Cut(contentType, ";")
	ct = strings.ToLower(strings.TrimSpace(ct))
	trimmed := bytes.TrimSpace(body)
	return ct == "application/yaml" || (len(trimmed) > 0 && trimmed[0] != '{' && trimmed[0] != '[')
}

// ToJSON converts a YAML or JSON request body to JSON. It reports a BadRequest on
// malformed input. Duplicate YAML keys are not errors here (the last one wins, as
// upstream's non-strict YAML decoding): DecodeBody reports them under fieldValidation.
func ToJSON(body []byte, contentType string) ([]byte, error) {
	if isYAML(body, contentType) {
		j, err := yaml.YAMLToJSON(body)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return j, nil
	}
	return body, nil
}

// DecodeBody converts a JSON or YAML request body and decodes it as Decode does; duplicate
// YAML keys are strict decoding errors, as upstream's YAML serializer reports them.
func DecodeBody(res Kind, body []byte, contentType string, fv FieldValidation) (*Decoded, error) {
	return decodeBody(res, body, contentType, fv, asBody)
}

// DecodeBodyAnyVersion is DecodeBody taking a body of any version of the kind (upstream's
// eviction subresource takes policy/v1beta1's Eviction as policy/v1's).
func DecodeBodyAnyVersion(res Kind, body []byte, contentType string, fv FieldValidation) (*Decoded, error) {
	return decodeBody(res, body, contentType, fv, anyVersion)
}

// decodeBody is DecodeBody with what decode checks of the type meta.
func decodeBody(res Kind, body []byte, contentType string, fv FieldValidation, mode decodeMode) (*Decoded, error) {
	j, err := ToJSON(body, contentType)
	if err != nil {
		return nil, unrecognized(res.GVK().Kind, err, body)
	}
	var extra []error
	if isYAML(body, contentType) && fv != FieldValidationIgnore {
		if _, err := yaml.YAMLToJSONStrict(body); err != nil {
			extra = append(extra, err)
		}
	}
	return decode(res, j, body, fv, extra, mode)
}

// Decode decodes a JSON request body into an object of res, checking apiVersion and kind
// against the resource and applying the fieldValidation directive.
func Decode(res Kind, body []byte, fv FieldValidation) (*Decoded, error) {
	return decode(res, body, body, fv, nil, asBody)
}

// PatchKind is how a patch's result is decoded.
type PatchKind int

const (
	// JSONPatched is the result of a JSON patch or a JSON merge patch: as upstream decodes
	// it, a result it cannot decode is the patch's invalid value (422, with the decoder's
	// own error), and one of another version of the resource's kind is taken as the
	// resource's.
	JSONPatched PatchKind = iota + 1
	// StrategicPatched is the result of a strategic merge patch, whose apiVersion and kind
	// upstream does not read (the patch is applied to the object's fields).
	StrategicPatched
)

// DecodePatched decodes a patch's result (JSON) as an object of res, as upstream's patch
// handler does for the kind of patch.
func DecodePatched(res Kind, patched []byte, fv FieldValidation, kind PatchKind) (*Decoded, error) {
	d, err := decode(res, patched, patched, fv, nil, decodeMode(kind))
	var de *decodeError
	if kind == JSONPatched && errors.As(err, &de) {
		return nil, apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), string(patched), de.cause.Error())})
	}
	return d, err
}

// decodeMode is what decode checks of a body's apiVersion and kind.
type decodeMode int

const (
	// asBody: a create's or an update's body (typeMetaError).
	asBody decodeMode = 0
	// anyVersion: as asBody, except that another version of the resource's kind is the
	// resource's (a JSON or merge patch's result).
	anyVersion = decodeMode(JSONPatched)
	// asStrategicPatched: not read.
	asStrategicPatched = decodeMode(StrategicPatched)
)

// decode is Decode with the body as sent (original: what errors quote), strict errors
// found before JSON decoding (YAML duplicates), and what it checks of the type meta.
func decode(res Kind, body, original []byte, fv FieldValidation, strictErrs []error, mode decodeMode) (*Decoded, error) {
	gvk := res.GVK()
	// 0. Quantity texts ParseQuantity would take minutes on are refused first (422).
	if err := checkQuantityTexts(res, body); err != nil {
		return nil, err
	}
	// 1. One strict decode; the precise errors, in upstream's order, only when it fails.
	obj := res.New()
	var jsonErrs []error
	var err error
	u, custom := obj.(*unstructured.Unstructured)
	if custom {
		m := map[string]interface{}{}
		jsonErrs, err = kjson.UnmarshalStrict(body, &m, kjson.DisallowDuplicateFields)
		u.Object = m
	} else {
		jsonErrs, err = kjson.UnmarshalStrict(body, obj, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	}
	if err != nil {
		if mode != asStrategicPatched {
			if terr := typeMetaError(res, body, original); terr != nil && !(mode == anyVersion && isVersionMismatch(terr)) {
				return nil, terr
			}
		}
		return nil, cannotHandle(gvk, gvk.Kind, err)
	}
	// 2. apiVersion and kind, as sent, must be the resource's (after upstream's defaults);
	// a custom resource's metadata must be an object.
	if mode != asStrategicPatched && (!sentAs(obj, gvk) || custom && !metadataObject(u)) {
		terr := typeMetaError(res, body, original)
		switch {
		case terr == nil:
		case mode == anyVersion && isVersionMismatch(terr) && custom:
			return nil, customTypeMetaInvalid(gvk, u.GetKind(), u.GetAPIVersion(), u.GetName())
		case mode == anyVersion && isVersionMismatch(terr):
		default:
			return nil, terr
		}
	}
	if custom {
		s, preserveUnknown := res.CustomSchema()
		for _, p := range pruneCustom(s, u.Object) {
			jsonErrs = append(jsonErrs, fmt.Errorf("unknown field %q", p))
		}
		if s != nil && !preserveUnknown {
			pruneCustomNulls(u.Object, s)
		}
		defaultCustom(s, u)
	}
	strictErrs = append(strictErrs, jsonErrs...)
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	d := &Decoded{Object: obj}
	if len(strictErrs) > 0 {
		msgs := make([]string, 0, len(strictErrs))
		for _, e := range strictErrs {
			msgs = append(msgs, e.Error())
		}
		switch fv {
		case FieldValidationStrict:
			return nil, apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: strict decoding error: %s", gvk.Kind, gvk.Version, gvk.Kind, strings.Join(msgs, ", ")))
		case FieldValidationWarn:
			d.Warnings = msgs
		}
	}
	return d, nil
}

// Encode returns the JSON of an object with its apiVersion and kind set.
func Encode(obj runtime.Object, gvk schema.GroupVersionKind) ([]byte, error) {
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return json.Marshal(obj)
}

// EncodeForStorage returns the stored form: the object without resourceVersion, which is the
// key's mod revision and is set on every read.
func EncodeForStorage(obj runtime.Object, gvk schema.GroupVersionKind) ([]byte, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	rv := m.GetResourceVersion()
	m.SetResourceVersion("")
	b, err := Encode(obj, gvk)
	m.SetResourceVersion(rv)
	return b, err
}

// objectMetaFields are the JSON names of metav1.ObjectMeta's fields.
var objectMetaFields = func() map[string]bool {
	out := map[string]bool{}
	t := reflect.TypeOf(metav1.ObjectMeta{})
	for i := 0; i < t.NumField(); i++ {
		if name := strings.Split(t.Field(i).Tag.Get("json"), ",")[0]; name != "" && name != "-" {
			out[name] = true
		}
	}
	return out
}()

// pruneCustom drops the fields of a custom resource that its version's structural schema s
// does not specify (unknown metadata fields included), as kube-apiserver prunes them, and
// returns their paths sorted. A version without a schema (s nil) prunes nothing.
func pruneCustom(s *apiextensionsv1.JSONSchemaProps, obj map[string]interface{}) []string {
	if s == nil {
		return nil
	}
	var pruned []string
	pruneObject(obj, s, "", true, &pruned)
	sort.Strings(pruned)
	return pruned
}

// pruneValue prunes one value against its schema.
func pruneValue(v interface{}, s *apiextensionsv1.JSONSchemaProps, path string, pruned *[]string) {
	switch x := v.(type) {
	case map[string]interface{}:
		pruneObject(x, s, path, s.XEmbeddedResource, pruned)
	case []interface{}:
		if s.Items == nil || s.Items.Schema == nil {
			return
		}
		for i, item := range x {
			pruneValue(item, s.Items.Schema, fmt.Sprintf("%s[%d]", path, i), pruned)
		}
	}
}

// pruneObject prunes the fields of an object; embedded (and the root) keep apiVersion,
// kind and the ObjectMeta fields of metadata.
func pruneObject(m map[string]interface{}, s *apiextensionsv1.JSONSchemaProps, path string, embedded bool, pruned *[]string) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	for k, v := range m {
		if embedded {
			switch k {
			case "apiVersion", "kind":
				continue
			case "metadata":
				if md, ok := v.(map[string]interface{}); ok {
					for f := range md {
						if !objectMetaFields[f] {
							delete(md, f)
							*pruned = append(*pruned, join("metadata."+f))
						}
					}
				}
				continue
			}
		}
		if prop, ok := s.Properties[k]; ok {
			pruneValue(v, &prop, join(k), pruned)
			continue
		}
		if ap := s.AdditionalProperties; ap != nil && (ap.Allows || ap.Schema != nil) {
			if ap.Schema != nil {
				pruneValue(v, ap.Schema, join(k), pruned)
			}
			continue
		}
		if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
			continue
		}
		delete(m, k)
		*pruned = append(*pruned, join(k))
	}
}

// VersionedJSON is stored JSON (which carries no resourceVersion) answered with
// metadata.resourceVersion set: written in pieces around the stored bytes, not copied.
// Stored objects begin with kind and apiVersion, then "metadata":{, so the first
// occurrence of that text is the object's own metadata.
type VersionedJSON struct {
	stored []byte
	// at is where field goes: just inside the metadata's brace. field is the text spliced
	// in: the resourceVersion, then a comma when more metadata follows.
	at    int
	field []byte
}

// NewVersionedJSON returns stored with rv to splice in; false when stored is not in the
// form EncodeForStorage writes.
func NewVersionedJSON(stored []byte, rv string) (VersionedJSON, bool) {
	const marker = `"metadata":{`
	i := bytes.Index(stored, []byte(marker))
	if i < 0 || len(stored) < i+len(marker)+1 {
		return VersionedJSON{}, false
	}
	at := i + len(marker)
	field := strconv.AppendQuote(append(make([]byte, 0, 24+len(rv)), `"resourceVersion":`...), rv)
	if stored[at] != '}' {
		field = append(field, ',')
	}
	return VersionedJSON{stored: stored, at: at, field: field}, true
}

// IsZero reports a VersionedJSON that holds nothing (the zero value).
func (v VersionedJSON) IsZero() bool { return v.stored == nil }

// Len is the length of the JSON written.
func (v VersionedJSON) Len() int { return len(v.stored) + len(v.field) }

// WriteTo writes the JSON to w in three writes: the stored bytes before the splice, the
// resourceVersion, the rest.
func (v VersionedJSON) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, part := range [][]byte{v.stored[:v.at], v.field, v.stored[v.at:]} {
		k, err := w.Write(part)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Bytes returns the JSON in one slice.
func (v VersionedJSON) Bytes() []byte {
	return slices.Concat(v.stored[:v.at], v.field, v.stored[v.at:])
}

// pruneCustomNulls removes from a custom resource the nulls of fields whose schema is neither
// nullable nor defaulted, as upstream's decoder does after pruning (structural defaulting's
// PruneNonNullableNullsWithoutDefaults), so that `spec: null` is absent rather than invalid.
func pruneCustomNulls(x interface{}, s *apiextensionsv1.JSONSchemaProps) {
	switch x := x.(type) {
	case map[string]interface{}:
		for k, v := range x {
			var fs *apiextensionsv1.JSONSchemaProps
			if s != nil {
				if p, ok := s.Properties[k]; ok {
					fs = &p
				} else if s.AdditionalProperties != nil {
					fs = s.AdditionalProperties.Schema
				}
			}
			if v == nil && fs != nil && !fs.Nullable && fs.Default == nil {
				delete(x, k)
				continue
			}
			pruneCustomNulls(v, fs)
		}
	case []interface{}:
		var items *apiextensionsv1.JSONSchemaProps
		if s != nil && s.Items != nil {
			items = s.Items.Schema
		}
		for i := range x {
			pruneCustomNulls(x[i], items)
		}
	}
}
