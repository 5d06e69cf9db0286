package openapi

import "testing"

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
