package codec

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/quota/quantity"
)

// Quantity texts are checked before a decoder hands them to resource.ParseQuantity, which
// is quadratic in a text's digits and linear in the size of a negative exponent: one
// "1e-1000000000" keeps a core busy for minutes. A body's quantity fields are found by
// walking it alongside its kind's Go type (JSON field names, protobuf field numbers), so
// only fields of type resource.Quantity are checked; a refused text is a 422 naming its
// field, with quantity.CheckText's message, and nothing is decoded.
//
// A JSON body is walked only when a cheap scan finds a text quantity.CheckText would
// refuse where a JSON string or number could hold it, so ordinary bodies pay one pass over
// their bytes. (Quantity.UnmarshalJSON parses the raw literal, escapes and all, after
// trimming white space: an escape cannot spell a quantity, and spaces delimit the scan's
// runs.) A protobuf body is always walked: its length and tag bytes may be quantity
// characters, so no scan of its bytes finds the texts' edges.

var quantityType = reflect.TypeOf(resource.Quantity{})

// checkQuantityTexts refuses a JSON body of res whose quantity fields hold a text
// quantity.CheckText refuses. Malformed JSON is left to the decoder.
func checkQuantityTexts(res Kind, body []byte) error {
	if res.GoType() == nil || !holdsQuantities(res.GoType()) || !mayHoldRefusedQuantity(body) {
		return nil
	}
	w := &quantityWalk{}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := w.jsonValue(dec, res.GoType(), nil); err != nil {
		return nil
	}
	return w.result(res)
}

// checkProtobufQuantityTexts is checkQuantityTexts for a Kubernetes protobuf body (the
// "k8s\x00" magic, then a runtime.Unknown whose raw field is the object).
func checkProtobufQuantityTexts(res Kind, body []byte) error {
	if res.GoType() == nil || !bytes.HasPrefix(body, []byte("k8s\x00")) {
		return nil
	}
	raw, ok := protoField(body[4:], 2)
	if !ok {
		return nil
	}
	// The serializer parses the fields before a malformed one, so what the walk found up
	// to there counts whether or not the rest is well-formed.
	w := &quantityWalk{}
	w.protoMessage(raw, protobufType(res, body[4:]), nil)
	return w.result(res)
}

// protobufType returns the Go type the protobuf serializer decodes a runtime.Unknown
// into: the kind its typeMeta names (which need not be res's: the serializer creates
// that kind, and the mismatch is reported after decoding), else res's.
func protobufType(res Kind, unknown []byte) reflect.Type {
	gvk := res.GVK()
	if tm, ok := protoField(unknown, 1); ok {
		if v, ok := protoField(tm, 1); ok && len(v) > 0 {
			if gv, err := schema.ParseGroupVersion(string(v)); err == nil {
				gvk.Group, gvk.Version = gv.Group, gv.Version
			}
		}
		if k, ok := protoField(tm, 2); ok && len(k) > 0 {
			gvk.Kind = string(k)
		}
	}
	obj, err := protobufScheme.New(gvk)
	if err != nil {
		return res.GoType()
	}
	return reflect.TypeOf(obj)
}

// mayHoldRefusedQuantity reports whether a JSON body holds, between delimiters (quotes,
// structural characters, white space), a run of quantity characters that
// quantity.CheckText refuses.
func mayHoldRefusedQuantity(body []byte) bool {
	for i := 0; i < len(body); {
		if !isQuantityByte(body[i]) {
			i++
			continue
		}
		j, digits, scaled := i, 0, false
		for ; j < len(body) && isQuantityByte(body[j]); j++ {
			switch c := body[j]; {
			case '0' <= c && c <= '9':
				digits++
			case c == 'e' || c == 'E' || c == 'P' || c == 'T':
				scaled = true
			}
		}
		// CheckText refuses only texts that are long, have an exponent, E, P or T, or have
		// 10 digits or more: the largest other suffix, Gi, needs 10 of them to pass the
		// bound (G 10, Mi and M 13, Ki and k 16, none 19), and a tiny value 55 or more.
		if (j-i > quantity.MaxTextLength || digits >= 10 || scaled) &&
			(i == 0 || isQuantityBoundary(body[i-1])) && (j == len(body) || isQuantityBoundary(body[j])) &&
			quantity.CheckText(string(body[i:j]), field.NewPath("q")) != nil {
			return true
		}
		i = j
	}
	return false
}

// isQuantityByte reports whether c may appear in a quantity text.
func isQuantityByte(c byte) bool { return quantityBytes[c] }

// quantityBytes[c]: c may appear in a quantity text.
var quantityBytes = func() (t [256]bool) {
	for _, c := range []byte("0123456789.+-eEinumkKMGTP") {
		t[c] = true
	}
	return t
}()

// holdsQuantities reports whether values of t may hold a resource.Quantity (in a field,
// element or value, at any depth); a kind without one has no quantity text to check.
func holdsQuantities(t reflect.Type) bool {
	if m := quantityTypes.Load(); m != nil {
		if held, ok := (*m)[t]; ok {
			return held
		}
	}
	held := reachesQuantity(t, map[reflect.Type]bool{})
	quantityMu.Lock()
	defer quantityMu.Unlock()
	next := map[reflect.Type]bool{t: held}
	if m := quantityTypes.Load(); m != nil {
		for k, v := range *m {
			next[k] = v
		}
	}
	quantityTypes.Store(&next)
	return held
}

// quantityTypes caches holdsQuantities by type: a map replaced, never modified, when a type
// is added (there are as many as served kinds), so that reading it takes no lock.
var (
	quantityTypes atomic.Pointer[map[reflect.Type]bool]
	quantityMu    sync.Mutex
)

// reachesQuantity is holdsQuantities without the cache; seen breaks cycles.
func reachesQuantity(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t == quantityType {
		return true
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return reachesQuantity(t.Elem(), seen)
	case reflect.Map:
		return reachesQuantity(t.Key(), seen) || reachesQuantity(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if reachesQuantity(t.Field(i).Type, seen) {
				return true
			}
		}
	case reflect.Interface:
		return true // anything may be behind it
	}
	return false
}

// isQuantityBoundary reports whether c may delimit a quantity text in JSON: quotes,
// structural characters, and the bytes of white space strings.TrimSpace trims (control
// characters, and non-ASCII bytes for U+0085 and U+00A0).
func isQuantityBoundary(c byte) bool {
	return c < 0x20 || c >= 0x7f || strings.IndexByte("\" :,[]{}", c) >= 0
}

// quantityWalk collects the refused quantity texts of one body and the object's name.
type quantityWalk struct {
	errs field.ErrorList
	name string
}

// result is the 422 for the refused texts, or nil.
func (w *quantityWalk) result(res Kind) error {
	if len(w.errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(res.GVK().GroupKind(), w.name, w.errs)
}

// check checks one quantity text.
func (w *quantityWalk) check(text string, p *field.Path) {
	if err := quantity.CheckText(text, p); err != nil {
		w.errs = append(w.errs, err)
	}
}

// noteName keeps metadata.name of the object itself.
func (w *quantityWalk) noteName(text string, p *field.Path) {
	if p != nil && p.String() == "metadata.name" {
		w.name = text
	}
}

var errNotQuantityWalkable = errors.New("body is not walkable")

// jsonValue reads one JSON value from dec, which is to decode into a value of type t (nil:
// not followed), at path p.
func (w *quantityWalk) jsonValue(dec *json.Decoder, t reflect.Type, p *field.Path) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == quantityType {
		switch v := tok.(type) {
		case string:
			w.check(strings.TrimSpace(v), p)
		case json.Number:
			w.check(string(v), p)
		}
	}
	if s, ok := tok.(string); ok {
		w.noteName(s, p)
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if t != nil && (t == quantityType || customJSON(t)) {
		t = nil
	}
	switch delim {
	case '{':
		for dec.More() {
			ktok, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := ktok.(string)
			var vt reflect.Type
			var vp *field.Path
			switch {
			case t == nil:
			case t.Kind() == reflect.Struct:
				if f, ok := jsonField(t, key); ok {
					vt, vp = f, p.Child(key)
				}
			case t.Kind() == reflect.Map:
				vt, vp = t.Elem(), p.Key(key)
			}
			if vp == nil {
				vp = p.Child(key)
			}
			if err := w.jsonValue(dec, vt, vp); err != nil {
				return err
			}
		}
	case '[':
		var et reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && t.Elem().Kind() != reflect.Uint8 {
			et = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := w.jsonValue(dec, et, p.Index(i)); err != nil {
				return err
			}
		}
	default:
		return errNotQuantityWalkable
	}
	_, err = dec.Token() // the closing delimiter
	return err
}

// customJSON reports whether values of t decode themselves (metav1.Time, IntOrString,
// RawExtension, FieldsV1, ...): their insides are not walked.
func customJSON(t reflect.Type) bool {
	u := reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
	return reflect.PointerTo(t).Implements(u) || t.Implements(u)
}

// jsonField returns the type of the field of struct t named key in JSON, looking through
// inlined (anonymous) fields.
func jsonField(t reflect.Type, key string) (reflect.Type, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && f.Anonymous {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if inner, ok := jsonField(ft, key); ok {
					return inner, true
				}
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		if name == key && f.IsExported() {
			return f.Type, true
		}
	}
	return nil, false
}

// protoMessage walks a protobuf message that decodes into a value of struct type t. It
// reports false when the bytes are not well-formed protobuf (left to the decoder).
func (w *quantityWalk) protoMessage(b []byte, t reflect.Type, p *field.Path) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == quantityType {
		// Quantity.Unmarshal parses every occurrence of its field 1.
		for len(b) > 0 {
			num, wire, payload, rest, ok := protoNext(b)
			if !ok {
				return false
			}
			if num == 1 && wire == 2 {
				w.check(string(payload), p)
			}
			b = rest
		}
		return true
	}
	if t.Kind() != reflect.Struct {
		return true
	}
	counts := map[int]int{}
	for len(b) > 0 {
		num, wire, payload, rest, ok := protoNext(b)
		if !ok {
			return false
		}
		b = rest
		if wire != 2 {
			continue
		}
		f, ok := protoStructField(t, num)
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		fp := p.Child(name)
		ft := f.Type
		switch {
		case ft.Kind() == reflect.String, ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Uint8:
			if ft.Kind() == reflect.String {
				w.noteName(string(payload), fp)
			}
		case ft.Kind() == reflect.Map:
			// A map entry: key 1, value 2; the generated code decodes every value given.
			key, _ := protoField(payload, 1)
			for e := payload; len(e) > 0; {
				n, wt, val, rest, ok := protoNext(e)
				if !ok {
					return false
				}
				if n == 2 && wt == 2 && !w.protoMessage(val, ft.Elem(), fp.Key(string(key))) {
					return false
				}
				e = rest
			}
		case ft.Kind() == reflect.Slice:
			i := counts[num]
			counts[num]++
			if !w.protoMessage(payload, ft.Elem(), fp.Index(i)) {
				return false
			}
		default:
			if !w.protoMessage(payload, ft, fp) {
				return false
			}
		}
	}
	return true
}

// protoStructField returns the field of struct t with protobuf field number num.
func protoStructField(t reflect.Type, num int) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		parts := strings.Split(f.Tag.Get("protobuf"), ",")
		if len(parts) > 1 {
			if n, err := strconv.Atoi(parts[1]); err == nil && n == num {
				return f, true
			}
		}
	}
	return reflect.StructField{}, false
}

// protoField returns the payload of the last length-delimited field num of message b.
func protoField(b []byte, num int) ([]byte, bool) {
	var out []byte
	found := false
	for len(b) > 0 {
		n, wire, payload, rest, ok := protoNext(b)
		if !ok {
			return nil, false
		}
		if n == num && wire == 2 {
			out, found = payload, true
		}
		b = rest
	}
	return out, found
}

// protoNext reads one field of a protobuf message: its number, wire type, the payload of
// a length-delimited field, and the rest of the message. A group (wire types 3 and 4,
// which the generated code skips) is read to its end and has no payload.
func protoNext(b []byte) (num, wire int, payload, rest []byte, ok bool) {
	return protoNextDepth(b, 0)
}

func protoNextDepth(b []byte, depth int) (num, wire int, payload, rest []byte, ok bool) {
	tag, n := binary.Uvarint(b)
	if n <= 0 || tag>>3 == 0 || tag>>3 > 1<<29 {
		return 0, 0, nil, nil, false
	}
	b = b[n:]
	num, wire = int(tag>>3), int(tag&7)
	switch wire {
	case 0:
		_, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, 0, nil, nil, false
		}
		return num, wire, nil, b[n:], true
	case 1:
		if len(b) < 8 {
			return 0, 0, nil, nil, false
		}
		return num, wire, nil, b[8:], true
	case 5:
		if len(b) < 4 {
			return 0, 0, nil, nil, false
		}
		return num, wire, nil, b[4:], true
	case 2:
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return 0, 0, nil, nil, false
		}
		b = b[n:]
		return num, wire, b[:l], b[l:], true
	case 3:
		if depth > 100 {
			return 0, 0, nil, nil, false
		}
		for {
			n, w, _, r, ok := protoNextDepth(b, depth+1)
			if !ok {
				return 0, 0, nil, nil, false
			}
			b = r
			if w == 4 {
				if n != num {
					return 0, 0, nil, nil, false
				}
				return num, 3, nil, b, true
			}
		}
	case 4:
		if depth == 0 {
			return 0, 0, nil, nil, false
		}
		return num, wire, nil, b, true
	}
	return 0, 0, nil, nil, false
}
