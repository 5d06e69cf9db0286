package apiserver

import (
	"net"
	"net/http"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotad/quotad/internal/registry"
)

var allVerbs = metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// verbsOf returns the verbs of a resource: every verb but deletecollection for namespaces,
// which upstream does not serve.
func verbsOf(res *registry.Resource) metav1.Verbs {
	if res.Synthesized {
		return metav1.Verbs{"get", "list"}
	}
	if res.AppliedView {
		return metav1.Verbs{"get", "list", "watch"}
	}
	if !servesDeleteCollection(res) {
		return metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"}
	}
	return allVerbs
}

// servesDeleteCollection reports whether DELETE on the collection is served.
func servesDeleteCollection(res *registry.Resource) bool {
	return !(res.GVR.Group == "" && res.GVR.Resource == "namespaces")
}

func serverAddress(r *http.Request) string {
	host := r.Host
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "443")
	}
	return host
}

func (s *Server) serveAPIVersions(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: []string{"v1"},
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: serverAddress(r)},
		},
	})
}

// groups returns the served API groups (core excluded) with their versions, preferred first.
func (s *Server) groups() []metav1.APIGroup {
	byGroup := map[string][]string{}
	seen := map[string]bool{}
	cat := s.cfg.Store.Catalogue()
	for _, res := range append(cat.All(), cat.Reviews()...) {
		g := res.GVR.Group
		if g == "" {
			continue
		}
		k := g + "/" + res.GVR.Version
		if !seen[k] {
			seen[k] = true
			byGroup[g] = append(byGroup[g], res.GVR.Version)
		}
	}
	names := make([]string, 0, len(byGroup))
	for g := range byGroup {
		names = append(names, g)
	}
	sortGroups(names)
	out := make([]metav1.APIGroup, 0, len(names))
	for _, g := range names {
		vs := byGroup[g]
		sort.Slice(vs, func(i, j int) bool { return versionLess(vs[j], vs[i]) })
		grp := metav1.APIGroup{Name: g}
		for _, v := range vs {
			grp.Versions = append(grp.Versions, metav1.GroupVersionForDiscovery{GroupVersion: g + "/" + v, Version: v})
		}
		grp.PreferredVersion = grp.Versions[0]
		out = append(out, grp)
	}
	return out
}

// groupPriority is the GroupPriorityMinimum kube-apiserver's aggregator gives a group's
// APIService (registry.GroupPriority).
func groupPriority(group string) int { return int(registry.GroupPriority(group)) }

// sortGroups orders API groups as kube-apiserver lists them under /apis: by priority,
// highest first, then by name. Clients resolve a resource name served by several groups
// to the first group listing it.
func sortGroups(names []string) {
	sort.SliceStable(names, func(i, j int) bool {
		pi, pj := groupPriority(names[i]), groupPriority(names[j])
		if pi != pj {
			return pi > pj
		}
		return names[i] < names[j]
	})
}

// versionLess orders Kubernetes versions: v1 > v1beta2 > v1beta1 > v1alpha1, then by name.
func versionLess(a, b string) bool {
	rank := func(v string) (int, string) {
		switch {
		case len(v) > 1 && v[0] == 'v':
			for i := 1; i < len(v); i++ {
				if v[i] < '0' || v[i] > '9' {
					if len(v[i:]) >= 4 && v[i:i+4] == "beta" {
						return 2, v
					}
					if len(v[i:]) >= 5 && v[i:i+5] == "alpha" {
						return 1, v
					}
					return 0, v
				}
			}
			return 3, v
		}
		return 0, v
	}
	ra, sa := rank(a)
	rb, sb := rank(b)
	if ra != rb {
		return ra < rb
	}
	if len(sa) != len(sb) {
		return len(sa) < len(sb)
	}
	return sa < sb
}

func (s *Server) serveAPIGroupList(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, metav1.APIGroupList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
		Groups:   s.groups(),
	})
}

func (s *Server) serveAPIGroup(w http.ResponseWriter, r *http.Request, group string) {
	for _, g := range s.groups() {
		if g.Name == group {
			g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
			writeJSON(w, http.StatusOK, g)
			return
		}
	}
	writeError(w, notFoundPath())
}

// apiResources returns the discovery entries of one group-version.
func apiResources(all []*registry.Resource, group, version string) []metav1.APIResource {
	var out []metav1.APIResource
	for _, res := range all {
		if res.GVR.Group != group || res.GVR.Version != version {
			continue
		}
		first := len(out) + 1
		out = append(out, metav1.APIResource{
			Name: res.GVR.Resource, SingularName: res.Singular, Namespaced: res.Namespaced,
			Kind: res.Kind, Verbs: verbsOf(res), ShortNames: res.ShortNames, Categories: res.Categories,
		})
		if registry.ServesApproval(res) {
			out = append(out, metav1.APIResource{Name: res.GVR.Resource + "/approval", Namespaced: res.Namespaced, Kind: res.Kind, Verbs: metav1.Verbs{"get", "patch", "update"}})
		}
		if res.Status {
			out = append(out, metav1.APIResource{Name: res.GVR.Resource + "/status", Namespaced: res.Namespaced, Kind: res.Kind, Verbs: metav1.Verbs{"get", "patch", "update"}})
		}
		if res.Scale {
			out = append(out, metav1.APIResource{Name: res.GVR.Resource + "/scale", Namespaced: res.Namespaced, Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: metav1.Verbs{"get", "patch", "update"}})
		}
		if res.GVR.Group == "" && res.GVR.Resource == "namespaces" {
			out = append(out, metav1.APIResource{Name: "namespaces/finalize", Kind: "Namespace", Verbs: metav1.Verbs{"update"}})
		}
		if res.GVR.Group == "" && res.GVR.Resource == "serviceaccounts" {
			out = append(out, metav1.APIResource{Name: "serviceaccounts/token", Namespaced: true, Group: "authentication.k8s.io", Version: "v1", Kind: "TokenRequest", Verbs: metav1.Verbs{"create"}})
		}
		if res.GVR.Group == "" && res.GVR.Resource == "pods" {
			out = append(out, podSubresources()...)
		}
		if res.GVR.Group == "" && (res.GVR.Resource == "services" || res.GVR.Resource == "nodes") {
			kind := map[string]string{"services": "ServiceProxyOptions", "nodes": "NodeProxyOptions"}[res.GVR.Resource]
			out = append(out, metav1.APIResource{Name: res.GVR.Resource + "/proxy", Namespaced: res.Namespaced, Kind: kind, Verbs: metav1.Verbs{"create", "delete", "get", "patch", "update"}})
		}
		// Subresources follow their resource sorted by name, as upstream lists them.
		sort.SliceStable(out[first:], func(i, j int) bool { return out[first+i].Name < out[first+j].Name })
	}
	return out
}

func (s *Server) serveResourceList(w http.ResponseWriter, r *http.Request, group, version string) {
	cat := s.cfg.Store.Catalogue()
	rs := append(apiResources(cat.All(), group, version), reviewResources(cat.Reviews(), group, version)...)
	if rs == nil {
		writeError(w, notFoundPath())
		return
	}
	gv := version
	if group != "" {
		gv = group + "/" + version
	}
	writeJSON(w, http.StatusOK, metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: gv,
		APIResources: rs,
	})
}

func (s *Server) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	if s.cfg.OpenAPI == nil {
		writeError(w, notFoundPath())
		return
	}
	p := r.URL.Path[len("/openapi/v3"):]
	if p == "" || p == "/" {
		b, err := s.cfg.OpenAPI.Index()
		if err != nil {
			writeError(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
		return
	}
	doc, hash, ok, err := s.cfg.OpenAPI.Document(p[1:])
	if err != nil {
		writeError(w, err)
		return
	}
	if !ok {
		writeError(w, notFoundPath())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Etag", `"`+hash+`"`)
	if q := query(r).Get("hash"); q != "" && q == hash {
		w.Header().Set("Cache-Control", "public, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache, private")
	}
	_, _ = w.Write(doc)
}

// podSubresources are the pod subresources beyond /status, as upstream's discovery lists them.
func podSubresources() []metav1.APIResource {
	connect := metav1.Verbs{"create", "get"}
	return []metav1.APIResource{
		{Name: "pods/attach", Namespaced: true, Kind: "PodAttachOptions", Verbs: connect},
		{Name: "pods/binding", Namespaced: true, Kind: "Binding", Verbs: metav1.Verbs{"create"}},
		{Name: "pods/ephemeralcontainers", Namespaced: true, Kind: "Pod", Verbs: metav1.Verbs{"get", "patch", "update"}},
		{Name: "pods/eviction", Namespaced: true, Group: "policy", Version: "v1", Kind: "Eviction", Verbs: metav1.Verbs{"create"}},
		{Name: "pods/exec", Namespaced: true, Kind: "PodExecOptions", Verbs: connect},
		{Name: "pods/log", Namespaced: true, Kind: "Pod", Verbs: metav1.Verbs{"get"}},
		{Name: "pods/portforward", Namespaced: true, Kind: "PodPortForwardOptions", Verbs: connect},
		{Name: "pods/proxy", Namespaced: true, Kind: "PodProxyOptions", Verbs: metav1.Verbs{"create", "delete", "get", "patch", "update"}},
		{Name: "pods/resize", Namespaced: true, Kind: "Pod", Verbs: metav1.Verbs{"get", "patch", "update"}},
	}
}
