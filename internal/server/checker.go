package server

import (
	"github.com/quotad/quotad/internal/admission/quotaenforce"
	"github.com/quotad/quotad/internal/quota/evaluator"
	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/storage"
)

// CheckingStore returns a registry store over st that reads objects and recomputes quota and
// cluster quota status exactly as a running server's verifier does (registry.Store's
// CheckQuotas and CheckClusterQuotas), for tests and tools that reach a cluster's etcd from
// outside any server. It has no admission chain: it is for reading and checking only.
func CheckingStore(st storage.Store) *registry.Store {
	var store *registry.Store
	reg := evaluator.NewRegistryWithDeviceClasses(deviceClasses{store: &store})
	store = registry.NewStore(registry.Config{
		Storage:   st,
		Catalogue: registry.NewCatalogue(),
		Quota:     quotaAccounting{plugin: quotaenforce.NewPlugin(reg, nil), reg: reg},
	})
	return store
}
