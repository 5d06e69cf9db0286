package main

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

func TestPressure(t *testing.T) {
	for _, tc := range []struct {
		used, hard string
		pct, bar   string
	}{
		{"0", "1", "0%", "[----------]"},
		{"850m", "1", "85%", "[########--]"},
		{"999m", "1", "99%", "[#########-]"},
		{"1", "1", "100%", "[##########]"},
		{"2", "1", "200%", "[##########]"},
		{"664Mi", "1Gi", "64%", "[######----]"},
		{"1Ei", "8Ei", "12%", "[#---------]"},
		{"1", "3", "33%", "[###-------]"},
		{"0", "0", "0%", "[----------]"},
		{"1", "0", ">100%", "[##########]"},
	} {
		p := pressure(resource.MustParse(tc.used), resource.MustParse(tc.hard))
		if got := percentText(p); got != tc.pct {
			t.Errorf("%s/%s: percent %s, want %s", tc.used, tc.hard, got, tc.pct)
		}
		if got := bar(p); got != tc.bar {
			t.Errorf("%s/%s: bar %s, want %s", tc.used, tc.hard, got, tc.bar)
		}
	}
}

func TestUsageRowOver(t *testing.T) {
	for _, tc := range []struct {
		used, hard string
		warnAt     int64
		want       bool
	}{
		{"80", "100", 80, false}, // at the threshold is not past it
		{"81", "100", 80, true},
		{"99", "100", 0, false},
		{"101", "100", 0, true}, // above hard (Warn/Audit)
		{"1", "0", 0, true},
	} {
		used, hard := resource.MustParse(tc.used), resource.MustParse(tc.hard)
		r := usageRow{used: used, hard: hard, pressure: pressure(used, hard), warnAt: tc.warnAt}
		if got := r.over(); got != tc.want {
			t.Errorf("%s/%s warn-at %d: over %v, want %v", tc.used, tc.hard, tc.warnAt, got, tc.want)
		}
	}
}

func TestSplitTypeName(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		typ, name string
		wantErr   bool
	}{
		{[]string{"pod/x"}, "pod", "x", false},
		{[]string{"pod", "x"}, "pod", "x", false},
		{[]string{"deployments.apps/web"}, "deployments.apps", "web", false},
		{[]string{"pod"}, "", "", true},
		{[]string{"pod/"}, "", "", true},
		{[]string{"pod/x", "y"}, "", "", true},
	} {
		typ, name, err := splitTypeName(tc.args)
		if (err != nil) != tc.wantErr || typ != tc.typ || name != tc.name {
			t.Errorf("%v: %q %q %v", tc.args, typ, name, err)
		}
	}
}

func TestReadObjects(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir+"/b.yaml", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b1}\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: b2}\n")
	writeFile(t, dir+"/a.json", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"a"}}`)
	writeFile(t, dir+"/notes.txt", "not a manifest")
	writeFile(t, dir+"/c.yml", "---\napiVersion: v1\nkind: Pod\nmetadata: {name: c1}\n---\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: c2}\n")
	objs, err := readObjects(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, objectRef(o))
	}
	want := "service/a configmap/b1 secret/b2 pod/c1 pod/c2"
	if strings.Join(got, " ") != want {
		t.Errorf("got %v, want %s", got, want)
	}
	writeFile(t, dir+"/bad.yaml", "kind: Pod\n")
	if _, err := readObjects(dir+"/bad.yaml", nil); err == nil || !strings.Contains(err.Error(), "no apiVersion or kind") {
		t.Errorf("an object without apiVersion: %v", err)
	}
}
