// Package crd keeps the registry catalogue in step with CustomResourceDefinitions: the custom
// resources of every stored CRD are served (on every quotad replica, since it watches
// storage), and a deleted CRD's custom resources are deleted through the registry (quotas
// credited) before its cleanup finalizer is removed and it disappears.
package crd
