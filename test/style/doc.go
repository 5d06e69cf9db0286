// Package style checks the house style of the whole repository that go vet does not: every
// file as gofmt writes it, and import groups (the standard library, then other modules,
// then quotad's own packages, each group sorted and separated by one blank line).
package style
