// Package serviceaccount is upstream's ServiceAccount admission plugin for pods being
// created: spec.serviceAccountName defaults to "default"; the named ServiceAccount must
// exist (else 403 "error looking up service account <ns>/<name>: ..."); and unless
// automounting is off (on the pod, else on the ServiceAccount) a projected
// kube-api-access-<5 random chars> volume (a bound token of 3607 s, the kube-root-ca.crt
// ConfigMap's ca.crt and the namespace from the downward API) is mounted read-only at
// /var/run/secrets/kubernetes.io/serviceaccount in every container and init container that
// does not already mount something there.
//
// Mirror pods and subresources are left alone. Pod updates may not change the service
// account (pod validation says so); the plugin does not act on them.
package serviceaccount
