package integration

import (
	"testing"

	"github.com/quotad/quotad/internal/server/servertest"
)

// TestConformanceVersion: /version, read by client-go's discovery as kubectl does, reports
// the emulated Kubernetes v1.37 in apimachinery's version.Info shape.
func TestConformanceVersion(t *testing.T) {
	s := servertest.Start(t)
	v, err := s.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.Major != "1" || v.Minor != "37" || v.EmulationMajor != "1" || v.EmulationMinor != "37" ||
		v.MinCompatibilityMajor != "1" || v.MinCompatibilityMinor != "36" ||
		v.GitVersion != "v1.37.0+quotad" || v.BuildDate == "" || v.GoVersion == "" || v.Compiler != "gc" || v.Platform == "" {
		t.Fatalf("version: %+v", v)
	}
}
