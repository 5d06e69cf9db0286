package apiserver

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/quotad/quotad/internal/registry"
)

func (s *Server) watch(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	acc, sel, ok := readQuery(w, r, res, info)
	if !ok {
		return
	}
	q := r.URL.Query()
	timeout := time.Duration(1800+rand.IntN(1800)) * time.Second
	if t := q.Get("timeoutSeconds"); t != "" {
		if n, err := strconv.ParseInt(t, 10, 64); err == nil && n > 0 {
			timeout = time.Duration(n) * time.Second
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	events, err := s.cfg.Store.Watch(ctx, res, info.Namespace, registry.WatchOptions{
		Selector: sel, ResourceVersion: q.Get("resourceVersion"),
		Bookmarks: q.Get("allowWatchBookmarks") == "true", SendInitialEvents: q.Get("sendInitialEvents") == "true",
	})
	if err != nil {
		writeError(w, err)
		return
	}
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}
	enc := json.NewEncoder(w)
	first := true
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			obj := ev.Object
			if ev.Type != watch.Error && ev.Type != watch.Bookmark {
				switch {
				case acc.table && s.cfg.Table != nil:
					policy := includePolicy(r)
					t, err := s.cfg.Table(res, []runtime.Object{obj}, s.cfg.Clock(), policy)
					if err != nil {
						continue
					}
					t.APIVersion, t.Kind = "meta.k8s.io/"+acc.tableVer, "Table"
					if !first {
						t.ColumnDefinitions = nil
					}
					first = false
					obj = t
				case acc.partial:
					obj = partialOf(obj, acc.tableVer)
				default:
					obj.GetObjectKind().SetGroupVersionKind(res.GVK())
				}
			} else if ev.Type == watch.Bookmark && (acc.table || acc.partial) {
				obj = partialOf(obj, acc.tableVer)
			}
			raw, err := json.Marshal(obj)
			if err != nil {
				return
			}
			if err := enc.Encode(metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: raw}}); err != nil {
				return
			}
			if flusher != nil && len(events) == 0 {
				flusher.Flush()
			}
		}
	}
}
