package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/registry/codec"
	"github.com/quotad/quotad/internal/registry/selector"
)

// serveResource handles every verb on a resource path.
func (s *Server) serveResource(w http.ResponseWriter, r *http.Request, info requestInfo) {
	gvr := schema.GroupVersionResource{Group: info.Group, Version: info.Version, Resource: info.Resource}
	res := s.cfg.Store.Catalogue().Get(gvr)
	if res == nil || (info.Namespace != "" && !res.Namespaced) {
		writeError(w, notFoundPath())
		return
	}
	if res.Review {
		s.serveReview(w, r, res, info)
		return
	}
	if res.GVR == endpointsGVR {
		warn(w, []string{endpointsDeprecated})
	}
	if info.Rest != "" && info.Subresource != "proxy" {
		writeError(w, notFoundPath())
		return
	}
	if res.Synthesized {
		s.serveComponentStatuses(w, r, res, info)
		return
	}
	if res.AppliedView {
		s.serveApplied(w, r, res, info)
		return
	}
	switch info.Subresource {
	case "":
	case "proxy":
		if s.serveProxy(w, r, res, info) {
			return
		}
		fallthrough
	case "binding", "eviction", "log", "exec", "attach", "portforward":
		if res.GVR != corev1.SchemeGroupVersion.WithResource("pods") || info.Namespace == "" || info.Name == "" {
			writeError(w, notFoundPath())
			return
		}
		s.servePodSubresource(w, r, res, info)
		return
	case "resize", "ephemeralcontainers":
		if res.Type == nil || res.GVR != corev1.SchemeGroupVersion.WithResource("pods") || info.Name == "" ||
			(info.Verb != "get" && info.Verb != "update" && info.Verb != "patch") {
			writeError(w, notFoundPath())
			return
		}
	case "status":
		if !res.Status {
			writeError(w, notFoundPath())
			return
		}
	case "scale":
		if !res.Scale {
			writeError(w, notFoundPath())
			return
		}
		s.serveScale(w, r, res, info)
		return
	case "token":
		if res.GVR != corev1.SchemeGroupVersion.WithResource("serviceaccounts") || info.Namespace == "" || info.Name == "" {
			writeError(w, notFoundPath())
			return
		}
		s.serveTokenRequest(w, r, info)
		return
	case "approval":
		if !registry.ServesApproval(res) {
			writeError(w, notFoundPath())
			return
		}
	case "finalize":
		if res.GVR.Resource != "namespaces" {
			writeError(w, notFoundPath())
			return
		}
		if info.Verb != "update" {
			writeError(w, methodNotAllowed()) // upstream serves PUT alone
			return
		}
	default:
		writeError(w, notFoundPath())
		return
	}
	if res.Namespaced && info.Namespace == "" && info.Name != "" {
		writeError(w, notFoundPath())
		return
	}
	if res.Namespaced && info.Namespace == "" && info.Verb != "list" && info.Verb != "watch" {
		writeError(w, notFoundPath())
		return
	}
	switch info.Verb {
	case "get":
		s.get(w, r, res, info)
	case "list":
		s.list(w, r, res, info)
	case "watch":
		s.watch(w, r, res, info)
	case "create":
		if info.Name != "" {
			writeError(w, methodNotAllowed())
			return
		}
		s.create(w, r, res, info)
	case "update":
		if info.Subresource == "finalize" {
			s.finalize(w, r, res, info)
			return
		}
		s.update(w, r, res, info)
	case "patch":
		s.patch(w, r, res, info)
	case "delete":
		if info.Subresource != "" {
			writeError(w, methodNotAllowed())
			return
		}
		s.delete(w, r, res, info)
	case "deletecollection":
		if !servesDeleteCollection(res) || info.Subresource != "" {
			writeError(w, methodNotAllowed())
			return
		}
		s.deleteCollection(w, r, res, info)
	default:
		writeError(w, methodNotAllowed())
	}
}

// initialBodyBuffer is the most a body's buffer starts with, whatever its declared length:
// memory grows with the bytes that arrive, never with what a client says will come.
const initialBodyBuffer = 32 << 10

// receiveBuffer is the buffer a body received before its seat starts with (see receive).
const receiveBuffer = 4 << 10

// readBody reads a request body up to MaxBodyBytes. A body that stops arriving fails at
// the request's deadline (the edge sets it on the connection's reads).
func readBody(r *http.Request) ([]byte, error) {
	n := r.ContentLength
	if n > MaxBodyBytes {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", MaxBodyBytes))
	}
	if rb, ok := r.Body.(*receivedBody); ok {
		// Received before the request took its seat (see receiveBody).
		if rb.err != nil {
			return nil, bodyError(rb.err)
		}
		if len(rb.data) > MaxBodyBytes {
			return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", MaxBodyBytes))
		}
		return rb.data, nil
	}
	var buf bytes.Buffer
	if n > 0 {
		buf.Grow(int(min(n, initialBodyBuffer)))
	}
	if _, err := buf.ReadFrom(io.LimitReader(r.Body, MaxBodyBytes+1)); err != nil {
		return nil, bodyError(err)
	}
	if buf.Len() > MaxBodyBytes {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", MaxBodyBytes))
	}
	return buf.Bytes(), nil
}

// Media types of request bodies.
const (
	jsonMediaType = "application/json"
	yamlMediaType = "application/yaml"
)

// checkBodyType is upstream's 415 for a body whose Content-Type is none of JSON, YAML and,
// for built-in kinds (protobuf true), protobuf. No Content-Type is JSON.
func checkBodyType(r *http.Request, protobuf bool) error {
	accepted := []string{jsonMediaType, yamlMediaType}
	if protobuf {
		accepted = append(accepted, codec.ProtobufContentType)
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil && slices.Contains(accepted, mt) {
		return nil
	}
	return unsupportedMediaType(accepted)
}

// unsupportedMediaType is upstream's 415 listing the accepted media types.
func unsupportedMediaType(accepted []string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: " + strings.Join(accepted, ", "),
	}}
}

// writeOptions reads and validates the options of a write (verb "create", "update" or
// "patch"; patchType for patches) as upstream does: an invalid dryRun, fieldValidation,
// fieldManager or force is 422 on CreateOptions, UpdateOptions or PatchOptions.
func writeOptions(r *http.Request, verb, patchType string) (registry.WriteOptions, codec.FieldValidation, error) {
	q := query(r)
	dryRun, fv, fm := q["dryRun"], q.Get("fieldValidation"), q.Get("fieldManager")
	var errs field.ErrorList
	kind := ""
	switch verb {
	case "create":
		kind = "CreateOptions"
		errs = metav1validation.ValidateCreateOptions(&metav1.CreateOptions{DryRun: dryRun, FieldManager: fm, FieldValidation: fv})
	case "update":
		kind = "UpdateOptions"
		errs = metav1validation.ValidateUpdateOptions(&metav1.UpdateOptions{DryRun: dryRun, FieldManager: fm, FieldValidation: fv})
	default:
		kind = "PatchOptions"
		o := &metav1.PatchOptions{DryRun: dryRun, FieldManager: fm, FieldValidation: fv}
		if _, ok := q["force"]; ok {
			b := queryTrue(q, "force")
			o.Force = &b
		}
		errs = metav1validation.ValidatePatchOptions(o, types.PatchType(patchType))
	}
	if len(errs) > 0 {
		return registry.WriteOptions{}, "", apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
	}
	if fv == "" {
		fv = string(codec.FieldValidationWarn)
	}
	return registry.WriteOptions{DryRun: len(dryRun) > 0}, codec.FieldValidation(fv), nil
}

func (s *Server) get(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	acc, err := negotiate(r)
	if err != nil {
		writeError(w, err)
		return
	}
	// Any resourceVersion is served from the latest revision, but must be one, and one the
	// store has reached (waited for a little, then upstream's 504: registry.TooLargeWait).
	if err := s.cfg.Store.AwaitResourceVersion(r.Context(), query(r).Get("resourceVersion")); err != nil {
		writeError(w, err)
		return
	}
	obj, err := s.cfg.Store.Get(r.Context(), res, info.Namespace, info.Name)
	if err != nil {
		writeError(w, err)
		return
	}
	s.writeObjects(w, r, res, acc, http.StatusOK, obj)
}

// writeObjects writes one object as JSON, a Table or PartialObjectMetadata.
func (s *Server) writeObjects(w http.ResponseWriter, r *http.Request, res *registry.Resource, acc accept, code int, obj runtime.Object) {
	switch {
	case acc.table && s.cfg.Table != nil:
		t, err := s.cfg.Table(res, []runtime.Object{obj}, s.cfg.Clock.Now(), includePolicy(r))
		if err != nil {
			writeError(w, err)
			return
		}
		t.APIVersion, t.Kind = "meta.k8s.io/"+acc.tableVer, "Table"
		writeJSON(w, code, t)
	case acc.partial:
		writeJSON(w, code, partialOf(obj, acc.tableVer))
	default:
		obj.GetObjectKind().SetGroupVersionKind(res.GVK())
		writeJSON(w, code, obj)
	}
}

func includePolicy(r *http.Request) metav1.IncludeObjectPolicy {
	switch p := metav1.IncludeObjectPolicy(query(r).Get("includeObject")); p {
	case metav1.IncludeNone, metav1.IncludeObject:
		return p
	}
	return metav1.IncludeMetadata
}

// HeavySelectorBytes is the length from which a request's selectors are parsed holding a
// seat of long reads (fair.go): parsing costs about 0.3 µs a byte, so a selector as long
// as a request line allows (1 MiB) costs some 0.3 s of a core, which waits its turn
// instead of taking it from other tenants' requests.
const HeavySelectorBytes = 4096

// selectors parses labelSelector and fieldSelector into a compiled selector.Selector,
// whose matching of an object costs about the object's labels and fields whatever the
// selector's size. Long selectors are parsed as long reads.
func (s *Server) selectors(r *http.Request, res *registry.Resource, info requestInfo) (selector.Selector, error) {
	q := query(r)
	ls, fs := q.Get("labelSelector"), q.Get("fieldSelector")
	if info.Name != "" {
		// watch on a single object
		n := "metadata.name=" + info.Name
		if fs != "" {
			fs = n + "," + fs
		} else {
			fs = n
		}
	}
	if len(ls)+len(fs) >= HeavySelectorBytes && pacedLongReads(r.Context()) {
		seat, err := s.pager.take(r.Context(), s.requestTicket(r.Context()))
		if err != nil {
			return selector.Selector{}, err
		}
		defer seat.done()
	}
	sel, err := selector.Parse(ls, fs)
	if err != nil {
		return selector.Selector{}, apierrors.NewBadRequest(err.Error())
	}
	// Field labels are converted as kube-apiserver's list and watch handlers do
	// (ConvertFieldLabel, per kind): the first one the kind refuses answers 400 with the
	// conversion's text.
	if sel.Field != nil && !sel.Field.Empty() {
		f, err := sel.Field.Transform(res.ConvertFieldLabel)
		if err != nil {
			return selector.Selector{}, apierrors.NewBadRequest(err.Error())
		}
		sel = sel.WithField(f)
	}
	return sel, nil
}

// readQuery reads what list and watch share: the answer's media type and the selectors.
// ok is false when it already answered with an error.
func (s *Server) readQuery(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) (accept, selector.Selector, bool) {
	acc, err := negotiate(r)
	if err != nil {
		writeError(w, err)
		return acc, selector.Selector{}, false
	}
	sel, err := s.selectors(r, res, info)
	if err != nil {
		writeError(w, err)
		return acc, sel, false
	}
	if info.Verb == "list" || info.Verb == "watch" {
		if err := listQueryError(query(r), info.Verb == "watch"); err != nil {
			writeError(w, err)
			return acc, sel, false
		}
	}
	return acc, sel, true
}

func (s *Server) list(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	acc, sel, ok := s.readQuery(w, r, res, info)
	if !ok {
		return
	}
	opts := listOptionsOf(query(r), sel)
	limit := opts.Limit
	// A Table of a kind whose printer looks across the list is converted whole, as
	// upstream converts a list (registry.ListTableConvertor); other unlimited lists stream.
	if limit == 0 && !(acc.table && s.cfg.Store != nil && s.cfg.Store.ConvertsListWhole(res)) {
		s.streamList(w, r, res, info.Namespace, acc, opts)
		return
	}
	lr, err := s.cfg.Store.List(r.Context(), res, info.Namespace, opts)
	if err != nil {
		writeError(w, err)
		return
	}
	s.writeListResult(w, r, res, acc, lr)
}

// listOptionsOf is a list's options from its query (checked by listQueryError) and its
// selectors; a negative limit is none.
func listOptionsOf(q url.Values, sel selector.Selector) registry.ListOptions {
	var limit int64
	if l := q.Get("limit"); l != "" {
		limit, _ = strconv.ParseInt(l, 10, 64)
		if limit < 0 {
			limit = 0
		}
	}
	return registry.ListOptions{
		Selector: sel, Limit: limit, Continue: q.Get("continue"),
		ResourceVersion: q.Get("resourceVersion"), ResourceVersionMatch: q.Get("resourceVersionMatch"),
	}
}

// listTable converts a list's items to a Table: Config.ListTable, else Config.Table.
func (s *Server) listTable() TableConverter {
	if s.cfg.ListTable != nil {
		return s.cfg.ListTable
	}
	return s.cfg.Table
}

// writeListResult answers a list read whole (a page of a limited list): as a Table,
// PartialObjectMetadataList or the kind's list, as acc asks.
func (s *Server) writeListResult(w http.ResponseWriter, r *http.Request, res *registry.Resource, acc accept, lr *registry.ListResult) {
	lm := metav1.ListMeta{ResourceVersion: lr.ResourceVersion, Continue: lr.Continue, RemainingItemCount: lr.Remaining}
	switch {
	case acc.table && s.cfg.Table != nil:
		t, err := s.listTable()(res, lr.Items, s.cfg.Clock.Now(), includePolicy(r))
		if err != nil {
			writeError(w, err)
			return
		}
		t.APIVersion, t.Kind = "meta.k8s.io/"+acc.tableVer, "Table"
		t.ListMeta = lm
		writeJSON(w, http.StatusOK, t)
	case acc.partial:
		pl := metav1.PartialObjectMetadataList{ListMeta: lm}
		pl.APIVersion, pl.Kind = "meta.k8s.io/"+acc.tableVer, "PartialObjectMetadataList"
		for _, o := range lr.Items {
			pl.Items = append(pl.Items, *partialOf(o, acc.tableVer))
		}
		if pl.Items == nil {
			pl.Items = []metav1.PartialObjectMetadata{}
		}
		writeJSON(w, http.StatusOK, pl)
	default:
		writeList(w, res, lm, lr.Items)
	}
}

// writeList writes objects of res as its list kind.
func writeList(w http.ResponseWriter, res *registry.Resource, lm metav1.ListMeta, objs []runtime.Object) {
	items := make([]json.RawMessage, 0, len(objs))
	for _, o := range objs {
		o.GetObjectKind().SetGroupVersionKind(res.GVK())
		b, err := json.Marshal(o)
		if err != nil {
			writeError(w, apierrors.NewInternalError(err))
			return
		}
		items = append(items, b)
	}
	writeJSON(w, http.StatusOK, struct {
		Kind       string            `json:"kind"`
		APIVersion string            `json:"apiVersion"`
		Metadata   metav1.ListMeta   `json:"metadata"`
		Items      []json.RawMessage `json:"items"`
	}{res.ListKind, res.GVR.GroupVersion().String(), lm, items})
}

// readWrite reads what create and update share: the answer's media type, the write options
// and the decoded body. ok is false when it already answered with an error.
func (s *Server) readWrite(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) (acc accept, opts registry.WriteOptions, obj runtime.Object, warnings []string, ok bool) {
	acc, err := negotiate(r)
	if err != nil {
		writeError(w, err)
		return acc, opts, nil, nil, false
	}
	// As upstream: a create checks the body's media type before its options, an update
	// after them.
	typeErr := checkBodyType(r, res.Type != nil)
	if typeErr != nil && info.Verb == "create" {
		writeError(w, typeErr)
		return acc, opts, nil, nil, false
	}
	opts, fv, err := writeOptions(r, info.Verb, "")
	if err != nil {
		writeError(w, err)
		return acc, opts, nil, nil, false
	}
	if typeErr != nil {
		writeError(w, typeErr)
		return acc, opts, nil, nil, false
	}
	obj, warnings, err = s.decodeBody(r, res, fv)
	if err != nil {
		writeError(w, err)
		return acc, opts, nil, nil, false
	}
	return acc, opts, obj, warnings, true
}

func (s *Server) create(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	if info.Subresource != "" {
		writeError(w, methodNotAllowed())
		return
	}
	acc, opts, obj, warnings, ok := s.readWrite(w, r, res, info)
	if !ok {
		return
	}
	result, err := s.cfg.Store.Create(r.Context(), res, info.Namespace, obj, opts)
	if err != nil {
		writeError(w, err)
		return
	}
	warn(w, append(warnings, result.Warnings...))
	if !result.JSON.IsZero() && !acc.table && !acc.partial {
		// The object exactly as stored, with its resourceVersion: no second encoding.
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(result.JSON.Len()))
		w.WriteHeader(http.StatusCreated)
		_, _ = result.JSON.WriteTo(w)
		return
	}
	s.writeObjects(w, r, res, acc, http.StatusCreated, result.Object)
}

// decodeBody reads and decodes the request body as an object of res.
func (s *Server) decodeBody(r *http.Request, res *registry.Resource, fv codec.FieldValidation) (runtime.Object, []string, error) {
	body, err := readBody(r)
	if err != nil {
		return nil, nil, err
	}
	d, err := decodeAs(r, res, body, fv, false)
	if err != nil {
		return nil, nil, err
	}
	auditRequestObject(r, d.Object)
	return d.Object, d.Warnings, nil
}

// decodeAs decodes a request body (JSON, YAML or protobuf, by its Content-Type) as an object
// of kind; anyVersion takes a body of another version of the kind as the kind's.
func decodeAs(r *http.Request, kind codec.Kind, body []byte, fv codec.FieldValidation, anyVersion bool) (*codec.Decoded, error) {
	ct := r.Header.Get("Content-Type")
	if codec.IsProtobuf(ct) {
		j, err := codec.ProtobufToJSON(kind, body)
		if err != nil {
			return nil, err
		}
		auditRequestJSON(r, j)
		return codec.Decode(kind, j, fv)
	}
	if anyVersion {
		return codec.DecodeBodyAnyVersion(kind, body, ct, fv)
	}
	return codec.DecodeBody(kind, body, ct, fv)
}

func (s *Server) update(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	acc, opts, obj, warnings, ok := s.readWrite(w, r, res, info)
	if !ok {
		return
	}
	if err := checkName(obj, info); err != nil {
		writeError(w, err)
		return
	}
	result, err := s.cfg.Store.Update(r.Context(), res, info.Namespace, info.Name, info.Subresource, s.trackUpdate(r, res, info.Subresource, func(cur runtime.Object) (runtime.Object, error) {
		if err := uidPrecondition(res, info, obj, cur); err != nil {
			return nil, err
		}
		if err := unconditionalUpdate(res, info, obj); err != nil {
			return nil, err
		}
		return obj.DeepCopyObject(), nil
	}), opts)
	if err != nil {
		writeError(w, err)
		return
	}
	warn(w, append(warnings, result.Warnings...))
	s.writeObjects(w, r, res, acc, http.StatusOK, result.Object)
}

func (s *Server) finalize(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	if err := checkBodyType(r, true); err != nil {
		writeError(w, err)
		return
	}
	obj, _, err := s.decodeBody(r, res, codec.FieldValidationIgnore)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := checkName(obj, info); err != nil {
		writeError(w, err)
		return
	}
	result, err := s.cfg.Store.FinalizeNamespace(r.Context(), info.Name, obj.(*corev1.Namespace))
	if err != nil {
		writeError(w, err)
		return
	}
	s.writeObjects(w, r, res, accept{}, http.StatusOK, result.Object)
}

// checkName refuses an update whose body names another object than its URL, or none, as
// upstream does before reading the stored object (so a missing object is not the answer).
func checkName(obj runtime.Object, info requestInfo) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	name, ns := m.GetName(), m.GetNamespace()
	switch {
	case name == "":
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s based on URL) was undeterminable: name must be provided", info.Name))
	case name != info.Name:
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", name, info.Name))
	case info.Namespace != "" && ns != "" && ns != info.Namespace:
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// uidPrecondition is upstream's conflict for an update whose body's uid (a precondition
// there) is not the stored object's: with its storage's error, naming the key.
func uidPrecondition(res *registry.Resource, info requestInfo, obj, cur runtime.Object) error {
	if cur == nil {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	c, err := meta.Accessor(cur)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if uid := m.GetUID(); uid != "" && uid != c.GetUID() {
		return apierrors.NewConflict(res.GroupResource(), info.Name, fmt.Errorf("StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %v, UID in object meta: %v", res.Key(info.Namespace, info.Name), uid, c.GetUID()))
	}
	return nil
}

// unconditionalUpdate is upstream's 422 for an update of a custom resource whose body has no
// resourceVersion: custom resources allow no unconditional update.
func unconditionalUpdate(res *registry.Resource, info requestInfo, obj runtime.Object) error {
	if res.CRD == nil {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if m.GetResourceVersion() != "" {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: res.GVR.Group, Kind: res.GVR.Resource}, info.Name, field.ErrorList{
		field.Invalid(field.NewPath("metadata", "resourceVersion"), 0, "must be specified for an update")})
}

// deleteOptions reads a delete's DeleteOptions, from its body or else from its query.
func deleteOptions(r *http.Request) (metav1.DeleteOptions, error) {
	body, err := readBody(r)
	if err != nil {
		return metav1.DeleteOptions{}, err
	}
	// As upstream: the options come from the body when there is one (its query is not
	// read), else from the query.
	var p *metav1.DeleteOptions
	if len(body) > 0 {
		if err := checkBodyType(r, true); err != nil {
			return metav1.DeleteOptions{}, err
		}
		p, err = codec.DecodeDeleteOptions(body, r.Header.Get("Content-Type"))
	} else {
		p, err = codec.DecodeDeleteParameters(query(r))
	}
	if err != nil {
		return metav1.DeleteOptions{}, err
	}
	o := *p
	if errs := metav1validation.ValidateDeleteOptions(&o); len(errs) > 0 {
		return o, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	return o, nil
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	opts, err := deleteOptions(r)
	if err != nil {
		writeError(w, err)
		return
	}
	dr, err := s.cfg.Store.Delete(r.Context(), res, info.Namespace, info.Name, opts, registry.WriteOptions{DryRun: len(opts.DryRun) > 0})
	if err != nil {
		writeError(w, err)
		return
	}
	if !dr.Deleted || returnsDeletedObject(res) {
		// As upstream: 202 only when the object waits and the request asked for cascading
		// deletion with orphanDependents=false; otherwise 200.
		code := http.StatusOK
		if !dr.Deleted && opts.OrphanDependents != nil && !*opts.OrphanDependents {
			code = http.StatusAccepted
		}
		s.writeObjects(w, r, res, accept{}, code, dr.Object)
		return
	}
	m := metaOf(dr.Object)
	writeJSON(w, http.StatusOK, successStatus(&metav1.StatusDetails{Name: info.Name, Group: res.GVR.Group, Kind: res.GVR.Resource, UID: m.UID}))
}

// returnsDeletedObject reports the kinds whose delete answers with the object, as upstream
// (custom resources answer with a Status, as kube-apiserver v1.37.2 does).
func returnsDeletedObject(res *registry.Resource) bool {
	switch res.GVR.Resource {
	case "pods", "namespaces", "services", "customresourcedefinitions":
		return res.GVR.Group == "" || res.GVR.Group == "apiextensions.k8s.io"
	}
	return false
}

func (s *Server) deleteCollection(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	q := query(r)
	// As upstream: the list's options first (refused as a list's), then the delete's.
	sel, err := s.selectors(r, res, info)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := listQueryError(q, false); err != nil {
		writeError(w, err)
		return
	}
	opts, err := deleteOptions(r)
	if err != nil {
		writeError(w, err)
		return
	}
	lo := listOptionsOf(q, sel)
	// Upstream lists deleteCollectionPage objects at a time (a resourceVersion other than
	// "0" is then read exactly, as any limited list's), all pages unless a limit was asked
	// for, which ends after the first.
	hasLimit := lo.Limit > 0
	if !hasLimit {
		lo.Limit = deleteCollectionPage
	}
	var first *registry.ListResult
	var listed []runtime.Object
	for {
		lr, err := s.cfg.Store.List(r.Context(), res, info.Namespace, lo)
		if err != nil {
			writeError(w, err)
			return
		}
		if first == nil {
			first = lr
		}
		listed = append(listed, lr.Items...)
		for _, o := range lr.Items {
			m := metaOf(o)
			_, err := s.cfg.Store.Delete(r.Context(), res, m.Namespace, m.Name, opts, registry.WriteOptions{DryRun: len(opts.DryRun) > 0})
			if err != nil && !apierrors.IsNotFound(err) {
				writeError(w, err)
				return
			}
		}
		if hasLimit || lr.Continue == "" {
			break
		}
		lo.Continue, lo.ResourceVersion, lo.ResourceVersionMatch = lr.Continue, "", ""
	}
	// As upstream, the answer is the list of the objects listed for deletion, as listed,
	// with the first page's metadata.
	writeList(w, res, metav1.ListMeta{ResourceVersion: first.ResourceVersion, Continue: first.Continue, RemainingItemCount: first.Remaining}, listed)
}

// deleteCollectionPage is how many objects a deletecollection lists at a time (upstream's
// deleteCollectionPageSize).
const deleteCollectionPage = 10000

// methodNotAllowed is upstream's 405 for a verb a resource does not serve.
func methodNotAllowed() error {
	return apierrors.NewGenericServerResponse(http.StatusMethodNotAllowed, "", schema.GroupResource{}, "", "", 0, false)
}
