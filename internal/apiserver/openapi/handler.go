package openapi

import (
	"bytes"
	"net/http"
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
