package registry

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// upstreamFieldLabels is testdata/upstream-fieldlabels.json (hack/conformance/fieldlabels).
type upstreamFieldLabels struct {
	Candidates []string `json:"candidates"`
	Kinds      map[string]struct {
		Accepts map[string]string `json:"accepts"`
		Refusal string            `json:"refusal"`
	} `json:"kinds"`
}

// readUpstreamFieldLabels reads testdata/upstream-fieldlabels.json.
func readUpstreamFieldLabels(t *testing.T) upstreamFieldLabels {
	t.Helper()
	b, err := os.ReadFile("testdata/upstream-fieldlabels.json")
	if err != nil {
		t.Fatal(err)
	}
	var up upstreamFieldLabels
	if err := json.Unmarshal(b, &up); err != nil {
		t.Fatal(err)
	}
	return up
}

// noSuchField is the candidate each kind's refusal is recorded for.
const noSuchField = "no.such.field"

// TestFieldLabelsAsUpstream: every served kind converts the labels of field selectors as
// kube-apiserver v1.37.2's scheme does (testdata/upstream-fieldlabels.json, recorded from
// its schemes' ConvertFieldLabel): the same labels accepted, each becoming the same label,
// and each refused with the same text. quotad's own kinds (quota.openshift.io,
// quota.quotad.io), which no upstream scheme has, answer as a kind without a conversion
// func of its own: metadata.name and metadata.namespace.
func TestFieldLabelsAsUpstream(t *testing.T) {
	up := readUpstreamFieldLabels(t)
	defaultKind := up.Kinds["/v1/ConfigMap"]
	checked := 0
	for _, res := range NewCatalogue().All() {
		if res.Review {
			continue
		}
		gvk := res.GVR.GroupVersion().WithKind(res.Kind)
		key := gvk.Group + "/" + gvk.Version + "/" + gvk.Kind
		want, ok := up.Kinds[key]
		if !ok {
			if gvk.Group != "quota.openshift.io" && gvk.Group != "quota.quotad.io" {
				t.Errorf("%s: not in the upstream record", key)
				continue
			}
			want = defaultKind
		}
		checked++
		for _, c := range up.Candidates {
			got, _, err := res.ConvertFieldLabel(c, "v")
			if to, ok := want.Accepts[c]; ok {
				if err != nil || got != to {
					t.Errorf("%s: %s became %q (%v), want %q", key, c, got, err, to)
				}
				continue
			}
			refusal := strings.ReplaceAll(want.Refusal, noSuchField, c)
			if err == nil || err.Error() != refusal {
				t.Errorf("%s: %s: error %v, want %s", key, c, err, refusal)
			}
		}
	}
	if checked < 60 {
		t.Errorf("checked %d kinds", checked)
	}
}

// TestFieldLabelsOfCustomResources: a custom resource accepts metadata.name, and
// metadata.namespace only when namespaced, refusing the rest with apiextensions-apiserver's
// text.
func TestFieldLabelsOfCustomResources(t *testing.T) {
	for _, namespaced := range []bool{true, false} {
		res := &Resource{GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}, Kind: "Widget",
			Namespaced: namespaced, CRD: &apiextensionsv1.CustomResourceDefinition{}}
		for _, tc := range []struct {
			label, err string
		}{
			{label: "metadata.name"},
			{label: "metadata.namespace", err: map[bool]string{false: "field label not supported: metadata.namespace"}[namespaced]},
			{label: "spec.color", err: "field label not supported: spec.color"},
		} {
			got, _, err := res.ConvertFieldLabel(tc.label, "v")
			if tc.err == "" && (err != nil || got != tc.label) {
				t.Errorf("namespaced %v: %s became %q (%v)", namespaced, tc.label, got, err)
			}
			if tc.err != "" && (err == nil || err.Error() != tc.err) {
				t.Errorf("namespaced %v: %s: error %v, want %s", namespaced, tc.label, err, tc.err)
			}
		}
	}
}
