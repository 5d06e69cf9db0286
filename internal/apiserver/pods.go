package apiserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/registry/codec"
	"github.com/quotad/quotad/internal/registry/kinds/core"
)

// endpointsGVR is core/v1 Endpoints, which upstream answers with endpointsDeprecated as a
// warning on every request since v1.33.
var endpointsGVR = corev1.SchemeGroupVersion.WithResource("endpoints")

const endpointsDeprecated = "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"

// servePodSubresource answers the pod subresources beyond /status: binding and eviction
// (creates), and log, exec, attach, portforward and proxy, which upstream forwards to the
// pod's kubelet (or, for proxy, the pod's IP).
func (s *Server) servePodSubresource(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	switch info.Subresource {
	case "binding", "eviction":
		if info.Verb != "create" {
			writeError(w, methodNotAllowed())
			return
		}
		if info.Subresource == "binding" {
			s.bindPod(w, r, res, info)
		} else {
			s.evictPod(w, r, res, info)
		}
	case "log":
		if info.Verb != "get" {
			writeError(w, methodNotAllowed())
			return
		}
		s.podLog(w, r, res, info)
	case "exec", "attach", "portforward":
		if info.Verb != "get" && info.Verb != "create" {
			writeError(w, methodNotAllowed())
			return
		}
		s.podStream(w, r, res, info)
	case "proxy":
		s.podProxy(w, r, res, info)
	}
}

// decodeSubresourceBody decodes a create body of a subresource's kind gvk, whose objects
// are of empty's type (JSON, YAML or protobuf), as upstream decodes it (its apiVersion and
// kind too); anyVersion takes the kind's other versions.
func decodeSubresourceBody(r *http.Request, gvk schema.GroupVersionKind, empty runtime.Object, anyVersion bool) (runtime.Object, error) {
	if err := checkBodyType(r, true); err != nil {
		return nil, err
	}
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	d, err := decodeAs(r, codec.BuiltinKind(gvk, empty), body, codec.FieldValidationIgnore, anyVersion)
	if err != nil {
		return nil, err
	}
	return d.Object, nil
}

// createdStatus is what upstream's create handler answers for a subresource whose create
// returns a bare Success status.
func createdStatus() metav1.Status {
	st := successStatus(nil)
	st.Code = http.StatusCreated
	return st
}

// bindPod is pods/binding: it sets spec.nodeName of an unbound pod, copies the Binding's
// annotations and marks the pod PodScheduled, as upstream's BindingREST.
func (s *Server) bindPod(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	opts, _, err := writeOptions(r, "create", "")
	if err != nil {
		writeError(w, err)
		return
	}
	obj, err := decodeSubresourceBody(r, corev1.SchemeGroupVersion.WithKind("Binding"), &corev1.Binding{}, false)
	if err != nil {
		writeError(w, err)
		return
	}
	b := *obj.(*corev1.Binding)
	if b.Namespace != "" && b.Namespace != info.Namespace {
		writeError(w, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request"))
		return
	}
	if b.Name != info.Name {
		writeError(w, apierrors.NewBadRequest("name in URL does not match name in Binding object"))
		return
	}
	s.bind(w, r, res, info.Namespace, &b, opts)
}

// bind assigns the pod the Binding names to its target node: the common part of
// pods/binding and of the core bindings resource.
func (s *Server) bind(w http.ResponseWriter, r *http.Request, res *registry.Resource, ns string, b *corev1.Binding, opts registry.WriteOptions) {
	info := requestInfo{Namespace: ns, Name: b.Name}
	// Upstream's ValidatePodBinding errors are returned as a plain aggregate (a 500).
	errs := core.ValidateBinding(b)
	if len(errs) > 0 {
		writeError(w, errs.ToAggregate())
		return
	}
	_, err := s.cfg.Store.Update(r.Context(), res, info.Namespace, info.Name, registry.SubresourceBinding, func(cur runtime.Object) (runtime.Object, error) {
		pod, ok := cur.(*corev1.Pod)
		if !ok {
			return nil, apierrors.NewInternalError(fmt.Errorf("unexpected object %T", cur))
		}
		if refusal := core.Bind(pod, b); refusal != nil {
			return nil, apierrors.NewConflict(corev1.Resource("pods/binding"), info.Name, refusal)
		}
		return pod, nil
	}, opts)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, createdStatus())
}

// podContainer is upstream's validateContainer: the named container, or the only one.
func podContainer(pod *corev1.Pod, container string) (string, error) {
	if container == "" {
		switch len(pod.Spec.Containers) {
		case 1:
			return pod.Spec.Containers[0].Name, nil
		case 0:
			return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s", pod.Name))
		}
		var names []string
		for _, c := range pod.Spec.InitContainers {
			names = append(names, c.Name)
		}
		for _, c := range pod.Spec.Containers {
			names = append(names, c.Name)
		}
		for _, c := range pod.Spec.EphemeralContainers {
			names = append(names, c.Name)
		}
		return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %s", pod.Name, names))
	}
	for _, c := range pod.Spec.InitContainers {
		if c.Name == container {
			return container, nil
		}
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == container {
			return container, nil
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == container {
			return container, nil
		}
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", container, pod.Name))
}

// podLog is pods/log. A pod with no node has no logs yet: upstream answers with an empty
// stream (204). Otherwise the kubelet is dialled as upstream dials it.
func (s *Server) podLog(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	if err := validateLogOptions(r, info.Name); err != nil {
		writeError(w, err)
		return
	}
	pod, err := s.getPod(r.Context(), res, info)
	if err != nil {
		writeError(w, err)
		return
	}
	container, err := podContainer(pod, query(r).Get("container"))
	if err != nil {
		writeError(w, err)
		return
	}
	if pod.Spec.NodeName == "" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeError(w, s.kubeletUnreachable(r.Context(), pod, "containerLogs/"+pod.Namespace+"/"+pod.Name+"/"+container))
}

// podStream is pods/exec, attach and portforward: a pod with no node is upstream's 400.
func (s *Server) podStream(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	pod, err := s.getPod(r.Context(), res, info)
	if err != nil {
		writeError(w, err)
		return
	}
	if info.Subresource != "portforward" {
		if _, err := podContainer(pod, query(r).Get("container")); err != nil {
			writeError(w, err)
			return
		}
	}
	if pod.Spec.NodeName == "" {
		writeError(w, apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", info.Name)))
		return
	}
	writeError(w, s.kubeletUnreachable(r.Context(), pod, info.Subresource))
}

func (s *Server) getPod(ctx context.Context, res *registry.Resource, info requestInfo) (*corev1.Pod, error) {
	obj, err := s.cfg.Store.Get(ctx, res, info.Namespace, info.Name)
	if err != nil {
		return nil, err
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("unexpected object %T", obj))
	}
	return pod, nil
}

// kubeletUnreachable is what upstream answers when it cannot reach the kubelet of the
// pod's node: the Node must exist and name an address; quotad runs no kubelet connection,
// so the dial's failure (or, when something listens there, that quotad does not proxy to
// kubelets) is the answer.
func (s *Server) kubeletUnreachable(ctx context.Context, pod *corev1.Pod, what string) error {
	nodeRes := s.cfg.Store.Catalogue().Get(corev1.SchemeGroupVersion.WithResource("nodes"))
	obj, err := s.cfg.Store.Get(ctx, nodeRes, "", pod.Spec.NodeName)
	if err != nil {
		return err
	}
	node := obj.(*corev1.Node)
	host := ""
	for _, t := range []corev1.NodeAddressType{corev1.NodeHostName, corev1.NodeInternalDNS, corev1.NodeInternalIP, corev1.NodeExternalDNS, corev1.NodeExternalIP} {
		for _, a := range node.Status.Addresses {
			if a.Type == t && host == "" {
				host = a.Address
			}
		}
	}
	if host == "" {
		return fmt.Errorf("no preferred addresses found; known addresses: %v", node.Status.Addresses)
	}
	port := int(node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	if port <= 0 {
		port = 10250
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		// Upstream's plain errors (500s with the text verbatim).
		if strings.HasPrefix(what, "containerLogs/") {
			return fmt.Errorf("Get %q: %v", "https://"+addr+"/"+what, err)
		}
		return fmt.Errorf("error dialing backend: %v", err)
	}
	conn.Close()
	return apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach kubelet %s: quotad does not proxy to kubelets", addr))
}

// podProxy is pods/proxy: upstream proxies to the pod's IP ("address not allowed" unless
// it is a global unicast address), to the port named in the pod name ("name:port") or the
// first container port.
func (s *Server) podProxy(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	scheme, name, port := "http", info.Name, ""
	parts := strings.Split(info.Name, ":")
	switch len(parts) {
	case 1:
	case 2:
		name, port = parts[0], parts[1]
	case 3:
		scheme, name, port = parts[0], parts[1], parts[2]
	default:
		writeError(w, apierrors.NewBadRequest(fmt.Sprintf("invalid pod request %q", info.Name)))
		return
	}
	if scheme == "" {
		scheme = "http"
	}
	if scheme != "http" && scheme != "https" {
		writeError(w, apierrors.NewBadRequest(fmt.Sprintf("invalid pod request %q", info.Name)))
		return
	}
	pod, err := s.getPod(r.Context(), res, requestInfo{Namespace: info.Namespace, Name: name})
	if err != nil {
		writeError(w, err)
		return
	}
	if port == "" {
		for _, c := range pod.Spec.Containers {
			if len(c.Ports) > 0 {
				port = strconv.Itoa(int(c.Ports[0].ContainerPort))
				break
			}
		}
	}
	podIP := ""
	if len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	if ip := net.ParseIP(podIP); ip == nil || !ip.IsGlobalUnicast() {
		writeError(w, apierrors.NewBadRequest("address not allowed"))
		return
	}
	host := podIP
	if port != "" {
		host = net.JoinHostPort(podIP, port)
	} else if strings.Contains(podIP, ":") {
		host = "[" + podIP + "]"
	}
	proxyTo(w, r, &url.URL{Scheme: scheme, Host: host, Path: "/" + info.Rest, RawQuery: r.URL.RawQuery})
}

// validateLogOptions is upstream's ValidatePodLogOptions of the query's numbers.
func validateLogOptions(r *http.Request, name string) error {
	q := query(r)
	var errs field.ErrorList
	num := func(key string) (int64, bool, error) {
		v := q.Get(key)
		if v == "" {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, false, apierrors.NewBadRequest(fmt.Sprintf("%s: %v", key, err))
		}
		return n, true, nil
	}
	if n, ok, err := num("tailLines"); err != nil {
		return err
	} else if ok && n < 0 {
		errs = append(errs, field.Invalid(field.NewPath("tailLines"), n, "must be greater than or equal to 0"))
	}
	if n, ok, err := num("limitBytes"); err != nil {
		return err
	} else if ok && n < 1 {
		errs = append(errs, field.Invalid(field.NewPath("limitBytes"), n, "must be greater than 0"))
	}
	n, hasSeconds, err := num("sinceSeconds")
	if err != nil {
		return err
	}
	switch {
	case hasSeconds && q.Get("sinceTime") != "":
		errs = append(errs, field.Forbidden(field.NewPath(""), "at most one of `sinceTime` or `sinceSeconds` may be specified"))
	case hasSeconds && n < 1:
		errs = append(errs, field.Invalid(field.NewPath("sinceSeconds"), n, "must be greater than 0"))
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Kind: "PodLogOptions"}, name, errs)
	}
	return nil
}
