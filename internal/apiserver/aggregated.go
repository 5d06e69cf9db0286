package apiserver

import (
	"bytes"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"sigs.k8s.io/yaml"

	"github.com/quotad/quotad/internal/registry"
)

// Aggregated discovery (apidiscovery.k8s.io) answers /api and /apis with every group,
// version and resource in one document when the client's Accept asks for it, as
// kube-apiserver does; any other Accept gets the legacy APIVersions / APIGroupList.

const (
	discoveryGroup    = "apidiscovery.k8s.io"
	discoveryListKind = "APIGroupDiscoveryList"
)

// Media types aggregated discovery is served in (kube-apiserver's discovery serializers).
const (
	mediaJSON     = "application/json"
	mediaYAML     = "application/yaml"
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
)

// aggregatedMedia returns the media type ("application/json", "application/yaml" or
// "application/vnd.kubernetes.protobuf") in which the Accept header asks for aggregated
// discovery (apidiscovery.k8s.io/v2 APIGroupDiscoveryList), or "" when the client is to
// get legacy discovery. It follows kube-apiserver's negotiation: the media ranges, sorted
// by quality and then by specificity (goautoneg's order; q=0 is not a refusal there), are
// tried in turn against the serializers, and the first range whose g, v and as parameters
// name the aggregated list decides; when none does, legacy discovery answers. A range
// naming nothing (application/json) is skipped, not taken as a choice of legacy
// discovery, and so is one naming v2beta1:
// v1.37 serves v2beta1 no more (AggregatedDiscoveryRemoveBetaType is locked on since
// v1.35), so a client asking for it, then plain JSON, gets legacy discovery.
func aggregatedMedia(accept string) string {
	type clause struct {
		typ, sub string
		q        float64
		params   map[string]string
	}
	var cs []clause
	for _, part := range strings.Split(accept, ",") {
		part = strings.Trim(part, " ")
		if part == "" {
			continue
		}
		fields := strings.Split(part, ";")
		c := clause{q: 1, params: map[string]string{}}
		typ, sub, hasSub := strings.Cut(fields[0], "/")
		c.typ, c.sub = strings.Trim(typ, " "), strings.Trim(sub, " ")
		switch {
		case !hasSub && c.typ == "*":
			c.sub = "*"
		case !hasSub || strings.Contains(sub, "/"):
			continue
		}
		for _, p := range fields[1:] {
			k, v, ok := strings.Cut(p, "=")
			if !ok || strings.Contains(v, "=") {
				continue
			}
			k = strings.Trim(k, " ")
			if k == "q" {
				c.q, _ = strconv.ParseFloat(v, 32)
				continue
			}
			c.params[k] = strings.Trim(v, " ")
		}
		cs = append(cs, c)
	}
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		switch {
		case a.q > b.q:
			return true
		case a.typ != "*" && b.typ == "*":
			return true
		case a.sub != "*" && b.sub == "*":
			return true
		}
		return false
	})
	for _, c := range cs {
		if c.params["g"] != discoveryGroup || c.params["v"] != "v2" || c.params["as"] != discoveryListKind ||
			c.params["sv"] != "" || (c.params["stream"] != "" && c.params["stream"] != "watch") {
			continue
		}
		for _, m := range []string{mediaJSON, mediaYAML, mediaProtobuf} {
			typ, sub, _ := strings.Cut(m, "/")
			if (c.typ == typ && (c.sub == sub || c.sub == "*")) || (c.typ == "*" && c.sub == "*") {
				return m
			}
		}
	}
	return ""
}

// discoveryDoc is one served aggregated discovery document in each media type.
type discoveryDoc struct {
	json, yaml, protobuf []byte
	etag                 string
}

// discoveryCache holds the aggregated documents of /api and /apis for one catalogue
// generation.
type discoveryCache struct {
	mu         sync.Mutex
	generation int64
	valid      bool
	docs       map[string]*discoveryDoc
}

// aggregatedDoc returns the document of path ("/api" or "/apis"), rebuilt when the
// catalogue changed since it was last built.
func (s *Server) aggregatedDoc(path string) (*discoveryDoc, error) {
	cat := s.cfg.Store.Catalogue()
	c := &s.discovery
	c.mu.Lock()
	defer c.mu.Unlock()
	gen := cat.Generation()
	if !c.valid || c.generation != gen {
		c.docs, c.generation, c.valid = map[string]*discoveryDoc{}, gen, true
	}
	if d := c.docs[path]; d != nil {
		return d, nil
	}
	list := discoveryList(cat.All(), cat.Reviews(), path == "/api")
	d, err := encodeDiscovery(list)
	if err != nil {
		return nil, err
	}
	c.docs[path] = d
	return d, nil
}

// encodeDiscovery encodes list in each media type and computes its ETag as kube-apiserver
// does: the SHA-512 of the list's JSON without its type meta, in upper-case hex (the same
// for every media type; responses vary by Accept).
func encodeDiscovery(list apidiscoveryv2.APIGroupDiscoveryList) (*discoveryDoc, error) {
	raw, err := json.Marshal(list)
	if err != nil {
		return nil, err
	}
	d := &discoveryDoc{etag: fmt.Sprintf("%X", sha512.Sum512(raw))}
	list.TypeMeta = metav1.TypeMeta{Kind: discoveryListKind, APIVersion: apidiscoveryv2.SchemeGroupVersion.String()}
	if d.json, err = json.Marshal(list); err != nil {
		return nil, err
	}
	if d.yaml, err = yaml.JSONToYAML(d.json); err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := apidiscoveryv2.AddToScheme(scheme); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(scheme, scheme).Encode(&list, &buf); err != nil {
		return nil, err
	}
	d.protobuf = buf.Bytes()
	return d, nil
}

// serveAggregated answers an aggregated discovery request for /api or /apis in media type
// media, with an ETag and 304 on a matching If-None-Match.
func (s *Server) serveAggregated(w http.ResponseWriter, r *http.Request, path, media string) {
	d, err := s.aggregatedDoc(path)
	if err != nil {
		writeError(w, err)
		return
	}
	quoted := strconv.Quote(d.etag)
	h := w.Header()
	h.Set("Etag", quoted)
	h.Set("Vary", "Accept")
	h.Set("Cache-Control", "public")
	if r.Header.Get("If-None-Match") == quoted {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := d.json
	switch media {
	case mediaYAML:
		body = d.yaml
	case mediaProtobuf:
		body = d.protobuf
	}
	h.Set("Content-Type", media+";g="+discoveryGroup+";v=v2;as="+discoveryListKind)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// discoveryList builds the aggregated discovery of the core group (core true) or of every
// named group from the catalogue's resources and review resources. Groups are in
// kube-apiserver's order (sortGroups), versions preferred first, resources and
// subresources by name.
func discoveryList(all, reviews []*registry.Resource, core bool) apidiscoveryv2.APIGroupDiscoveryList {
	versions := map[string][]string{}
	seen := map[schema.GroupVersion]bool{}
	for _, res := range append(append([]*registry.Resource(nil), all...), reviews...) {
		gv := res.GVR.GroupVersion()
		if (gv.Group == "") != core || seen[gv] {
			continue
		}
		seen[gv] = true
		versions[gv.Group] = append(versions[gv.Group], gv.Version)
	}
	groups := make([]string, 0, len(versions))
	for g := range versions {
		groups = append(groups, g)
	}
	sortGroups(groups)
	list := apidiscoveryv2.APIGroupDiscoveryList{Items: []apidiscoveryv2.APIGroupDiscovery{}}
	for _, g := range groups {
		vs := versions[g]
		sort.Slice(vs, func(i, j int) bool { return versionLess(vs[j], vs[i]) })
		item := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g}}
		for _, v := range vs {
			rs := append(apiResources(all, g, v), reviewResources(reviews, g, v)...)
			item.Versions = append(item.Versions, apidiscoveryv2.APIVersionDiscovery{
				Version:   v,
				Resources: discoveryResources(schema.GroupVersion{Group: g, Version: v}, rs),
				Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
			})
		}
		list.Items = append(list.Items, item)
	}
	return list
}

// discoveryResources converts one group-version's legacy discovery entries (resources and
// "resource/subresource" entries) into aggregated form: each subresource under its resource.
func discoveryResources(gv schema.GroupVersion, rs []metav1.APIResource) []apidiscoveryv2.APIResourceDiscovery {
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Name < rs[j].Name })
	kindOf := func(r metav1.APIResource) *metav1.GroupVersionKind {
		k := &metav1.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: r.Kind}
		if r.Group != "" || r.Version != "" {
			k.Group, k.Version = r.Group, r.Version
		}
		return k
	}
	out := []apidiscoveryv2.APIResourceDiscovery{}
	index := map[string]int{}
	for _, r := range rs {
		parent, sub, isSub := strings.Cut(r.Name, "/")
		if !isSub {
			scope := apidiscoveryv2.ScopeCluster
			if r.Namespaced {
				scope = apidiscoveryv2.ScopeNamespace
			}
			index[r.Name] = len(out)
			out = append(out, apidiscoveryv2.APIResourceDiscovery{
				Resource: r.Name, ResponseKind: kindOf(r), Scope: scope, SingularResource: r.SingularName,
				Verbs: r.Verbs, ShortNames: r.ShortNames, Categories: r.Categories,
			})
			continue
		}
		i, ok := index[parent]
		if !ok {
			continue
		}
		out[i].Subresources = append(out[i].Subresources, apidiscoveryv2.APISubresourceDiscovery{
			Subresource: sub, ResponseKind: kindOf(r), Verbs: r.Verbs,
		})
	}
	return out
}
