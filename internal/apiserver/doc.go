// Package apiserver is quotad's HTTP edge: routing of the Kubernetes REST paths, discovery,
// OpenAPI v3, get/list/watch/create/update/patch/delete handlers, status and scale
// subresources, server-side Table output, dryRun and fieldValidation, authentication, and the
// only place that writes metav1.Status errors.
//
// Invariants: every response is a Kubernetes object or a metav1.Status; a handler never
// panics the process (panics become 500s); request bodies over 3 MiB are refused with 413
// before decoding.
package apiserver
