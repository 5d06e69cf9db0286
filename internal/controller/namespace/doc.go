// Package namespace is quotad's namespace controller. For every active namespace it keeps a
// `default` ServiceAccount and a `kube-root-ca.crt` ConfigMap holding the cluster CA, as
// upstream's controllers do. For a Terminating namespace it deletes everything inside
// (through the registry, so quotas are credited at once) and then removes the namespace's
// `kubernetes` finalizer, which deletes the namespace.
package namespace
