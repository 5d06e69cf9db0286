// Command fieldlabels records how kube-apiserver of the version this module requires
// (k8s.io/kubernetes v1.37.2) converts the labels of field selectors, for quotad's tests
// to compare against: upstream-fieldlabels.json holds, for every versioned kind of
// kube-apiserver's schemes (legacyscheme, apiextensions-apiserver's, kube-aggregator's),
// what the scheme's ConvertFieldLabel answers for each candidate label: the label it
// becomes, or (for the labels it refuses) the error, which the list and watch handlers
// return as a 400 Bad Request. A kind without a conversion func of its own answers with
// runtime.DefaultMetaV1FieldSelectorConversion (metadata.name and metadata.namespace).
//
// The candidates are every label some kind's conversion func or selectable field set
// names, and one no kind has ("no.such.field"). Refusals are recorded once per kind, for
// "no.such.field": every refusal of a kind is that text with the refused label in its
// place.
//
// Run from hack/conformance:
//
//	go run ./fieldlabels                  # writes ../../internal/registry/testdata
//	go run ./fieldlabels -out DIR
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationinstall "k8s.io/kube-aggregator/pkg/apis/apiregistration/install"
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
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	_ "k8s.io/kubernetes/pkg/apis/node/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	_ "k8s.io/kubernetes/pkg/apis/storagemigration/install"
)

// NoSuchField is the candidate no kind accepts; each kind's refusal is recorded for it.
const NoSuchField = "no.such.field"

// candidates are the labels asked of every kind.
var candidates = []string{
	"metadata.name", "metadata.namespace", "metadata.uid", NoSuchField,
	// core/v1 Pod (spec.host is the old name of spec.nodeName)
	"spec.nodeName", "spec.host", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
	"spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs", "status.nominatedNodeName",
	// core/v1 Node, ReplicationController, Secret, Service; apps and batch
	"spec.unschedulable", "status.replicas", "type", "spec.clusterIP", "spec.type", "status.successful",
	// core/v1 Event
	"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
	"involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
	"reason", "reportingComponent", "source",
	// events.k8s.io Event
	"regarding.kind", "regarding.namespace", "regarding.name", "regarding.uid", "regarding.apiVersion",
	"regarding.resourceVersion", "regarding.fieldPath", "reportingController",
	// certificates.k8s.io
	"spec.signerName", "spec.podName",
	// resource.k8s.io ResourceSlice
	"spec.driver", "spec.pool.name",
}

// Kind is what one kind's conversion answers.
type Kind struct {
	// Accepts maps each accepted candidate to the label it becomes.
	Accepts map[string]string `json:"accepts"`
	// Refusal is the error for NoSuchField.
	Refusal string `json:"refusal"`
}

// File is upstream-fieldlabels.json.
type File struct {
	Candidates []string `json:"candidates"`
	// Kinds is keyed "group/version/Kind" ("" group for core).
	Kinds map[string]Kind `json:"kinds"`
}

func main() {
	out := flag.String("out", "../../internal/registry/testdata", "directory to write upstream-fieldlabels.json in")
	flag.Parse()
	ext := runtime.NewScheme()
	apiextensionsinstall.Install(ext)
	agg := runtime.NewScheme()
	apiregistrationinstall.Install(agg)
	f := File{Candidates: candidates, Kinds: map[string]Kind{}}
	for _, s := range []*runtime.Scheme{legacyscheme.Scheme, ext, agg} {
		for gvk := range s.AllKnownTypes() {
			if gvk.Version == runtime.APIVersionInternal || strings.HasSuffix(gvk.Kind, "List") || strings.HasSuffix(gvk.Kind, "Options") ||
				gvk.Kind == "WatchEvent" || gvk.Kind == "Status" || gvk.Kind == "APIVersions" || gvk.Kind == "APIGroupList" || gvk.Kind == "APIGroup" || gvk.Kind == "APIResourceList" {
				continue
			}
			f.Kinds[key(gvk)] = convert(s, gvk)
		}
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(filepath.Join(*out, "upstream-fieldlabels.json"), append(b, '\n'), 0o644); err != nil {
		fail(err)
	}
	names := make([]string, 0, len(f.Kinds))
	for k := range f.Kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Printf("%d kinds\n", len(names))
}

func key(gvk schema.GroupVersionKind) string { return gvk.Group + "/" + gvk.Version + "/" + gvk.Kind }

func convert(s *runtime.Scheme, gvk schema.GroupVersionKind) Kind {
	k := Kind{Accepts: map[string]string{}}
	for _, c := range candidates {
		label, _, err := s.ConvertFieldLabel(gvk, c, "v")
		switch {
		case err == nil:
			k.Accepts[c] = label
		case c == NoSuchField:
			k.Refusal = err.Error()
		}
	}
	return k
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
