package openapi

import (
	"strconv"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// BenchmarkBuild measures a full rebuild, as done when a CRD changes.
func BenchmarkBuild(b *testing.B) {
	resources := served()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(resources); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRebuildCRDChange measures a Builder rebuild after one CRD schema changed.
func BenchmarkRebuildCRDChange(b *testing.B) {
	builder := NewBuilder()
	resources := served()
	if _, err := builder.Build(resources); err != nil {
		b.Fatal(err)
	}
	spec := resources[len(resources)-1].CRDSchema.Properties["spec"]
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		spec.Properties["field"] = apiextensionsv1.JSONSchemaProps{Type: "string", Description: strconv.Itoa(i)}
		if _, err := builder.Build(resources); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildV2 measures a full /openapi/v2 build (JSON, then protobuf through gnostic),
// as done on the first request after a CRD change.
func BenchmarkBuildV2(b *testing.B) {
	resources := served()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := BuildV2(resources); err != nil {
			b.Fatal(err)
		}
	}
}
