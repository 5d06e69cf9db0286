package apiserver

import (
	"encoding/json"
	"flag"
	"strings"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"

	"github.com/quotad/quotad/internal/quota/quotatest"
	"github.com/quotad/quotad/internal/registry"
)

var _ = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestAggregatedMedia(t *testing.T) {
	const v2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	const beta = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
	const pb = "application/vnd.kubernetes.protobuf"
	for _, tc := range []struct{ accept, want string }{
		{"", ""},
		{"application/json", ""},
		{"*/*", ""},
		{v2, mediaJSON},
		{v2 + ",application/json", mediaJSON},
		// kubectl v1.32
		{v2 + "," + beta + ",application/json", mediaJSON},
		// v1.37 serves v2beta1 no more.
		{beta + ",application/json", ""},
		{beta + "," + v2, mediaJSON},
		{"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;profile=nopeer," + v2 + ",application/json", mediaJSON},
		// As kube-apiserver's negotiation: a plain range never picks legacy discovery, it is
		// skipped (so an aggregated range of lower quality still wins), and q=0 is no refusal.
		{"application/json, " + v2 + ";q=0.5", mediaJSON},
		{"application/json;q=0.5, " + v2, mediaJSON},
		{"application/json;q=0.5, " + v2 + ";q=0", mediaJSON},
		{"application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0.5, " + v2, mediaJSON},
		{v2 + ";q=0.5, application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", mediaYAML},
		{v2 + ";q=0", mediaJSON},
		{"*/*;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", mediaJSON},
		{"application/*;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", mediaJSON},
		{"application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", mediaYAML},
		{pb + ";g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json", mediaProtobuf},
		{"text/plain;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json", ""},
		{"application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList," + v2, mediaJSON},
		{"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupList", ""},
		{"application/json;g=other.io;v=v2;as=APIGroupDiscoveryList", ""},
		{v2 + ";sv=v1", ""},
		{"Application/JSON;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", ""},
		{";;,,;q=x", ""},
		{"application/json;as", ""},
		{"/;=;==", ""},
	} {
		if got := aggregatedMedia(tc.accept); got != tc.want {
			t.Errorf("aggregatedMedia(%q) = %q, want %q", tc.accept, got, tc.want)
		}
	}
}

// TestAggregatedDiscoveryGolden pins the aggregated discovery document of one group.
func TestAggregatedDiscoveryGolden(t *testing.T) {
	cat := registry.NewCatalogue()
	list := discoveryList(cat.All(), cat.Reviews(), false)
	var group *apidiscoveryv2.APIGroupDiscovery
	for i := range list.Items {
		if list.Items[i].Name == "rbac.authorization.k8s.io" {
			group = &list.Items[i]
		}
	}
	if group == nil {
		t.Fatal("no rbac.authorization.k8s.io group")
	}
	got, err := json.MarshalIndent(group, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	quotatest.GoldenFile(t, "discovery-rbac.json", string(got))
}

// TestGroupOrder checks that /apis lists groups as kube-apiserver does: by the aggregator's
// group priority, then by name, custom resource groups last.
func TestGroupOrder(t *testing.T) {
	names := []string{"zeta.example.com", "storage.k8s.io", "apiextensions.k8s.io", "apps", "a.example.com", "rbac.authorization.k8s.io",
		"batch", "authorization.k8s.io", "authentication.k8s.io", "scheduling.k8s.io", "admissionregistration.k8s.io", "events.k8s.io"}
	sortGroups(names)
	want := "apps events.k8s.io authentication.k8s.io authorization.k8s.io batch rbac.authorization.k8s.io storage.k8s.io " +
		"admissionregistration.k8s.io apiextensions.k8s.io scheduling.k8s.io a.example.com zeta.example.com"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("sortGroups:\n got %s\nwant %s", got, want)
	}
}

// FuzzAggregatedMedia checks that no Accept header panics the negotiation, and that it
// only ever picks a media type aggregated discovery is served in.
func FuzzAggregatedMedia(f *testing.F) {
	for _, s := range []string{"", "application/json", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0.5,*/*", "*/*;q=x;;=,", "/;=="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		switch m := aggregatedMedia(accept); m {
		case "", mediaJSON, mediaYAML, mediaProtobuf:
		default:
			t.Errorf("aggregatedMedia(%q) = %q", accept, m)
		}
	})
}
