// Command markersgen writes the comment markers of the k8s.io API types that reflection
// cannot see, as kube-openapi's generator reads them from the sources: the values of every
// +enum string type (the typed constants declared for it) with the description lines
// kube-openapi adds, and every field's +default= marker. It parses the sources of the
// module versions in go.mod, found in the module cache with `go list -m -json`, and emits
// one Go file of package openapi (run by `go generate` in that package).
//
// Usage: markersgen -o markers_generated.go
package main
