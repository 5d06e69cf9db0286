package openapi

import (
	"bytes"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ServeHTTP serves GET and HEAD of /openapi/v3 (the index) and /openapi/v3/<path> (one
// group-version document) the way kube-openapi's handler3 does: Content-Type
// application/json, a quoted ETag of the hash (so If-None-Match gets 304), and for a
// ?hash= that is not the current one a 301 to the current URL; with the current hash the
// response is marked immutable. Unknown group-versions get 404; an Accept header that
// rules out JSON (e.g. protobuf only) gets 406.
func (d *Documents) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	const root = "/openapi/v3"
	p := r.URL.Path
	if p == root || p == root+"/" {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Etag", strconv.Quote(d.IndexHash))
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(d.Index))
		return
	}
	gvPath, ok := strings.CutPrefix(p, root+"/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	doc, ok := d.Paths[gvPath]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Vary", "Accept")
	if !acceptsJSON(r.Header.Get("Accept")) {
		http.Error(w, "only application/json is served", http.StatusNotAcceptable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Etag", strconv.Quote(doc.Hash))
	if hash := r.URL.Query().Get("hash"); hash != "" {
		if hash != doc.Hash {
			http.Redirect(w, r, ServerRelativeURL(gvPath, doc.Hash), http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Cache-Control", "public, immutable")
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(doc.JSON))
}

// acceptsJSON reports whether an Accept header admits application/json. An empty header
// accepts anything; media ranges with q=0 are refusals.
func acceptsJSON(accept string) bool {
	if strings.TrimSpace(accept) == "" {
		return true
	}
	for _, clause := range strings.Split(accept, ",") {
		media, params, _ := strings.Cut(clause, ";")
		refused := false
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(k, "q") {
				if q, err := strconv.ParseFloat(v, 64); err == nil && q == 0 {
					refused = true
				}
			}
		}
		switch strings.ToLower(strings.TrimSpace(media)) {
		case "application/json", "application/*", "*/*":
			if !refused {
				return true
			}
		}
	}
	return false
}

// ServeHTTP serves GET and HEAD of /openapi/v2 the way kube-openapi's handler does: the
// Accept header's media ranges are tried by preference, JSON first for wildcards; JSON is
// served as application/json and protobuf (ProtoV2MediaType, or its ".v1.0" spelling) as
// ProtoV2ContentType, both with the quoted ETag of the JSON hash (so If-None-Match gets
// 304) and Vary: Accept. An Accept header that admits neither gets 406.
func (d *V2) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Add("Vary", "Accept")
	var data []byte
	switch negotiateV2(r.Header.Get("Accept")) {
	case "application/json":
		w.Header().Set("Content-Type", "application/json")
		data = d.JSON
	case ProtoV2ContentType:
		w.Header().Set("Content-Type", ProtoV2ContentType)
		data = d.Proto
	default:
		w.WriteHeader(http.StatusNotAcceptable)
		return
	}
	w.Header().Set("Etag", strconv.Quote(d.Hash))
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
}

// negotiateV2 returns the content type /openapi/v2 answers an Accept header with, or ""
// when none is acceptable. Media ranges are tried by quality and then specificity (as
// goautoneg sorts them); q=0 ranges are refusals; an empty header accepts anything.
func negotiateV2(accept string) string {
	if strings.TrimSpace(accept) == "" {
		accept = "*/*"
	}
	type clause struct {
		typ, sub string
		q        float64
	}
	var clauses []clause
	for _, part := range strings.Split(accept, ",") {
		media, params, _ := strings.Cut(part, ";")
		typ, sub, _ := strings.Cut(strings.ToLower(strings.TrimSpace(media)), "/")
		c := clause{typ: typ, sub: sub, q: 1}
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(k, "q") {
				if q, err := strconv.ParseFloat(v, 64); err == nil {
					c.q = q
				}
			}
		}
		if c.q > 0 {
			clauses = append(clauses, c)
		}
	}
	sort.SliceStable(clauses, func(i, j int) bool {
		a, b := clauses[i], clauses[j]
		if a.q != b.q {
			return a.q > b.q
		}
		if (a.typ == "*") != (b.typ == "*") {
			return b.typ == "*"
		}
		return a.sub != "*" && b.sub == "*"
	})
	offers := []struct{ sub, contentType string }{
		{"json", "application/json"},
		{"com.github.proto-openapi.spec.v2@v1.0+protobuf", ProtoV2ContentType},
		{"com.github.proto-openapi.spec.v2.v1.0+protobuf", ProtoV2ContentType},
	}
	for _, c := range clauses {
		if c.typ != "application" && c.typ != "*" {
			continue
		}
		for _, o := range offers {
			if c.sub == o.sub || c.sub == "*" {
				return o.contentType
			}
		}
	}
	return ""
}
