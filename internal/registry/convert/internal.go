package convert

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// InternalJSON is v (a value of a k8s.io/api type) encoded as upstream encodes its
// internal version, whose types carry no json tags: fields by their Go names in
// declaration order, none omitted (nil pointers, slices and maps as null), embedded structs
// inlined; values of other packages' types (quantities, times, label selectors, which the
// internal types share) and map keys as encoding/json writes them. The v1 types of core
// declare their fields as the internal ones do (but NodeSpec's podCIDR and Secret's
// stringData, which the internal types lack), so upstream's messages that print internal
// objects as JSON (field.Invalid's value, apimachinery's diff.Diff of two) are printed the
// same from v1 objects.
func InternalJSON(v any) json.RawMessage {
	var buf bytes.Buffer
	writeInternal(&buf, reflect.ValueOf(v))
	return buf.Bytes()
}

var jsonMarshaler = reflect.TypeFor[json.Marshaler]()

func writeInternal(buf *bytes.Buffer, v reflect.Value) {
	if !v.IsValid() {
		buf.WriteString("null")
		return
	}
	if t := v.Type(); t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) || !apiType(t) {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			buf.WriteString("null")
			return
		}
		b, err := json.Marshal(v.Interface())
		if err != nil {
			buf.WriteString("null")
			return
		}
		buf.Write(b)
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			buf.WriteString("null")
			return
		}
		writeInternal(buf, v.Elem())
	case reflect.Struct:
		buf.WriteByte('{')
		first := true
		writeFields(buf, v, &first)
		buf.WriteByte('}')
	case reflect.Slice:
		if v.IsNil() {
			buf.WriteString("null")
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			b, _ := json.Marshal(v.Interface())
			buf.Write(b)
			return
		}
		fallthrough
	case reflect.Array:
		buf.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeInternal(buf, v.Index(i))
		}
		buf.WriteByte(']')
	case reflect.Map:
		if v.IsNil() {
			buf.WriteString("null")
			return
		}
		// encoding/json writes a map's keys in order: a map of the values written so.
		m := make(map[string]json.RawMessage, v.Len())
		for it := v.MapRange(); it.Next(); {
			k, _ := json.Marshal(it.Key().Interface())
			key, err := strconv.Unquote(string(k))
			if err != nil {
				key = string(k)
			}
			m[key] = InternalJSON(it.Value().Interface())
		}
		b, _ := json.Marshal(m)
		buf.Write(b)
	default:
		b, err := json.Marshal(v.Interface())
		if err != nil {
			buf.WriteString("null")
			return
		}
		buf.Write(b)
	}
}

// writeFields writes the exported fields of struct v, inlining embedded structs.
func writeFields(buf *bytes.Buffer, v reflect.Value, first *bool) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if apiType(f.Type) {
				writeFields(buf, v.Field(i), first)
				continue
			}
			// Another package's struct (metav1.ObjectMeta in a template) is promoted as
			// encoding/json promotes it: its own fields, by their tags.
			b, err := json.Marshal(v.Field(i).Interface())
			if err != nil || len(b) < 2 || string(b) == "{}" {
				continue
			}
			if !*first {
				buf.WriteByte(',')
			}
			*first = false
			buf.Write(b[1 : len(b)-1])
			continue
		}
		if !*first {
			buf.WriteByte(',')
		}
		*first = false
		name, _ := json.Marshal(f.Name)
		buf.Write(name)
		buf.WriteByte(':')
		writeInternal(buf, v.Field(i))
	}
}

// apiType reports whether t is, or is built of, a k8s.io/api type (written tagless) rather
// than another package's, which the internal types share and encoding/json writes.
func apiType(t reflect.Type) bool {
	for t.Name() == "" {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			t = t.Elem()
		default:
			return true
		}
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map, reflect.Slice, reflect.Array:
		return strings.HasPrefix(t.PkgPath(), "k8s.io/api/")
	}
	return true // scalars: encoding/json writes them the same either way
}

// InternalValue is v as upstream's field errors print it: InternalJSON for a value of, or
// built of, k8s.io/api structs (upstream holds them as internal objects), v itself
// otherwise (strings, numbers and their named types print the same either way).
func InternalValue(v any) any {
	t := reflect.TypeOf(v)
	if t == nil {
		return v
	}
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct && apiType(t) {
		return internalValue{v}
	}
	return v
}

// internalValue writes its value as InternalJSON when (and only when) it is marshalled: an
// error's value is printed only if the error is.
type internalValue struct{ v any }

// MarshalJSON is InternalJSON of the value.
func (i internalValue) MarshalJSON() ([]byte, error) { return InternalJSON(i.v), nil }
