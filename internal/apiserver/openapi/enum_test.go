package openapi

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestMarkersGeneratedIsCurrent regenerates markers_generated.go from the module sources
// of go.mod and requires the same bytes as the committed file.
func TestMarkersGeneratedIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go run")
	}
	out := filepath.Join(t.TempDir(), "markers_generated.go")
	cmd := exec.Command("go", "run", "./internal/markersgen", "-o", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("markersgen: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("markers_generated.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("markers_generated.go is stale: run go generate ./internal/apiserver/openapi")
	}
}

// TestEnumsAndMarkerDefaults checks the enum values, their description paragraph and the
// +default markers in both documents, as kube-apiserver publishes them.
func TestEnumsAndMarkerDefaults(t *testing.T) {
	const restartDesc = "Restart policy for all containers within the pod. One of Always, OnFailure, Never. In some contexts, only a subset of those values may be permitted. Default to Always. More info: https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#restart-policy\n\nPossible enum values:\n - `\"Always\"`\n - `\"Never\"`\n - `\"OnFailure\"`"
	v3 := document(t, "api/v1")
	v2 := v2Document(t)
	tests := []struct {
		name string
		doc  map[string]any
		path string
		want string // JSON; empty means absent
	}{
		{"v3 restartPolicy", v3, core + "PodSpec/properties/restartPolicy",
			`{"description":` + jsonString(restartDesc) + `,"enum":["Always","Never","OnFailure"],"type":"string"}`},
		{"v2 restartPolicy", v2, "definitions/io.k8s.api.core.v1.PodSpec/properties/restartPolicy",
			`{"description":` + jsonString(restartDesc) + `,"enum":["Always","Never","OnFailure"],"type":"string"}`},
		{"v3 marker default beside an enum", v3, core + "ContainerPort/properties/protocol/default", `"TCP"`},
		{"v3 protocol enum", v3, core + "ContainerPort/properties/protocol/enum", `["SCTP","TCP","UDP"]`},
		{"v2 has no default", v2, "definitions/io.k8s.api.core.v1.ContainerPort/properties/protocol/default", ``},
		{"v2 protocol enum", v2, "definitions/io.k8s.api.core.v1.ContainerPort/properties/protocol/enum", `["SCTP","TCP","UDP"]`},
		{"enum of array items", v3, core + "PersistentVolumeClaimSpec/properties/accessModes/items",
			`{"default":"","enum":["ReadOnlyMany","ReadWriteMany","ReadWriteOnce","ReadWriteOncePod"],"type":"string"}`},
		{"no enum lines for array items", v3, core + "PersistentVolumeClaimSpec/properties/accessModes/description",
			`"accessModes contains the desired access modes the volume should have. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1"`},
		{"pointer to an enum", v3, core + "PodSpec/properties/preemptionPolicy/enum", `["Never","PreemptLowerPriority"]`},
		{"ref() default", v3, core + "AzureDiskVolumeSource/properties/cachingMode/default", `"ReadWrite"`},
		{"scalar marker default", v3, core + "RBDVolumeSource/properties/keyring/default", `"/etc/ceph/keyring"`},
		{"plain string has no enum", v3, core + "Container/properties/name/enum", ``},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := lookup(tc.doc, tc.path)
			if tc.want == "" {
				if ok {
					t.Errorf("%s is present: %v", tc.path, got)
				}
				return
			}
			if !ok {
				t.Fatalf("%s is absent", tc.path)
			}
			b, _ := json.Marshal(got)
			if string(b) != tc.want {
				t.Errorf("%s:\n got %s\nwant %s", tc.path, b, tc.want)
			}
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
