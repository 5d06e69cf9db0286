package jsonpatch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	evanphx "gopkg.in/evanphx/json-patch.v4"
)

// library applies patch with the library whose semantics Apply keeps; panicked reports a
// panic of the library (it has some on odd inputs), which Apply must not share.
func library(doc, patch []byte, copyLimit int64) (out []byte, err error, panicked bool) {
	defer func() {
		if recover() != nil {
			panicked = true
		}
	}()
	evanphx.AccumulatedCopySizeLimit = copyLimit
	defer func() { evanphx.AccumulatedCopySizeLimit = 0 }()
	p, err := evanphx.DecodePatch(patch)
	if err != nil {
		return nil, err, false
	}
	out, err = p.Apply(doc)
	return out, err, false
}

// same checks that Apply and the library agree on doc and patch: the same document, or
// the same error text.
func same(t *testing.T, doc, patch string) {
	t.Helper()
	want, wantErr, panicked := library([]byte(doc), []byte(patch), 1<<20)
	got, err := Apply(context.Background(), []byte(doc), []byte(patch), Limits{MaxCopyBytes: 1 << 20})
	if panicked {
		return
	}
	if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Fatalf("doc %s patch %s: error %v, the library's %v", doc, patch, err, wantErr)
	}
	if string(got) != string(want) {
		t.Fatalf("doc %s patch %s:\n got %s\nwant %s", doc, patch, got, want)
	}
}

func TestSameAsLibrary(t *testing.T) {
	doc := `{"a":{"b":[1,2,{"c":"d"}],"e":null},"f":"g","h~/i":1}`
	for _, patch := range []string{
		`[{"op":"add","path":"/a/b/1","value":9}]`,
		`[{"op":"add","path":"/a/b/-","value":{"x":1}}]`,
		`[{"op":"add","path":"/a/b/-4","value":0}]`,
		`[{"op":"add","path":"/a/b/7","value":0}]`,
		`[{"op":"add","path":"/a/b/x","value":0}]`,
		`[{"op":"add","path":"/a/e/x","value":0}]`,
		`[{"op":"add","path":"/z/y","value":0}]`,
		`[{"op":"add","path":"/h~0~1i","value":2}]`,
		`[{"op":"add","value":2}]`,
		`[{"op":"remove","path":"/a/b/0"},{"op":"remove","path":"/f"}]`,
		`[{"op":"remove","path":"/a/b/-1"}]`,
		`[{"op":"remove","path":"/nope"}]`,
		`[{"op":"remove","path":"/a/b/3"}]`,
		`[{"op":"replace","path":"/a/b/2/c","value":"e"}]`,
		`[{"op":"replace","path":"","value":{"r":1}}]`,
		`[{"op":"replace","path":"","value":"s"}]`,
		`[{"op":"replace","path":"/a/b/9","value":1}]`,
		`[{"op":"replace","path":"/q/b","value":1}]`,
		`[{"op":"move","from":"/a/b","path":"/m"}]`,
		`[{"op":"move","from":"/a/b/0","path":"/a/b/-"}]`,
		`[{"op":"move","from":"/nope/x","path":"/m"}]`,
		`[{"op":"move","from":"/f","path":"/nope/m"}]`,
		`[{"op":"move","path":"/m"}]`,
		`[{"op":"copy","from":"/a","path":"/a/copy"},{"op":"copy","from":"/a","path":"/a/copy2"}]`,
		`[{"op":"copy","from":"/a/b/5","path":"/x"}]`,
		`[{"op":"copy","from":"/a","path":"/x/y"}]`,
		`[{"op":"test","path":"/a/b","value":[1,2,{"c":"d"}]}]`,
		`[{"op":"test","path":"/a/b","value":[1,2]}]`,
		`[{"op":"test","path":"/a/e","value":null}]`,
		`[{"op":"test","path":"/f","value":"g"}]`,
		`[{"op":"test","path":"/f","value":"h"}]`,
		`[{"op":"test","path":"","value":{"a":{"b":[1,2,{"c":"d"}],"e":null},"f":"g","h~/i":1}}]`,
		`[{"op":"test","path":"/zz/a","value":1}]`,
		`[{"op":"nope","path":"/f"}]`,
		`[{"path":"/f"}]`,
		`[{"op":1,"path":"/f"}]`,
		`[{"op":"add","path":1,"value":1}]`,
	} {
		same(t, doc, patch)
	}
	same(t, `[1,2,3]`, `[{"op":"add","path":"/1","value":0}]`)
	same(t, ``, `[{"op":"add","path":"/1","value":0}]`)
	same(t, `{`, `[]`)
}

// TestSameAsLibraryRandom applies random patches of every kind to random documents.
func TestSameAsLibraryRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	paths := []string{"", "/a", "/a/b", "/a/b/0", "/a/b/1", "/a/b/-", "/a/b/-1", "/a/c", "/a/c/d", "/e", "/e/0", "/e/5", "/f", "/g/h", "/a/b/0/x"}
	values := []string{`1`, `"s"`, `null`, `{"x":1}`, `[1,{"y":2}]`, `{"b":[3]}`, `true`}
	kinds := []string{"add", "remove", "replace", "move", "copy", "test"}
	for i := 0; i < 3000; i++ {
		doc := fmt.Sprintf(`{"a":{"b":[%s,{"x":1}],"c":{"d":%s}},"e":[%s],"f":%s}`,
			values[r.IntN(len(values))], values[r.IntN(len(values))], values[r.IntN(len(values))], values[r.IntN(len(values))])
		var ops []string
		for j := r.IntN(5); j >= 0; j-- {
			op := fmt.Sprintf(`{"op":%q,"path":%q`, kinds[r.IntN(len(kinds))], paths[r.IntN(len(paths))])
			if r.IntN(4) > 0 {
				op += fmt.Sprintf(`,"from":%q`, paths[r.IntN(len(paths))])
			}
			if r.IntN(4) > 0 {
				op += `,"value":` + values[r.IntN(len(values))]
			}
			ops = append(ops, op+"}")
		}
		same(t, doc, "["+strings.Join(ops, ",")+"]")
	}
}

func FuzzSameAsLibrary(f *testing.F) {
	f.Add(`{"a":{"b":[1]}}`, `[{"op":"copy","from":"/a","path":"/a/c"}]`)
	f.Add(`[1,2]`, `[{"op":"move","from":"/0","path":"/-"}]`)
	f.Fuzz(func(t *testing.T, doc, patch string) {
		same(t, doc, patch)
	})
}

// TestBounds: too many operations and too many copied bytes are refused with
// kube-apiserver's texts; a doubling copy bomb stops at the copy bound.
func TestBounds(t *testing.T) {
	ops := strings.Repeat(`{"op":"test","path":"/a","value":1},`, 10001)
	_, err := Apply(context.Background(), []byte(`{"a":1}`), []byte("["+strings.TrimSuffix(ops, ",")+"]"), DefaultLimits)
	var tooMany *TooManyOperationsError
	if !errors.As(err, &tooMany) || err.Error() != "The allowed maximum operations in a JSON patch is 10000, got 10001" {
		t.Fatalf("10001 operations: %v", err)
	}

	ann := `{"k":"` + strings.Repeat("v", 1000) + `"}`
	bomb := CopyBomb(ann, 40)
	_, err = Apply(context.Background(), []byte(`{"metadata":{}}`), []byte(bomb), DefaultLimits)
	var copySize *CopySizeError
	if !errors.As(err, &copySize) || !strings.HasPrefix(err.Error(), "Unable to complete the copy, the accumulated size increase of copy is ") ||
		!strings.HasSuffix(err.Error(), ", exceeding the limit 3145728") {
		t.Fatalf("copy bomb: %v", err)
	}
	// The copies stopped at the bound: what they made is at most twice the bound.
	if copySize.Accumulated > 2*DefaultMaxCopyBytes+2000 {
		t.Fatalf("copied %d bytes before stopping", copySize.Accumulated)
	}
	// The same error as the library with the same bound.
	_, libErr, _ := library([]byte(`{"metadata":{}}`), []byte(bomb), DefaultMaxCopyBytes)
	if libErr == nil || libErr.Error() != err.Error() {
		t.Fatalf("library %v, Apply %v", libErr, err)
	}
}

// TestMaxWork: a patch whose moves reach MaxWork stops there with a WorkError; below it
// the patch applies as without the bound.
func TestMaxWork(t *testing.T) {
	doc := []byte(`{"a":[` + strings.TrimSuffix(strings.Repeat(`0,`, 1000), ",") + `]}`)
	patch := []byte(`[` + strings.TrimSuffix(strings.Repeat(`{"op":"add","path":"/a/0","value":1},`, 100), ",") + `]`)
	lim := DefaultLimits
	lim.MaxWork = 50_000
	_, err := Apply(context.Background(), doc, patch, lim)
	var work *WorkError
	if !errors.As(err, &work) || work.Limit != 50_000 || work.Work <= 50_000 ||
		err.Error() != fmt.Sprintf("the JSON patch's operations move and copy %d array elements and bytes, more than the limit 50000", work.Work) {
		t.Fatalf("past the bound: %v", err)
	}
	lim.MaxWork = 1_000_000
	got, err := Apply(context.Background(), doc, patch, lim)
	want, err2 := Apply(context.Background(), doc, patch, DefaultLimits)
	if err != nil || err2 != nil || string(got) != string(want) {
		t.Fatalf("below the bound: %v %v", err, err2)
	}
}

// TestStopsWithItsContext: a patch whose context has ended applies no operation.
func TestStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Apply(ctx, []byte(`{"a":[]}`), []byte(`[{"op":"add","path":"/a/-","value":1}]`), DefaultLimits)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	// A context that ends midway stops at the next operation.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	n := 0
	p, _ := Decode([]byte(`[` + strings.TrimSuffix(strings.Repeat(`{"op":"add","path":"/a/0","value":1},`, 1000), ",") + `]`))
	stop := stopAfter{Context: ctx, n: 10, count: &n}
	_, err = p.Apply(stop, []byte(`{"a":[]}`), DefaultLimits)
	if !errors.Is(err, context.Canceled) || n > 12 {
		t.Fatalf("err %v after %d checks", err, n)
	}
}

// stopAfter is a context whose Err turns Canceled after n calls.
type stopAfter struct {
	context.Context
	n     int
	count *int
}

func (s stopAfter) Err() error {
	*s.count++
	if *s.count > s.n {
		return context.Canceled
	}
	return nil
}
