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

// parsedQuery is what withQuery keeps on a request's context: its query and its place among
// long reads (see requestTicket), in one value.
type parsedQuery struct {
	values url.Values
	ticket uint64
}

// withQuery returns r with its parsed query kept for query, and a place for its ticket.
func withQuery(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), queryKey{}, &parsedQuery{values: r.URL.Query()}))
}

// requestTicket is the request's place among long reads: taken when it first waits for a
// seat, and kept for every seat it waits for later, so that a list whose selector took a
// seat to parse gets its pages' seats before requests that came after it. (With a ticket
// per seat, forty lists parsed forty 890 KB selectors before any of them read a page,
// and held them all.)
func (s *Server) requestTicket(ctx context.Context) uint64 {
	q, ok := ctx.Value(queryKey{}).(*parsedQuery)
	if !ok {
		return s.pager.ticket()
	}
	if q.ticket == 0 {
		q.ticket = s.pager.ticket()
	}
	return q.ticket
}

// query is r's parsed query (read-only: it is shared by the request's handlers).
func query(r *http.Request) url.Values {
	if q, ok := r.Context().Value(queryKey{}).(*parsedQuery); ok {
		return q.values
	}
	return r.URL.Query()
}
