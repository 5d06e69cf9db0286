package openapi

// TestRequiredMatchesSourceMarkers checks the "required" list of every generated schema
// against the Go sources of its type, with kube-openapi's rule: a +required marker makes a
// field required, +optional makes it optional, and otherwise a field is required unless
// its json tag has omitempty. Reflection cannot see comment markers, so this pins
// requiredOverride to the sources of the module versions in go.mod.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// sourceStruct is one struct type declaration with its fields' json names and markers.
type sourceField struct {
	jsonName, opts    string
	embedded          bool
	embeddedPkg, name string // for embedded fields: package selector and type name
	optional          bool
	required          bool
}

// parsePackages parses the non-test Go files of every package directory and returns the
// struct declarations by import path and type name, and each file's imports.
func parsePackages(t *testing.T, dirs map[string]string) map[string]map[string][]sourceField {
	t.Helper()
	out := map[string]map[string][]sourceField{}
	for pkg, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		structs := map[string][]sourceField{}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			imports := map[string]string{}
			for _, imp := range af.Imports {
				p := strings.Trim(imp.Path.Value, `"`)
				name := p[strings.LastIndex(p, "/")+1:]
				if imp.Name != nil {
					name = imp.Name.Name
				}
				imports[name] = p
			}
			ast.Inspect(af, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					return true
				}
				var fields []sourceField
				for _, f := range st.Fields.List {
					var sf sourceField
					if f.Tag != nil {
						tag := reflect.StructTag(strings.Trim(f.Tag.Value, "`")).Get("json")
						sf.jsonName, sf.opts, _ = strings.Cut(tag, ",")
					}
					if len(f.Names) == 0 {
						sf.embedded = true
						switch e := f.Type.(type) {
						case *ast.Ident:
							sf.embeddedPkg, sf.name = pkg, e.Name
						case *ast.SelectorExpr:
							sf.embeddedPkg, sf.name = imports[e.X.(*ast.Ident).Name], e.Sel.Name
						case *ast.StarExpr:
							continue
						}
					} else {
						sf.name = f.Names[0].Name
					}
					if f.Doc != nil {
						for _, c := range f.Doc.List {
							text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
							marker, _, _ := strings.Cut(text, "=")
							switch strings.TrimSpace(marker) {
							case "+optional":
								sf.optional = true
							case "+required":
								sf.required = true
							}
						}
					}
					fields = append(fields, sf)
				}
				structs[ts.Name.Name] = fields
				return true
			})
		}
		out[pkg] = structs
	}
	return out
}

func TestRequiredMatchesSourceMarkers(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go tool not available: %v", err)
	}
	defs := newDefinitions(false)
	if err := defineCommon(defs); err != nil {
		t.Fatal(err)
	}
	rs, err := resolve(served())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.builtin {
			if err := defineResource(defs, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	pkgSet := map[string]bool{}
	for _, typ := range defs.types {
		pkgSet[typ.PkgPath()] = true
	}
	// Embedded structs may live in packages no schema is named after (e.g. TypeMeta).
	pkgSet["k8s.io/apimachinery/pkg/apis/meta/v1"] = true
	pkgs := make([]string, 0, len(pkgSet))
	for p := range pkgSet {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	cmd := exec.Command(goTool, append([]string{"list", "-f", "{{.ImportPath}} {{.Dir}}"}, pkgs...)...)
	listed, err := cmd.Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	dirs := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(listed)), "\n") {
		pkg, dir, _ := strings.Cut(line, " ")
		dirs[pkg] = dir
	}
	sources := parsePackages(t, dirs)

	// expected computes the required JSON fields of a struct the way collect flattens it.
	var expected func(pkg, name string, seen map[string]bool, out *[]string) bool
	expected = func(pkg, name string, seen map[string]bool, out *[]string) bool {
		fields, ok := sources[pkg][name]
		if !ok {
			return false
		}
		for _, f := range fields {
			if f.jsonName == "-" && f.opts == "" {
				continue
			}
			if f.embedded && f.jsonName == "" {
				if !expected(f.embeddedPkg, f.name, seen, out) {
					return false
				}
				continue
			}
			jsonName := f.jsonName
			if jsonName == "" {
				jsonName = f.name
			}
			if seen[jsonName] || !ast.IsExported(f.name) {
				continue
			}
			seen[jsonName] = true
			omit := hasOption(f.opts, "omitempty") || hasOption(f.opts, "omitzero")
			if f.required || (!f.optional && !omit) {
				*out = append(*out, jsonName)
			}
		}
		return true
	}

	checked := 0
	for name, typ := range defs.types {
		s := defs.schemas[name]
		if s["type"] != "object" || typ.Kind() != reflect.Struct {
			continue
		}
		if _, special := specialTypes(typ); special {
			continue
		}
		var want []string
		if !expected(typ.PkgPath(), typ.Name(), map[string]bool{}, &want) {
			t.Errorf("%s: source of %v not found", name, typ)
			continue
		}
		var got []string
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				got = append(got, r.(string))
			}
		}
		sort.Strings(want)
		sort.Strings(got)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: required %v, the source markers say %v", name, got, want)
		}
		checked++
	}
	if checked < 100 {
		t.Errorf("checked only %d schemas", checked)
	}
}
