package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/quotad/quotad/internal/server/servertest"
)

// getTable reads a Table of a storage.k8s.io or flowcontrol path through c.
func getTable(ctx context.Context, t *testing.T, c rest.Interface, resource, name string, limit int64) *metav1.Table {
	t.Helper()
	req := c.Get().Resource(resource).SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	if name != "" {
		req = req.Name(name)
	}
	if limit > 0 {
		req = req.Param("limit", fmt.Sprint(limit))
	}
	tbl := &metav1.Table{}
	if err := req.Do(ctx).Into(tbl); err != nil {
		t.Fatalf("Table of %s %s: %v", resource, name, err)
	}
	return tbl
}

func firstCells(tbl *metav1.Table) []string {
	var out []string
	for _, r := range tbl.Rows {
		out = append(out, fmt.Sprint(r.Cells[0]))
	}
	return out
}

// TestTableListAsUpstream: the printers that look across a list print as kube-apiserver's
// do over HTTP. A StorageClass list marks only its effective default (the newest class
// with a default annotation) " (default)", an unlimited list as a limited one's page; a
// GET of a default class marks nothing. A FlowSchema list is ordered by matching
// precedence, then name.
func TestTableListAsUpstream(t *testing.T) {
	t.Parallel()
	s := servertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	def := map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}
	var defaults []*storagev1.StorageClass
	for _, sc := range []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "a-default", Annotations: def}, Provisioner: "example.com/a"},
		{ObjectMeta: metav1.ObjectMeta{Name: "b-plain"}, Provisioner: "example.com/b"},
		{ObjectMeta: metav1.ObjectMeta{Name: "c-default", Annotations: def}, Provisioner: "example.com/c"},
	} {
		made, err := s.Client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if made.Annotations != nil {
			defaults = append(defaults, made)
		}
	}
	// The effective default: c-default if created in a later second than a-default, else
	// (timestamps have whole seconds) a-default, the alphabetically first.
	want := "[a-default (default) b-plain c-default]"
	if defaults[1].CreationTimestamp.After(defaults[0].CreationTimestamp.Time) {
		want = "[a-default b-plain c-default (default)]"
	}
	sc := s.Client.StorageV1().RESTClient()
	if got := fmt.Sprint(firstCells(getTable(ctx, t, sc, "storageclasses", "", 0))); got != want {
		t.Errorf("list: %s, want %s", got, want)
	}
	if got := fmt.Sprint(firstCells(getTable(ctx, t, sc, "storageclasses", "", 10))); got != want {
		t.Errorf("limited list: %s, want %s", got, want)
	}
	for _, name := range []string{"a-default", "c-default"} {
		if got := fmt.Sprint(firstCells(getTable(ctx, t, sc, "storageclasses", name, 0))); got != "["+name+"]" {
			t.Errorf("get: %s, want [%s]", got, name)
		}
	}

	fs := s.Client.FlowcontrolV1().FlowSchemas()
	for _, name := range []string{"zz-first", "aa-second"} {
		if _, err := fs.Create(ctx, &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowcontrolv1.FlowSchemaSpec{
			MatchingPrecedence: 3, PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "global-default"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tbl := getTable(ctx, t, s.Client.FlowcontrolV1().RESTClient(), "flowschemas", "", 0)
	prev, prevName := int64(-1), ""
	for _, r := range tbl.Rows {
		var p int64
		if _, err := fmt.Sscan(fmt.Sprint(r.Cells[2]), &p); err != nil {
			t.Fatalf("MatchingPrecedence %v: %v", r.Cells[2], err)
		}
		name := fmt.Sprint(r.Cells[0])
		if p < prev || (p == prev && name < prevName) {
			t.Errorf("flowschemas out of order: %s (%d) after %s (%d)", name, p, prevName, prev)
		}
		prev, prevName = p, name
	}
	at := map[string]int{}
	for i, name := range firstCells(tbl) {
		at[name] = i
	}
	if a, z := at["aa-second"], at["zz-first"]; z != a+1 {
		t.Errorf("flowschemas %v: aa-second and zz-first (precedence 3) not in name order", firstCells(tbl))
	}
}
