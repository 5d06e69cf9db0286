package apiserver

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/quotad/quotad/internal/registry"
)

// serveProxy answers services/proxy and nodes/proxy; false for other resources (pods/proxy
// is a pod subresource).
func (s *Server) serveProxy(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) bool {
	if info.Name == "" || res.GVR.Group != "" {
		return false
	}
	switch {
	case res.GVR.Resource == "services" && info.Namespace != "":
		s.serviceProxy(w, r, res, info)
	case res.GVR.Resource == "nodes" && info.Namespace == "":
		s.nodeProxy(w, r, res, info)
	default:
		return false
	}
	return true
}

// splitSchemeNamePort is upstream's SplitSchemeNamePort: "name", "name:port" or
// "scheme:name:port".
func splitSchemeNamePort(id string) (scheme, name, port string, ok bool) {
	parts := strings.Split(id, ":")
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		name, port = parts[0], parts[1]
	case 3:
		scheme, name, port = parts[0], parts[1], parts[2]
	default:
		return "", "", "", false
	}
	if name == "" || (scheme != "" && scheme != "http" && scheme != "https") {
		return "", "", "", false
	}
	return scheme, name, port, true
}

// serviceProxy is upstream's service ResourceLocation: a ready address of the service's
// Endpoints for the named (or numbered) port, 503 when there is none.
func (s *Server) serviceProxy(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	scheme, name, port, ok := splitSchemeNamePort(info.Name)
	if !ok {
		writeError(w, apierrors.NewBadRequest(fmt.Sprintf("invalid service request %q", info.Name)))
		return
	}
	obj, err := s.cfg.Store.Get(r.Context(), res, info.Namespace, name)
	if err != nil {
		writeError(w, err)
		return
	}
	svc := obj.(*corev1.Service)
	if n, err := strconv.Atoi(port); err == nil {
		found := false
		for _, sp := range svc.Spec.Ports {
			if int(sp.Port) == n {
				port, found = sp.Name, true
				break
			}
		}
		if !found {
			writeError(w, apierrors.NewServiceUnavailable(fmt.Sprintf("no service port %d found for service %q", n, name)))
			return
		}
	}
	epRes := s.cfg.Store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("endpoints"))
	var hosts []string
	if epRes != nil {
		if obj, err := s.cfg.Store.Get(r.Context(), epRes, info.Namespace, name); err == nil {
			for _, ss := range obj.(*corev1.Endpoints).Subsets {
				for _, p := range ss.Ports {
					if p.Name != port {
						continue
					}
					for _, a := range ss.Addresses {
						hosts = append(hosts, net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
					}
				}
			}
		}
	}
	if len(hosts) == 0 {
		writeError(w, apierrors.NewServiceUnavailable(fmt.Sprintf("no endpoints available for service %q", info.Name)))
		return
	}
	if scheme == "" {
		scheme = "http"
	}
	proxyTo(w, r, &url.URL{Scheme: scheme, Host: hosts[rand.IntN(len(hosts))], Path: "/" + info.Rest, RawQuery: r.URL.RawQuery})
}

// nodeProxy is nodes/proxy: upstream proxies to the node's kubelet; quotad reports the
// kubelet it cannot reach.
func (s *Server) nodeProxy(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	_, name, _, ok := splitSchemeNamePort(info.Name)
	if !ok {
		writeError(w, apierrors.NewBadRequest(fmt.Sprintf("invalid node request %q", info.Name)))
		return
	}
	writeError(w, s.kubeletUnreachable(r.Context(), &corev1.Pod{Spec: corev1.PodSpec{NodeName: name}}, "proxy"))
}

// proxyTo forwards the request to target, answering upstream's 503 when it cannot.
func proxyTo(w http.ResponseWriter, r *http.Request, target *url.URL) {
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = target
			pr.Out.Host = target.Host
			pr.Out.Header.Del("Authorization")
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			writeError(w, apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach service: %v", err)))
		},
	}
	proxy.ServeHTTP(w, r)
}
