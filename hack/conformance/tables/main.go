// Command tables records how kube-apiserver of the version this module requires
// (k8s.io/kubernetes v1.37.2) prints Tables, for quotad's tests to compare against:
//
//   - upstream-columns.json: the column definitions of every kind
//     pkg/printers/internalversion's AddHandlers registers, keyed "group/Kind";
//   - upstream-tables/<group>.<Kind>.json, one per kind quotad serves: sample objects (as
//     versioned JSON, defaulted as stored) and the columns, cells and row conditions
//     upstream's table convertor for that kind returns for each sample alone (a GET) and
//     for all of them as one list (a LIST; some printers look across the list).
//
// Each sample goes the way of a stored object in kube-apiserver: versioned JSON decoded
// by legacyscheme's codecs (defaulting, conversion to the internal version), then printed
// by the kind's storage convertor: printerstorage.TableConvertor with AddHandlers (wide),
// or rest.NewDefaultTableConvertor for the kinds whose storage uses it. Printers measure
// ages with time.Since; every timestamp of the internal object is moved by (wall clock −
// the fixed now) just before printing, so ages are as at the fixed now (all of
// HumanDuration's roundings are down, so the few microseconds printing takes never
// show). The default convertor prints absolute times and sees the object unmoved.
//
// Run from hack/conformance:
//
//	go run ./tables                       # writes ../../internal/registry/testdata
//	go run ./tables -out DIR
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/admissionregistration/install"
	_ "k8s.io/kubernetes/pkg/apis/apiserverinternal/install"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/certificates/install"
	_ "k8s.io/kubernetes/pkg/apis/coordination/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	_ "k8s.io/kubernetes/pkg/apis/events/install"
	_ "k8s.io/kubernetes/pkg/apis/flowcontrol/install"
	_ "k8s.io/kubernetes/pkg/apis/lifecycle/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	_ "k8s.io/kubernetes/pkg/apis/node/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	_ "k8s.io/kubernetes/pkg/apis/storagemigration/install"
	"k8s.io/kubernetes/pkg/printers"
	printersinternal "k8s.io/kubernetes/pkg/printers/internalversion"
	printerstorage "k8s.io/kubernetes/pkg/printers/storage"
)

// now is the instant the recorded ages are measured at; quotad's test prints at it too.
var now = time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)

// defaultConvertor are the resources whose storage in pkg/registry is built with
// rest.NewDefaultTableConvertor (Name, Created At) although some have a printer;
// checkDefaultConvertor reads pkg/registry to keep this list true.
var defaultConvertor = map[schema.GroupKind]string{
	{Group: "", Kind: "LimitRange"}:                           "limitranges",
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:        "roles",
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}: "clusterroles",
	{Group: "storage.k8s.io", Kind: "CSIStorageCapacity"}:     "csistoragecapacities",
}

// Sample is one object of a kind: its name says which branch of the printer it takes.
type Sample struct {
	Name   string
	Object runtime.Object // a k8s.io/api versioned object
}

// fileSample is a sample as written: the object, and the row upstream prints for it alone.
type fileSample struct {
	Name       string                     `json:"name"`
	Object     json.RawMessage            `json:"object"`
	Cells      []interface{}              `json:"cells"`
	Conditions []metav1.TableRowCondition `json:"conditions,omitempty"`
}

type fileRow struct {
	Cells      []interface{}              `json:"cells"`
	Conditions []metav1.TableRowCondition `json:"conditions,omitempty"`
}

// file is upstream-tables/<group>.<Kind>.json.
type file struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Now        string `json:"now"`
	// Convertor is "printer" (pkg/printers/internalversion) or "default" (Name, Created At).
	Convertor         string                         `json:"convertor"`
	ColumnDefinitions []metav1.TableColumnDefinition `json:"columnDefinitions"`
	Samples           []fileSample                   `json:"samples"`
	// List is the rows of all the samples printed as one list, in the printer's order.
	List []fileRow `json:"list"`
}

// recorder is a PrintHandler that keeps each handler's columns as it registers it.
type recorder struct {
	gen     *printers.HumanReadableGenerator
	columns map[reflect.Type][]metav1.TableColumnDefinition
}

func (r *recorder) TableHandler(cols []metav1.TableColumnDefinition, fn interface{}) error {
	r.columns[reflect.TypeOf(fn).In(0)] = cols
	return r.gen.TableHandler(cols, fn)
}

func main() {
	out := flag.String("out", "../../internal/registry/testdata", "directory to write upstream-columns.json and upstream-tables/ in")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(out string) error {
	if err := checkDefaultConvertor(); err != nil {
		return err
	}
	rec := &recorder{gen: printers.NewTableGenerator(), columns: map[reflect.Type][]metav1.TableColumnDefinition{}}
	printersinternal.AddHandlers(rec)

	// 1. The columns of every printed kind.
	cols := map[string][]metav1.TableColumnDefinition{}
	for t, c := range rec.columns {
		gvks, _, err := legacyscheme.Scheme.ObjectKinds(reflect.New(t.Elem()).Interface().(runtime.Object))
		if err != nil {
			return fmt.Errorf("%v: %w", t, err)
		}
		if strings.HasSuffix(gvks[0].Kind, "List") {
			continue
		}
		cols[gvks[0].Group+"/"+gvks[0].Kind] = c
	}
	if err := writeJSON(filepath.Join(out, "upstream-columns.json"), cols); err != nil {
		return err
	}

	// 2. The tables of the kinds quotad serves.
	dir := filepath.Join(out, "upstream-tables")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	convertor := printerstorage.TableConvertor{TableGenerator: rec.gen}
	for _, samples := range kinds() {
		f, err := tableFile(convertor, samples)
		if err != nil {
			return err
		}
		group := "core"
		if gv, _ := schema.ParseGroupVersion(f.APIVersion); gv.Group != "" {
			group = gv.Group
		}
		if err := writeJSON(filepath.Join(dir, group+"."+f.Kind+".json"), f); err != nil {
			return err
		}
	}
	return nil
}

// tableFile prints one kind's samples alone and as a list.
func tableFile(convertor printerstorage.TableConvertor, samples []Sample) (*file, error) {
	ctx := context.Background()
	var f file
	var internals []runtime.Object
	var gvk schema.GroupVersionKind
	for _, s := range samples {
		// 1. Defaulted and encoded as kube-apiserver stores it.
		obj := s.Object
		legacyscheme.Scheme.Default(obj)
		gvks, _, err := legacyscheme.Scheme.ObjectKinds(obj)
		if err != nil {
			return nil, err
		}
		gvk = gvks[0]
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		raw, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		// 2. Decoded as its storage decodes it: to the internal version.
		internal, _, err := legacyscheme.Codecs.UniversalDecoder().Decode(raw, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", gvk.Kind, s.Name, err)
		}
		internals = append(internals, internal)
		t, err := printTable(ctx, convertor, gvk.GroupKind(), internal)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", gvk.Kind, s.Name, err)
		}
		if len(t.Rows) != 1 {
			return nil, fmt.Errorf("%s %s: %d rows", gvk.Kind, s.Name, len(t.Rows))
		}
		f.ColumnDefinitions = t.ColumnDefinitions
		f.Samples = append(f.Samples, fileSample{Name: s.Name, Object: raw, Cells: t.Rows[0].Cells, Conditions: t.Rows[0].Conditions})
	}
	f.APIVersion, f.Kind, f.Now = gvk.GroupVersion().String(), gvk.Kind, now.Format(time.RFC3339)
	f.Convertor = "printer"
	if _, ok := defaultConvertor[gvk.GroupKind()]; ok {
		f.Convertor = "default"
	}

	// 3. All of them as one list.
	ilist, err := legacyscheme.Scheme.New(schema.GroupVersionKind{Group: gvk.Group, Version: runtime.APIVersionInternal, Kind: gvk.Kind + "List"})
	if err != nil {
		return nil, err
	}
	if err := meta.SetList(ilist, internals); err != nil {
		return nil, err
	}
	t, err := printTable(ctx, convertor, gvk.GroupKind(), ilist)
	if err != nil {
		return nil, fmt.Errorf("%s list: %w", gvk.Kind, err)
	}
	for _, r := range t.Rows {
		f.List = append(f.List, fileRow{Cells: r.Cells, Conditions: r.Conditions})
	}
	return &f, nil
}

// printTable converts obj with the convertor of gk's storage.
func printTable(ctx context.Context, convertor printerstorage.TableConvertor, gk schema.GroupKind, obj runtime.Object) (*metav1.Table, error) {
	if resource, ok := defaultConvertor[gk]; ok {
		return rest.NewDefaultTableConvertor(schema.GroupResource{Group: gk.Group, Resource: resource}).ConvertToTable(ctx, obj, nil)
	}
	moved := obj.DeepCopyObject()
	moveTimes(reflect.ValueOf(moved), time.Since(now))
	return convertor.ConvertToTable(ctx, moved, nil)
}

var (
	timeType      = reflect.TypeOf(metav1.Time{})
	microTimeType = reflect.TypeOf(metav1.MicroTime{})
)

// moveTimes adds d to every non-zero metav1.Time and metav1.MicroTime reachable from v.
func moveTimes(v reflect.Value, d time.Duration) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			moveTimes(v.Elem(), d)
		}
	case reflect.Struct:
		switch v.Type() {
		case timeType:
			if t := v.Addr().Interface().(*metav1.Time); !t.IsZero() {
				t.Time = t.Time.Add(d)
			}
			return
		case microTimeType:
			if t := v.Addr().Interface().(*metav1.MicroTime); !t.IsZero() {
				t.Time = t.Time.Add(d)
			}
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				moveTimes(v.Field(i), d)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			moveTimes(v.Index(i), d)
		}
	case reflect.Map:
		// No printed kind keeps a time in a map value; map values are not addressable.
	}
}

// checkDefaultConvertor reads k8s.io/kubernetes/pkg/registry and requires that the
// storages built with rest.NewDefaultTableConvertor are exactly defaultConvertor's
// resources among the kinds printed here.
func checkDefaultConvertor() error {
	dirOut, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/kubernetes").Output()
	if err != nil {
		return fmt.Errorf("go list -m k8s.io/kubernetes: %w", err)
	}
	root := filepath.Join(strings.TrimSpace(string(dirOut)), "pkg", "registry")
	re := regexp.MustCompile(`NewDefaultTableConvertor\(\w+\.Resource\("([a-z]+)"\)\)`)
	found := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllSubmatch(b, -1) {
			found[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	var want []string
	for _, r := range defaultConvertor {
		want = append(want, r)
		if !found[r] {
			return fmt.Errorf("pkg/registry: %s no longer uses the default table convertor", r)
		}
	}
	var got []string
	for r := range found {
		got = append(got, r)
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		return fmt.Errorf("pkg/registry: the default table convertor serves %v, this command knows %v", got, want)
	}
	return nil
}

func writeJSON(path string, v interface{}) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
