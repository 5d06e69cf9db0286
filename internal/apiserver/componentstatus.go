package apiserver

import (
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/quotad/quotad/internal/registry"
)

// componentStatusDeprecation is the warning upstream sends with every ComponentStatus
// response (the kind is deprecated since v1.19).
const componentStatusDeprecation = "v1 ComponentStatus is deprecated in v1.19+"

// absentComponents are the components kube-apiserver probes besides etcd, with the probe
// failure it reports when nothing listens on their ports: quotad runs no scheduler, and
// its controllers serve no health port.
var absentComponents = []struct{ name, addr string }{
	{"scheduler", "127.0.0.1:10259"},
	{"controller-manager", "127.0.0.1:10257"},
}

// componentStatuses synthesizes upstream's component statuses: the scheduler and the
// controller manager as upstream reports them when absent, and etcd-0 from the storage
// health check.
func (s *Server) componentStatuses(r *http.Request) []corev1.ComponentStatus {
	out := make([]corev1.ComponentStatus, 0, len(absentComponents)+1)
	for _, c := range absentComponents {
		out = append(out, componentStatus(c.name, corev1.ConditionFalse,
			fmt.Sprintf("Get \"https://%s/healthz\": dial tcp %s: connect: connection refused", c.addr, c.addr), ""))
	}
	etcd := componentStatus("etcd-0", corev1.ConditionTrue, "ok", "")
	if s.cfg.Ready != nil {
		if err := s.cfg.Ready(r.Context()); err != nil {
			etcd = componentStatus("etcd-0", corev1.ConditionFalse, "", err.Error())
		}
	}
	return append(out, etcd)
}

func componentStatus(name string, status corev1.ConditionStatus, msg, errMsg string) corev1.ComponentStatus {
	cs := corev1.ComponentStatus{Conditions: []corev1.ComponentCondition{{Type: corev1.ComponentHealthy, Status: status, Message: msg, Error: errMsg}}}
	cs.Name = name
	cs.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ComponentStatus"))
	return cs
}

// serveComponentStatuses serves get and list of componentstatuses (registry.Resource.Synthesized);
// every other verb is upstream's 405. Selectors filter the synthesized list, as upstream's.
func (s *Server) serveComponentStatuses(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	if info.Subresource != "" || (info.Verb != "get" && info.Verb != "list") {
		writeError(w, methodNotAllowed())
		return
	}
	acc, sel, ok := s.readQuery(w, r, res, info)
	if !ok {
		return
	}
	warn(w, []string{componentStatusDeprecation})
	all := s.componentStatuses(r)
	if info.Verb == "get" {
		for i := range all {
			if all[i].Name == info.Name {
				s.writeObjects(w, r, res, acc, http.StatusOK, &all[i])
				return
			}
		}
		writeError(w, fmt.Errorf("Component not found: %s", info.Name))
		return
	}
	objs := make([]runtime.Object, 0, len(all))
	items := make([]corev1.ComponentStatus, 0, len(all))
	for i := range all {
		if sel.Matches(res, &all[i]) {
			objs = append(objs, &all[i])
			items = append(items, all[i])
		}
	}
	switch {
	case acc.table && s.cfg.Table != nil:
		t, err := s.cfg.Table(res, objs, s.cfg.Clock.Now(), includePolicy(r))
		if err != nil {
			writeError(w, err)
			return
		}
		t.APIVersion, t.Kind = "meta.k8s.io/"+acc.tableVer, "Table"
		writeJSON(w, http.StatusOK, t)
	case acc.partial:
		pl := metav1.PartialObjectMetadataList{Items: []metav1.PartialObjectMetadata{}}
		pl.APIVersion, pl.Kind = "meta.k8s.io/"+acc.tableVer, "PartialObjectMetadataList"
		for _, o := range objs {
			pl.Items = append(pl.Items, *partialOf(o, acc.tableVer))
		}
		writeJSON(w, http.StatusOK, pl)
	default:
		l := &corev1.ComponentStatusList{Items: items}
		l.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ComponentStatusList"))
		writeJSON(w, http.StatusOK, l)
	}
}
