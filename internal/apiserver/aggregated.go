package apiserver

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apidiscoveryv2beta1 "k8s.io/api/apidiscovery/v2beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/registry"
)

// Aggregated discovery (apidiscovery.k8s.io) answers /api and /apis with every group,
// version and resource in one document when the client's Accept asks for it, as
// kube-apiserver does; any other Accept gets the legacy APIVersions / APIGroupList.

const (
	discoveryGroup    = "apidiscovery.k8s.io"
	discoveryListKind = "APIGroupDiscoveryList"
)

// aggregatedVersion returns the apidiscovery version ("v2" or "v2beta1") the Accept header
// asks for, or "" when the client is to get legacy discovery. As kube-apiserver's
// negotiation, media ranges are tried in order of quality (then of appearance); the first
// one the server can produce decides: a JSON range naming an aggregated discovery version
// picks it, a plain range (application/json, */*, …) picks legacy discovery, and ranges
// naming anything else are skipped.
func aggregatedVersion(accept string) string {
	type clause struct {
		typ        string
		q          float64
		g, v, as   string
		hasConvert bool
	}
	var cs []clause
	for _, part := range strings.Split(accept, ",") {
		fields := strings.Split(part, ";")
		c := clause{typ: strings.ToLower(strings.TrimSpace(fields[0])), q: 1}
		if c.typ == "" {
			continue
		}
		for _, p := range fields[1:] {
			k, v, _ := strings.Cut(p, "=")
			k, v = strings.ToLower(strings.TrimSpace(k)), strings.Trim(strings.TrimSpace(v), `"`)
			switch k {
			case "q":
				f, err := strconv.ParseFloat(v, 64)
				if err != nil || f < 0 || f > 1 {
					f = 0
				}
				c.q = f
			case "g":
				c.g, c.hasConvert = v, true
			case "v":
				c.v, c.hasConvert = v, true
			case "as":
				c.as, c.hasConvert = v, true
			}
		}
		if c.q > 0 {
			cs = append(cs, c)
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].q > cs[j].q })
	for _, c := range cs {
		if !c.hasConvert {
			switch c.typ {
			case "application/json", "application/yaml", "application/vnd.kubernetes.protobuf", "application/*", "*/*":
				return ""
			}
			continue
		}
		if c.typ != "application/json" || c.g != discoveryGroup || c.as != discoveryListKind {
			continue
		}
		if c.v == "v2" || c.v == "v2beta1" {
			return c.v
		}
	}
	return ""
}

// discoveryDoc is one served aggregated discovery document.
type discoveryDoc struct {
	v2, v2beta1 []byte
	etag        string
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

// encodeDiscovery encodes list as v2 and v2beta1 and computes its ETag as kube-apiserver
// does: the SHA-512 of the list's JSON without its type meta, in upper-case hex.
func encodeDiscovery(list apidiscoveryv2.APIGroupDiscoveryList) (*discoveryDoc, error) {
	raw, err := json.Marshal(list)
	if err != nil {
		return nil, err
	}
	d := &discoveryDoc{etag: fmt.Sprintf("%X", sha512.Sum512(raw))}
	list.TypeMeta = metav1.TypeMeta{Kind: discoveryListKind, APIVersion: apidiscoveryv2.SchemeGroupVersion.String()}
	if d.v2, err = json.Marshal(list); err != nil {
		return nil, err
	}
	// v2beta1 has the same fields as v2: its document is v2's under the other version.
	var beta apidiscoveryv2beta1.APIGroupDiscoveryList
	if err := json.Unmarshal(raw, &beta); err != nil {
		return nil, err
	}
	beta.TypeMeta = metav1.TypeMeta{Kind: discoveryListKind, APIVersion: apidiscoveryv2beta1.SchemeGroupVersion.String()}
	if d.v2beta1, err = json.Marshal(beta); err != nil {
		return nil, err
	}
	return d, nil
}

// serveAggregated answers an aggregated discovery request for /api or /apis in version v,
// with an ETag and 304 on a matching If-None-Match.
func (s *Server) serveAggregated(w http.ResponseWriter, r *http.Request, path, v string) {
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
	body := d.v2
	if v == "v2beta1" {
		body = d.v2beta1
	}
	h.Set("Content-Type", "application/json;g="+discoveryGroup+";v="+v+";as="+discoveryListKind)
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
