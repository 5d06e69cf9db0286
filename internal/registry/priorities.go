package registry

import "k8s.io/apimachinery/pkg/runtime/schema"

// APIPriority is the group and version priority kube-apiserver's aggregator gives the
// APIService of a built-in group-version (cmd/kube-apiserver's apiVersionPriorities of
// v1.37; quota.openshift.io as OpenShift registers it; quota.quotad.io, quotad's own, just
// after it). Discovery lists groups by it and
// the APIService controller writes it. ok is false for other group-versions (custom
// resources' groups among them).
func APIPriority(gv schema.GroupVersion) (group, version int32, ok bool) {
	p, ok := apiPriorities[gv]
	return p[0], p[1], ok
}

// GroupPriority is the group priority of a group in any version: CRDs' 1000 for groups
// without a built-in one.
func GroupPriority(group string) int32 {
	for gv, p := range apiPriorities {
		if gv.Group == group {
			return p[0]
		}
	}
	return 1000
}

var apiPriorities = func() map[schema.GroupVersion][2]int32 {
	gv := func(g, v string) schema.GroupVersion { return schema.GroupVersion{Group: g, Version: v} }
	return map[schema.GroupVersion][2]int32{
		gv("", "v1"):                             {18000, 1},
		gv("apps", "v1"):                         {17800, 15},
		gv("events.k8s.io", "v1"):                {17750, 15},
		gv("authentication.k8s.io", "v1"):        {17700, 15},
		gv("authorization.k8s.io", "v1"):         {17600, 15},
		gv("autoscaling", "v1"):                  {17500, 15},
		gv("autoscaling", "v2"):                  {17500, 30},
		gv("batch", "v1"):                        {17400, 15},
		gv("certificates.k8s.io", "v1"):          {17300, 15},
		gv("networking.k8s.io", "v1"):            {17200, 15},
		gv("policy", "v1"):                       {17100, 15},
		gv("rbac.authorization.k8s.io", "v1"):    {17000, 15},
		gv("storage.k8s.io", "v1"):               {16800, 15},
		gv("apiextensions.k8s.io", "v1"):         {16700, 15},
		gv("admissionregistration.k8s.io", "v1"): {16700, 15},
		gv("scheduling.k8s.io", "v1"):            {16600, 15},
		gv("coordination.k8s.io", "v1"):          {16500, 15},
		gv("node.k8s.io", "v1"):                  {16300, 15},
		gv("discovery.k8s.io", "v1"):             {16200, 15},
		gv("resource.k8s.io", "v1"):              {16200, 21},
		gv("flowcontrol.apiserver.k8s.io", "v1"): {16100, 21},
		gv("internal.apiserver.k8s.io", "v1"):    {16000, 9},
		gv("storagemigration.k8s.io", "v1"):      {15800, 15},
		gv("quota.openshift.io", "v1"):           {9900, 15},
		gv("quota.quotad.io", "v1"):              {9800, 15},
	}
}()
