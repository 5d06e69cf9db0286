package apiserver

import (
	"context"
	"net/http"
	"net/url"
)

// A request's query is parsed once, when it arrives, and kept on its context: a query may
// be as long as a request line (1 MiB), and parsing it costs about 8 ms a MiB, which a
// dozen readers of one parameter each would pay again.

type queryKey struct{}

// withQuery returns r with its parsed query kept for query.
func withQuery(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), queryKey{}, r.URL.Query()))
}

// query is r's parsed query (read-only: it is shared by the request's handlers).
func query(r *http.Request) url.Values {
	if q, ok := r.Context().Value(queryKey{}).(url.Values); ok {
		return q
	}
	return r.URL.Query()
}
