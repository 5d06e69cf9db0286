package codec

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestPrune(t *testing.T) {
	paths := Paths{}
	paths.Add("metadata", "name")
	paths.Add("metadata", "labels")
	paths.AddDotted("spec.nodeName")
	paths.AddDotted("source")
	for _, c := range []struct{ in, want string }{
		{`{}`, `{}`},
		{`{"metadata":{"name":"a","uid":"u","labels":{"x":"y"}},"spec":{"containers":[{"name":"c"}],"nodeName":"n"}}`,
			`{"metadata":{"name":"a","labels":{"x":"y"}},"spec":{"nodeName":"n"}}`},
		// A kept path's parent that is not an object is kept as it is.
		{`{"metadata":null,"spec":"s"}`, `{"metadata":null,"spec":"s"}`},
		// Strings holding the JSON's punctuation, escapes, numbers and literals are skipped whole.
		{`{"a":"}]\"{","metadata":{"n":[1,{"b":"\\"}],"name":"x"},"b":-1.5e3,"c":true,"source":{"component":"k"}}`,
			`{"metadata":{"name":"x"},"source":{"component":"k"}}`},
		{` { "metadata" : { "name" : "a" } , "z" : [ ] } `, `{"metadata":{"name":"a"}}`},
	} {
		got, ok := Prune([]byte("prefix"), []byte(c.in), paths)
		if !ok || string(got) != "prefix"+c.want {
			t.Errorf("Prune(%s) = %s, %v; want %s", c.in, got, ok, c.want)
		}
	}
	for _, in := range []string{``, `[]`, `"s"`, `{"a":1`, `{"a":}`, `{"a":1}x`, `{"a\"b":1}`, `{"a":"x}`, `{"a":[1,2}`, `{a:1}`, `{"a":1,}`} {
		if got, ok := Prune([]byte("p"), []byte(in), paths); ok || string(got) != "p" {
			t.Errorf("Prune(%s) = %s, %v; want refused with dst unchanged", in, got, ok)
		}
	}
}

func TestPathsAdd(t *testing.T) {
	p := Paths{}
	p.AddDotted("spec.a.b")
	p.AddDotted("spec")
	p.AddDotted("spec.c")
	p.AddDotted("status.x")
	want := Paths{"spec": nil, "status": Paths{"x": nil}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("paths %v, want %v", p, want)
	}
}

// project is what decoding src and reading paths gives: the same tree with only the paths'
// members (a kept member that is not an object kept whole).
func project(v any, paths Paths) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for k, child := range paths {
		sub, ok := m[k]
		if !ok {
			continue
		}
		if child == nil {
			out[k] = sub
		} else {
			out[k] = project(sub, child)
		}
	}
	return out
}

// FuzzPrune: whatever the input, Prune never panics, and what it accepts from valid JSON
// decodes to the input's decoding projected on the paths.
func FuzzPrune(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"a","labels":{"x":"y"}},"spec":{"nodeName":"n","c":[{"d":"}"}]}}`))
	f.Add([]byte(`{"metadata":null,"spec":{"nodeName":null},"status":{"phase":"Running"}}`))
	f.Add([]byte(`{"a":"\u00e9\\\"","metadata":{"labels":{}},"spec":[1,2,{"nodeName":3}]}`))
	paths := Paths{}
	paths.Add("metadata", "name")
	paths.Add("metadata", "labels")
	paths.AddDotted("spec.nodeName")
	paths.AddDotted("status.phase")
	f.Fuzz(func(t *testing.T, in []byte) {
		got, ok := Prune(nil, in, paths)
		if !ok {
			return
		}
		var full any
		if json.Unmarshal(in, &full) != nil {
			return // not JSON: only its own decoding fails, as it does
		}
		var pruned any
		if err := json.Unmarshal(got, &pruned); err != nil {
			t.Fatalf("Prune(%s) = %s, not JSON: %v", in, got, err)
		}
		if want := project(full, paths); !reflect.DeepEqual(pruned, want) {
			t.Fatalf("Prune(%s) = %s, want the projection %v", in, got, want)
		}
	})
}
