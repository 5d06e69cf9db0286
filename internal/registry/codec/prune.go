package codec

import "strings"

// Paths is a set of paths into a JSON object, as a tree: a key whose child is nil keeps its
// whole value; a key with a child keeps, of an object value, only the child's paths.
type Paths map[string]Paths

// Add adds the path of keys p (a path ending inside one kept whole changes nothing; a path
// above one kept in part keeps it whole).
func (t Paths) Add(p ...string) {
	for i, k := range p {
		child, ok := t[k]
		if ok && child == nil {
			return
		}
		if i == len(p)-1 {
			t[k] = nil
			return
		}
		if child == nil {
			child = Paths{}
			t[k] = child
		}
		t = child
	}
}

// AddDotted adds a dotted path ("spec.nodeName").
func (t Paths) AddDotted(p string) { t.Add(strings.Split(p, ".")...) }

// Prune appends to dst the JSON object src with only the members on paths, and reports
// whether src had the shape it reads: an object whose keys hold no escapes (every stored
// object's), its values valid JSON as encoding/json writes them. When ok is false, dst is
// returned unchanged and the caller decodes src whole instead. Decoding the result into a
// kind's type gives the values on paths that decoding src gives; the rest stay zero.
func Prune(dst, src []byte, paths Paths) (_ []byte, ok bool) {
	start := len(dst)
	i := skipSpace(src, 0)
	out, end, ok := keepObject(dst, src, i, paths)
	if !ok || skipSpace(src, end) != len(src) {
		return dst[:start], false
	}
	return out, true
}

// keepObject prunes the object at src[i] into dst; end is the index after it.
func keepObject(dst, src []byte, i int, paths Paths) (_ []byte, end int, ok bool) {
	if i >= len(src) || src[i] != '{' {
		return dst, 0, false
	}
	dst = append(dst, '{')
	first := true
	i = skipSpace(src, i+1)
	if i < len(src) && src[i] == '}' {
		return append(dst, '}'), i + 1, true
	}
	for {
		// A key without escapes.
		if i >= len(src) || src[i] != '"' {
			return dst, 0, false
		}
		k := i + 1
		for k < len(src) && src[k] != '"' {
			if src[k] == '\\' {
				return dst, 0, false
			}
			k++
		}
		if k >= len(src) {
			return dst, 0, false
		}
		key := src[i+1 : k]
		keyEnd := k + 1
		v := skipSpace(src, keyEnd)
		if v >= len(src) || src[v] != ':' {
			return dst, 0, false
		}
		v = skipSpace(src, v+1)
		child, want := paths[string(key)]
		var vEnd int
		switch {
		case want && child != nil && v < len(src) && src[v] == '{':
			if !first {
				dst = append(dst, ',')
			}
			dst = append(append(dst, src[i:keyEnd]...), ':')
			if dst, vEnd, ok = keepObject(dst, src, v, child); !ok {
				return dst, 0, false
			}
			first = false
		default:
			if vEnd, ok = skipValue(src, v); !ok {
				return dst, 0, false
			}
			if want {
				if !first {
					dst = append(dst, ',')
				}
				dst = append(append(append(dst, src[i:keyEnd]...), ':'), src[v:vEnd]...)
				first = false
			}
		}
		i = skipSpace(src, vEnd)
		if i >= len(src) {
			return dst, 0, false
		}
		switch src[i] {
		case ',':
			i = skipSpace(src, i+1)
		case '}':
			return append(dst, '}'), i + 1, true
		default:
			return dst, 0, false
		}
	}
}

// skipValue returns the index after the JSON value at src[i].
func skipValue(src []byte, i int) (int, bool) {
	if i >= len(src) {
		return 0, false
	}
	switch src[i] {
	case '"':
		return SkipString(src, i)
	case '{', '[':
		depth := 0
		for i < len(src) {
			switch src[i] {
			case '"':
				end, ok := SkipString(src, i)
				if !ok {
					return 0, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	default:
		// A number, true, false or null.
		j := i
		for j < len(src) {
			switch src[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return j, j > i
			case '"', '{', '[', ':':
				return 0, false
			}
			j++
		}
		return j, j > i
	}
}

// SkipString returns the index after the JSON string at src[i] (escapes included).
func SkipString(src []byte, i int) (int, bool) {
	if i >= len(src) || src[i] != '"' {
		return 0, false
	}
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

func skipSpace(src []byte, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
		i++
	}
	return i
}
