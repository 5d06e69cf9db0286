package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// sources are the modules whose packages are parsed: the whole module, or the listed
// package directories of it.
var sources = []struct {
	module string
	dirs   []string
}{
	{module: "k8s.io/api"},
	{module: "k8s.io/apimachinery", dirs: []string{"pkg/apis/meta/v1"}},
	{module: "k8s.io/apiextensions-apiserver", dirs: []string{"pkg/apis/apiextensions/v1"}},
}

func main() {
	out := flag.String("o", "markers_generated.go", "output file")
	flag.Parse()
	b, err := generate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "markersgen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "markersgen:", err)
		os.Exit(1)
	}
}

// module is one entry of `go list -m -json`.
type module struct {
	Path, Version, Dir string
}

// constant is one declared constant: its package, declared type (import path "." name,
// or "" when untyped), value expression and doc comment.
type constant struct {
	pkg, name, typ string
	value          ast.Expr
	imports        map[string]string
	comment        string
}

// pkgInfo is what markersgen learns from one package.
type pkgInfo struct {
	enums     map[string]bool // type name → has +enum and underlying string
	constants map[string]*constant
	defaults  map[string]string // "Type.Field" → marker value
	imports   map[string]map[string]string
}

func generate() ([]byte, error) {
	// 1. Find the module directories of the versions in go.mod.
	var mods []module
	for _, src := range sources {
		cmd := exec.Command("go", "list", "-m", "-json", src.module)
		cmd.Stderr = os.Stderr
		b, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("go list -m %s: %w", src.module, err)
		}
		var m module
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		if m.Dir == "" {
			return nil, fmt.Errorf("module %s is not in the module cache (go mod download %s)", src.module, src.module)
		}
		mods = append(mods, m)
	}
	// 2. Parse every package.
	pkgs := map[string]*pkgInfo{}
	for i, src := range sources {
		m := mods[i]
		dirs := src.dirs
		if dirs == nil {
			err := filepath.WalkDir(m.Dir, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if d.IsDir() {
					if n := d.Name(); path != m.Dir && (n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
						return filepath.SkipDir
					}
					rel, _ := filepath.Rel(m.Dir, path)
					dirs = append(dirs, rel)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
		for _, rel := range dirs {
			importPath := m.Path
			if rel != "." {
				importPath += "/" + filepath.ToSlash(rel)
			}
			p, err := parsePackage(importPath, filepath.Join(m.Dir, rel))
			if err != nil {
				return nil, err
			}
			if p != nil {
				pkgs[importPath] = p
			}
		}
	}
	// 3. Collect the enum values: every constant whose type is an enum type.
	type value struct{ name, value, comment string }
	enums := map[string][]value{}
	for path, p := range pkgs {
		for name := range p.enums {
			enums[path+"."+name] = nil
		}
	}
	var pkgNames []string
	for path := range pkgs {
		pkgNames = append(pkgNames, path)
	}
	sort.Strings(pkgNames)
	for _, path := range pkgNames {
		p := pkgs[path]
		var names []string
		for n := range p.constants {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			c := p.constants[n]
			if _, ok := enums[c.typ]; !ok {
				continue
			}
			v, err := evalString(pkgs, c, 0)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", path, n, err)
			}
			vals := enums[c.typ]
			dup := false
			for i, e := range vals {
				if e.value == v {
					// kube-openapi keeps the longer comment (then the greater one).
					if len(e.comment) < len(c.comment) || (len(e.comment) == len(c.comment) && e.comment > c.comment) {
						vals[i] = value{n, v, c.comment}
					}
					dup = true
				}
			}
			if !dup {
				vals = append(vals, value{n, v, c.comment})
			}
			enums[c.typ] = vals
		}
	}
	// 4. Resolve the defaults (JSON, or ref(Constant)).
	defaults := map[string]string{}
	for _, path := range pkgNames {
		p := pkgs[path]
		for field, raw := range p.defaults {
			raw = strings.TrimSpace(raw)
			if strings.HasPrefix(raw, "ref(") && strings.HasSuffix(raw, ")") {
				name := strings.TrimSuffix(strings.TrimPrefix(raw, "ref("), ")")
				c := p.constants[name]
				if c == nil {
					return nil, fmt.Errorf("%s.%s: +default=%s names no constant of the package", path, field, raw)
				}
				v, err := evalString(pkgs, c, 0)
				if err != nil {
					return nil, fmt.Errorf("%s.%s: %w", path, field, err)
				}
				b, _ := json.Marshal(v)
				defaults[path+"."+field] = string(b)
				continue
			}
			var v any
			if err := json.Unmarshal([]byte(raw), &v); err != nil {
				return nil, fmt.Errorf("%s.%s: +default=%s: %w", path, field, raw, err)
			}
			var buf bytes.Buffer
			if err := json.Compact(&buf, []byte(raw)); err != nil {
				return nil, err
			}
			defaults[path+"."+field] = buf.String()
		}
	}
	// 5. Write the file.
	var b bytes.Buffer
	var versions []string
	for _, m := range mods {
		versions = append(versions, m.Path+" "+m.Version)
	}
	fmt.Fprintf(&b, "// Code generated by markersgen from %s. DO NOT EDIT.\n\npackage openapi\n\n", strings.Join(versions, ", "))
	b.WriteString("// generatedEnum returns, for an +enum string type (import path \".\" type name), its values\n")
	b.WriteString("// in kube-openapi's order and the lines kube-openapi adds to a field's description.\n")
	b.WriteString("func generatedEnum(key string) (values, lines []string, ok bool) {\n\tswitch key {\n")
	var keys []string
	for k := range enums {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		vals := enums[k]
		var quoted, lines []string
		for _, v := range vals {
			quoted = append(quoted, strconv.Quote(v.value))
			lines = append(lines, description(v.name, v.value, v.comment))
		}
		sort.Strings(quoted)
		sort.Strings(lines)
		fmt.Fprintf(&b, "\tcase %q:\n\t\treturn []string{%s}, %s, true\n", k, strings.Join(quoted, ", "), goStrings(lines))
	}
	b.WriteString("\t}\n\treturn nil, nil, false\n}\n\n")
	b.WriteString("// generatedDefault returns the JSON of the +default marker of a struct field (import\n")
	b.WriteString("// path \".\" type name \".\" Go field name).\n")
	b.WriteString("func generatedDefault(key string) (string, bool) {\n\tswitch key {\n")
	keys = keys[:0]
	for k := range defaults {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "\tcase %q:\n\t\treturn %q, true\n", k, defaults[k])
	}
	b.WriteString("\t}\n\treturn \"\", false\n}\n")
	return format.Source(b.Bytes())
}

func goStrings(ss []string) string {
	if len(ss) == 0 {
		return "nil"
	}
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[]string{" + strings.Join(q, ", ") + "}"
}

var whitespace = regexp.MustCompile(`\s+`)

// description is kube-openapi's line for one enum value: " - `"value"` comment", the
// comment without the constant's name at its start and with whitespace runs collapsed
// (and, as its description writer trims every line, no trailing space).
func description(name, value, comment string) string {
	comment = strings.TrimSpace(comment)
	comment = strings.TrimSpace(strings.TrimPrefix(comment, name))
	comment = whitespace.ReplaceAllString(comment, " ")
	return strings.TrimRight(fmt.Sprintf(" - `%q` %s", value, comment), " ")
}

// commentText returns a doc comment's lines joined by spaces, as gengo's comment lines are
// joined for an enum value.
func commentText(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	return strings.Join(strings.Split(strings.TrimRight(g.Text(), "\n"), "\n"), " ")
}

// hasTag reports whether a doc comment has a +name marker line.
func hasTag(g *ast.CommentGroup, name string) bool {
	_, ok := tagValue(g, name)
	return ok
}

// tagValue returns the value of a +name or +name=value marker line of a doc comment.
func tagValue(g *ast.CommentGroup, name string) (string, bool) {
	if g == nil {
		return "", false
	}
	for _, line := range strings.Split(g.Text(), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "+") {
			continue
		}
		k, v, _ := strings.Cut(line[1:], "=")
		if k == name {
			return v, true
		}
	}
	return "", false
}

func parsePackage(importPath, dir string) (*pkgInfo, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	p := &pkgInfo{enums: map[string]bool{}, constants: map[string]*constant{}, defaults: map[string]string{}}
	fset := token.NewFileSet()
	parsed := false
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		if af.Name.Name == "main" || strings.HasSuffix(af.Name.Name, "_test") {
			continue
		}
		parsed = true
		imports := map[string]string{}
		for _, imp := range af.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			name := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			imports[name] = path
		}
		typeKey := func(e ast.Expr) string {
			switch e := e.(type) {
			case *ast.Ident:
				return importPath + "." + e.Name
			case *ast.SelectorExpr:
				if x, ok := e.X.(*ast.Ident); ok && imports[x.Name] != "" {
					return imports[x.Name] + "." + e.Sel.Name
				}
			}
			return ""
		}
		for _, decl := range af.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					doc := spec.Doc
					if doc == nil && gd.Lparen == 0 {
						doc = gd.Doc
					}
					if id, ok := spec.Type.(*ast.Ident); ok && id.Name == "string" && spec.Assign == 0 && hasTag(doc, "enum") {
						p.enums[spec.Name.Name] = true
					}
					if st, ok := spec.Type.(*ast.StructType); ok {
						for _, f := range st.Fields.List {
							v, ok := tagValue(f.Doc, "default")
							if !ok {
								continue
							}
							for _, n := range f.Names {
								p.defaults[spec.Name.Name+"."+n.Name] = v
							}
						}
					}
				case *ast.ValueSpec:
					if gd.Tok != token.CONST {
						continue
					}
					doc := spec.Doc
					if doc == nil && gd.Lparen == 0 {
						doc = gd.Doc
					}
					for i, n := range spec.Names {
						if i >= len(spec.Values) {
							continue
						}
						c := &constant{pkg: importPath, name: n.Name, value: spec.Values[i], imports: imports, comment: commentText(doc)}
						if spec.Type != nil {
							c.typ = typeKey(spec.Type)
						} else if call, ok := spec.Values[i].(*ast.CallExpr); ok && len(call.Args) == 1 {
							c.typ = typeKey(call.Fun)
						}
						p.constants[n.Name] = c
					}
				}
			}
		}
	}
	if !parsed {
		return nil, nil
	}
	return p, nil
}

// evalString evaluates a string constant: literals, concatenations, conversions and
// references to other constants.
func evalString(pkgs map[string]*pkgInfo, c *constant, depth int) (string, error) {
	if depth > 20 {
		return "", errors.New("constant references too deep")
	}
	var eval func(e ast.Expr) (string, error)
	eval = func(e ast.Expr) (string, error) {
		switch e := e.(type) {
		case *ast.BasicLit:
			if e.Kind != token.STRING {
				return "", fmt.Errorf("not a string: %s", e.Value)
			}
			return strconv.Unquote(e.Value)
		case *ast.ParenExpr:
			return eval(e.X)
		case *ast.BinaryExpr:
			if e.Op != token.ADD {
				return "", fmt.Errorf("operator %s", e.Op)
			}
			a, err := eval(e.X)
			if err != nil {
				return "", err
			}
			b, err := eval(e.Y)
			return a + b, err
		case *ast.CallExpr:
			if len(e.Args) != 1 {
				return "", errors.New("call")
			}
			return eval(e.Args[0])
		case *ast.Ident:
			if o := pkgs[c.pkg]; o != nil && o.constants[e.Name] != nil {
				return evalString(pkgs, o.constants[e.Name], depth+1)
			}
			return "", fmt.Errorf("unknown constant %s", e.Name)
		case *ast.SelectorExpr:
			if x, ok := e.X.(*ast.Ident); ok {
				if o := pkgs[c.imports[x.Name]]; o != nil && o.constants[e.Sel.Name] != nil {
					return evalString(pkgs, o.constants[e.Sel.Name], depth+1)
				}
			}
			return "", fmt.Errorf("unknown constant %s.%s", e.X, e.Sel.Name)
		}
		return "", fmt.Errorf("expression %T", e)
	}
	return eval(c.value)
}
