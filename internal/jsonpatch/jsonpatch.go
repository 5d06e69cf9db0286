package jsonpatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Limits bound one patch's work.
type Limits struct {
	// MaxOperations bounds the operations of a patch (0: no bound).
	MaxOperations int
	// MaxCopyBytes bounds the bytes that copy operations add in all (0: no bound).
	MaxCopyBytes int64
	// Heavy, when set, is called once the patch's work (bytes copied, array elements
	// moved) reaches HeavyWork, before it goes on: the caller charges the request for it
	// (quotad's edge takes a seat of long reads). An error stops the patch with it.
	Heavy     func() error
	HeavyWork int64
	// MaxWork bounds the patch's work (bytes copied, array elements moved) in all (0: no
	// bound): a patch that reaches it stops with a WorkError.
	MaxWork int64
}

// The bounds kube-apiserver applies by default.
const (
	DefaultMaxOperations = 10000
	DefaultMaxCopyBytes  = 3 * 1024 * 1024
)

// DefaultLimits are kube-apiserver's defaults.
var DefaultLimits = Limits{MaxOperations: DefaultMaxOperations, MaxCopyBytes: DefaultMaxCopyBytes}

// Errors the operations wrap, as the library's.
var (
	ErrTestFailed   = errors.New("test failed")
	ErrMissing      = errors.New("missing value")
	ErrUnknownType  = errors.New("unknown object type")
	ErrInvalid      = errors.New("invalid state detected")
	ErrInvalidIndex = errors.New("invalid index referenced")
)

// TooManyOperationsError is a patch with more operations than allowed.
type TooManyOperationsError struct{ Max, Got int }

func (e *TooManyOperationsError) Error() string {
	return fmt.Sprintf("The allowed maximum operations in a JSON patch is %d, got %d", e.Max, e.Got)
}

// CopySizeError is a patch whose copies would add more bytes than allowed.
type CopySizeError struct{ Limit, Accumulated int64 }

func (e *CopySizeError) Error() string {
	return fmt.Sprintf("Unable to complete the copy, the accumulated size increase of copy is %d, exceeding the limit %d", e.Accumulated, e.Limit)
}

// WorkError is a patch whose work reached Limits.MaxWork.
type WorkError struct{ Limit, Work int64 }

func (e *WorkError) Error() string {
	return fmt.Sprintf("the JSON patch's operations move and copy %d array elements and bytes, more than the limit %d", e.Work, e.Limit)
}

// Operation is one step of a patch, its members undecoded.
type Operation map[string]*json.RawMessage

// Patch is a decoded patch document.
type Patch []Operation

// Decode decodes a patch document (the library's DecodePatch).
func Decode(buf []byte) (Patch, error) {
	var p Patch
	if err := json.Unmarshal(buf, &p); err != nil {
		return nil, err
	}
	return p, nil
}

// Apply decodes patch and applies it to doc within lim, stopping when ctx ends.
func Apply(ctx context.Context, doc, patch []byte, lim Limits) ([]byte, error) {
	p, err := Decode(patch)
	if err != nil {
		return nil, err
	}
	return p.Apply(ctx, doc, lim)
}

// Apply applies the patch to doc within lim, stopping when ctx ends.
func (p Patch) Apply(ctx context.Context, doc []byte, lim Limits) ([]byte, error) {
	if lim.MaxOperations > 0 && len(p) > lim.MaxOperations {
		return nil, &TooManyOperationsError{Max: lim.MaxOperations, Got: len(p)}
	}
	if len(doc) == 0 {
		return doc, nil
	}
	var pd container
	if doc[0] == '[' {
		pd = &partialArray{}
	} else {
		pd = &partialDoc{}
	}
	if err := json.Unmarshal(doc, pd); err != nil {
		return nil, err
	}
	a := applier{limits: lim}
	for _, op := range p {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var err error
		switch op.Kind() {
		case "add":
			err = a.add(&pd, op)
		case "remove":
			err = a.remove(&pd, op)
		case "replace":
			err = a.replace(&pd, op)
		case "move":
			err = a.move(&pd, op)
		case "test":
			err = a.test(&pd, op)
		case "copy":
			err = a.copy(&pd, op)
		default:
			err = fmt.Errorf("Unexpected kind: %s", op.Kind())
		}
		if err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return json.Marshal(pd)
}

// The kinds of a lazy node: raw bytes not yet decoded, an object or an array.
const (
	eRaw = iota
	eDoc
	eAry
)

// lazyNode is a value of the document, decoded only when an operation goes into it.
type lazyNode struct {
	raw   *json.RawMessage
	doc   partialDoc
	ary   partialArray
	which int
}

type partialDoc map[string]*lazyNode
type partialArray []*lazyNode

type container interface {
	get(key string) (*lazyNode, error)
	set(key string, val *lazyNode) error
	add(key string, val *lazyNode) error
	remove(key string) error
}

func newLazyNode(raw *json.RawMessage) *lazyNode { return &lazyNode{raw: raw, which: eRaw} }

func (n *lazyNode) MarshalJSON() ([]byte, error) {
	switch n.which {
	case eRaw:
		return json.Marshal(n.raw)
	case eDoc:
		return json.Marshal(n.doc)
	case eAry:
		return json.Marshal(n.ary)
	}
	return nil, ErrUnknownType
}

func (n *lazyNode) UnmarshalJSON(data []byte) error {
	dest := make(json.RawMessage, len(data))
	copy(dest, data)
	n.raw, n.which = &dest, eRaw
	return nil
}

// deepCopy copies src through its JSON, returning the copy's size.
func deepCopy(src *lazyNode) (*lazyNode, int, error) {
	if src == nil {
		return nil, 0, nil
	}
	a, err := src.MarshalJSON()
	if err != nil {
		return nil, 0, err
	}
	ra := json.RawMessage(a)
	return newLazyNode(&ra), len(a), nil
}

func (n *lazyNode) intoDoc() (*partialDoc, error) {
	if n.which == eDoc {
		return &n.doc, nil
	}
	if n.raw == nil {
		return nil, ErrInvalid
	}
	if err := json.Unmarshal(*n.raw, &n.doc); err != nil {
		return nil, err
	}
	n.which = eDoc
	return &n.doc, nil
}

func (n *lazyNode) intoAry() (*partialArray, error) {
	if n.which == eAry {
		return &n.ary, nil
	}
	if n.raw == nil {
		return nil, ErrInvalid
	}
	if err := json.Unmarshal(*n.raw, &n.ary); err != nil {
		return nil, err
	}
	n.which = eAry
	return &n.ary, nil
}

func (n *lazyNode) compact() []byte {
	if n.raw == nil {
		return nil
	}
	buf := &bytes.Buffer{}
	if err := json.Compact(buf, *n.raw); err != nil {
		return *n.raw
	}
	return buf.Bytes()
}

func (n *lazyNode) tryDoc() bool {
	if n.raw == nil || json.Unmarshal(*n.raw, &n.doc) != nil {
		return false
	}
	n.which = eDoc
	return true
}

func (n *lazyNode) tryAry() bool {
	if n.raw == nil || json.Unmarshal(*n.raw, &n.ary) != nil {
		return false
	}
	n.which = eAry
	return true
}

// equal compares two values as the library's test operation does.
func (n *lazyNode) equal(o *lazyNode) bool {
	if n.which == eRaw && !n.tryDoc() && !n.tryAry() {
		if o.which != eRaw {
			return false
		}
		return bytes.Equal(n.compact(), o.compact())
	}
	if n.which == eDoc {
		if o.which == eRaw && !o.tryDoc() {
			return false
		}
		if o.which != eDoc || len(n.doc) != len(o.doc) {
			return false
		}
		for k, v := range n.doc {
			ov, ok := o.doc[k]
			if !ok || (v == nil) != (ov == nil) {
				return false
			}
			if v != nil && !v.equal(ov) {
				return false
			}
		}
		return true
	}
	if o.which != eAry && !o.tryAry() {
		return false
	}
	if len(n.ary) != len(o.ary) {
		return false
	}
	for i, v := range n.ary {
		if !v.equal(o.ary[i]) {
			return false
		}
	}
	return true
}

// Kind is the operation's "op".
func (o Operation) Kind() string {
	if obj, ok := o["op"]; ok && obj != nil {
		var op string
		if json.Unmarshal(*obj, &op) != nil {
			return "unknown"
		}
		return op
	}
	return "unknown"
}

// Path is the operation's "path".
func (o Operation) Path() (string, error) { return o.member("path", "operation missing path field") }

// From is the operation's "from".
func (o Operation) From() (string, error) { return o.member("from", "operation, missing from field") }

func (o Operation) member(name, missing string) (string, error) {
	if obj, ok := o[name]; ok && obj != nil {
		var s string
		if err := json.Unmarshal(*obj, &s); err != nil {
			return "unknown", err
		}
		return s, nil
	}
	return "unknown", fmt.Errorf("%s: %w", missing, ErrMissing)
}

func (o Operation) value() *lazyNode {
	if obj, ok := o["value"]; ok {
		return newLazyNode(obj)
	}
	return nil
}

func isArray(buf []byte) bool {
	for _, c := range buf {
		switch c {
		case ' ', '\n', '\t':
			continue
		case '[':
			return true
		}
		return false
	}
	return false
}

var rfc6901Decoder = strings.NewReplacer("~1", "/", "~0", "~")

func decodePatchKey(k string) string { return rfc6901Decoder.Replace(k) }

// findObject finds the container holding path's last token, and that token.
func findObject(pd *container, path string) (container, string) {
	doc := *pd
	split := strings.Split(path, "/")
	if len(split) < 2 {
		return nil, ""
	}
	for _, part := range split[1 : len(split)-1] {
		next, err := doc.get(decodePatchKey(part))
		if next == nil || err != nil || next.raw == nil {
			return nil, ""
		}
		if isArray(*next.raw) {
			if doc, err = next.intoAry(); err != nil {
				return nil, ""
			}
		} else if doc, err = next.intoDoc(); err != nil {
			return nil, ""
		}
	}
	return doc, decodePatchKey(split[len(split)-1])
}

func (d *partialDoc) set(key string, val *lazyNode) error { (*d)[key] = val; return nil }
func (d *partialDoc) add(key string, val *lazyNode) error { (*d)[key] = val; return nil }
func (d *partialDoc) get(key string) (*lazyNode, error)   { return (*d)[key], nil }

func (d *partialDoc) remove(key string) error {
	if _, ok := (*d)[key]; !ok {
		return fmt.Errorf("Unable to remove nonexistent key: %s: %w", key, ErrMissing)
	}
	delete(*d, key)
	return nil
}

// index resolves a (possibly negative) index of an array of length n; bound is the
// exclusive upper bound allowed.
func index(idx, n, bound int) (int, error) {
	if idx >= bound || idx < -n {
		return 0, fmt.Errorf("Unable to access invalid index: %d: %w", idx, ErrInvalidIndex)
	}
	if idx < 0 {
		idx += n
	}
	return idx, nil
}

func (d *partialArray) set(key string, val *lazyNode) error {
	idx, err := strconv.Atoi(key)
	if err != nil {
		return err
	}
	if idx < 0 {
		if idx, err = index(idx, len(*d), len(*d)); err != nil {
			return err
		}
	}
	(*d)[idx] = val
	return nil
}

func (d *partialArray) add(key string, val *lazyNode) error {
	if key == "-" {
		*d = append(*d, val)
		return nil
	}
	idx, err := strconv.Atoi(key)
	if err != nil {
		return fmt.Errorf("value was not a proper array index: '%s': %w", key, err)
	}
	if idx, err = index(idx, len(*d)+1, len(*d)+1); err != nil {
		return err
	}
	cur := *d
	ary := make([]*lazyNode, len(cur)+1)
	copy(ary[:idx], cur[:idx])
	ary[idx] = val
	copy(ary[idx+1:], cur[idx:])
	*d = ary
	return nil
}

func (d *partialArray) get(key string) (*lazyNode, error) {
	idx, err := strconv.Atoi(key)
	if err != nil {
		return nil, err
	}
	if idx, err = index(idx, len(*d), len(*d)); err != nil {
		return nil, err
	}
	return (*d)[idx], nil
}

func (d *partialArray) remove(key string) error {
	idx, err := strconv.Atoi(key)
	if err != nil {
		return err
	}
	cur := *d
	if idx, err = index(idx, len(cur), len(cur)); err != nil {
		return err
	}
	ary := make([]*lazyNode, len(cur)-1)
	copy(ary[:idx], cur[:idx])
	copy(ary[idx:], cur[idx+1:])
	*d = ary
	return nil
}

// applier applies the operations of one patch, counting what its copies add and the
// work its operations do.
type applier struct {
	limits Limits
	copied int64
	work   int64
	heavy  bool
}

// did counts n units of work, calling Limits.Heavy once they reach Limits.HeavyWork and
// failing past Limits.MaxWork.
func (a *applier) did(n int) error {
	a.work += int64(n)
	if a.limits.MaxWork > 0 && a.work > a.limits.MaxWork {
		return &WorkError{Limit: a.limits.MaxWork, Work: a.work}
	}
	if a.heavy || a.limits.Heavy == nil || a.work < a.limits.HeavyWork {
		return nil
	}
	a.heavy = true
	return a.limits.Heavy()
}

// size is the work of changing c: an array's elements are copied.
func size(c container) int {
	if ary, ok := c.(*partialArray); ok {
		return len(*ary)
	}
	return 1
}

func (a *applier) add(doc *container, op Operation) error {
	path, err := op.Path()
	if err != nil {
		return fmt.Errorf("add operation failed to decode path: %w", ErrMissing)
	}
	con, key := findObject(doc, path)
	if con == nil {
		return fmt.Errorf("add operation does not apply: doc is missing path: \"%s\": %w", path, ErrMissing)
	}
	if err := a.did(size(con)); err != nil {
		return err
	}
	if err := con.add(key, op.value()); err != nil {
		return fmt.Errorf("error in add for path: '%s': %w", path, err)
	}
	return nil
}

func (a *applier) remove(doc *container, op Operation) error {
	path, err := op.Path()
	if err != nil {
		return fmt.Errorf("remove operation failed to decode path: %w", ErrMissing)
	}
	con, key := findObject(doc, path)
	if con == nil {
		return fmt.Errorf("remove operation does not apply: doc is missing path: \"%s\": %w", path, ErrMissing)
	}
	if err := a.did(size(con)); err != nil {
		return err
	}
	if err := con.remove(key); err != nil {
		return fmt.Errorf("error in remove for path: '%s': %w", path, err)
	}
	return nil
}

func (a *applier) replace(doc *container, op Operation) error {
	path, err := op.Path()
	if err != nil {
		return fmt.Errorf("replace operation failed to decode path: %w", err)
	}
	if path == "" {
		val := op.value()
		if val == nil {
			return fmt.Errorf("replace operation value must be object or array: %w", ErrMissing)
		}
		if val.which == eRaw && !val.tryDoc() && !val.tryAry() {
			return fmt.Errorf("replace operation value must be object or array: %w", err)
		}
		switch val.which {
		case eAry:
			*doc = &val.ary
		case eDoc:
			*doc = &val.doc
		}
		return nil
	}
	con, key := findObject(doc, path)
	if con == nil {
		return fmt.Errorf("replace operation does not apply: doc is missing path: %s: %w", path, ErrMissing)
	}
	if _, err := con.get(key); err != nil {
		return fmt.Errorf("replace operation does not apply: doc is missing key: %s: %w", path, ErrMissing)
	}
	if err := con.set(key, op.value()); err != nil {
		return fmt.Errorf("error in remove for path: '%s': %w", path, err)
	}
	return nil
}

func (a *applier) move(doc *container, op Operation) error {
	from, err := op.From()
	if err != nil {
		return fmt.Errorf("move operation failed to decode from: %w", err)
	}
	con, key := findObject(doc, from)
	if con == nil {
		return fmt.Errorf("move operation does not apply: doc is missing from path: %s: %w", from, ErrMissing)
	}
	val, err := con.get(key)
	if err != nil {
		return fmt.Errorf("error in move for path: '%s': %w", key, err)
	}
	if err := a.did(2 * size(con)); err != nil {
		return err
	}
	if err := con.remove(key); err != nil {
		return fmt.Errorf("error in move for path: '%s': %w", key, err)
	}
	path, err := op.Path()
	if err != nil {
		return fmt.Errorf("move operation failed to decode path: %w", err)
	}
	con, key = findObject(doc, path)
	if con == nil {
		return fmt.Errorf("move operation does not apply: doc is missing destination path: %s: %w", path, ErrMissing)
	}
	if err := con.add(key, val); err != nil {
		return fmt.Errorf("error in move for path: '%s': %w", path, err)
	}
	return nil
}

func (a *applier) test(doc *container, op Operation) error {
	path, err := op.Path()
	if err != nil {
		return fmt.Errorf("test operation failed to decode path: %w", err)
	}
	failed := fmt.Errorf("testing value %s failed: %w", path, ErrTestFailed)
	want := op.value()
	if path == "" {
		var self lazyNode
		switch sv := (*doc).(type) {
		case *partialDoc:
			self.doc, self.which = *sv, eDoc
		case *partialArray:
			self.ary, self.which = *sv, eAry
		}
		if want != nil && self.equal(want) {
			return nil
		}
		return failed
	}
	con, key := findObject(doc, path)
	if con == nil {
		return fmt.Errorf("test operation does not apply: is missing path: %s: %w", path, ErrMissing)
	}
	val, err := con.get(key)
	if err != nil {
		return fmt.Errorf("error in test for path: '%s': %w", path, err)
	}
	if want != nil && want.raw != nil {
		if err := a.did(len(*want.raw)); err != nil {
			return err
		}
	}
	switch {
	case val == nil:
		if want == nil || want.raw == nil {
			return nil
		}
		return failed
	case want == nil:
		return failed
	case val.equal(want):
		return nil
	}
	return failed
}

func (a *applier) copy(doc *container, op Operation) error {
	from, err := op.From()
	if err != nil {
		return fmt.Errorf("copy operation failed to decode from: %w", err)
	}
	con, key := findObject(doc, from)
	if con == nil {
		return fmt.Errorf("copy operation does not apply: doc is missing from path: %s: %w", from, ErrMissing)
	}
	val, err := con.get(key)
	if err != nil {
		return fmt.Errorf("error in copy for from: '%s': %w", from, err)
	}
	path, err := op.Path()
	if err != nil {
		return fmt.Errorf("copy operation failed to decode path: %w", ErrMissing)
	}
	con, key = findObject(doc, path)
	if con == nil {
		return fmt.Errorf("copy operation does not apply: doc is missing destination path: %s: %w", path, ErrMissing)
	}
	// The copy's size is known only once it is made: a copy that would pass the bound is
	// refused after being made, and dropped. Its size is at most the document's, which
	// the earlier copies and the patch's values bound.
	valCopy, sz, err := deepCopy(val)
	if err != nil {
		return fmt.Errorf("error while performing deep copy: %w", err)
	}
	if err := a.did(sz + size(con)); err != nil {
		return err
	}
	a.copied += int64(sz)
	if a.limits.MaxCopyBytes > 0 && a.copied > a.limits.MaxCopyBytes {
		return &CopySizeError{Limit: a.limits.MaxCopyBytes, Accumulated: a.copied}
	}
	if err := con.add(key, valCopy); err != nil {
		return fmt.Errorf("error while adding value during copy: %w", err)
	}
	return nil
}

// CopyBomb is the patch that doubles a document with every operation: an add of value at
// /metadata/annotations, then n copies of the annotations into themselves under new keys.
// Tests and the abuse benchmark send it.
func CopyBomb(value string, n int) string {
	var b strings.Builder
	b.WriteString(`[{"op":"add","path":"/metadata/annotations","value":` + value + `}`)
	for i := range n {
		fmt.Fprintf(&b, `,{"op":"copy","from":"/metadata/annotations","path":"/metadata/annotations/c%d"}`, i)
	}
	b.WriteString("]")
	return b.String()
}
