package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"

	boundedpatch "github.com/quotad/quotad/internal/jsonpatch"
	"github.com/quotad/quotad/internal/registry"
	"github.com/quotad/quotad/internal/registry/codec"
)

// Patch media types.
const (
	jsonPatchType      = "application/json-patch+json"
	mergePatchType     = "application/merge-patch+json"
	strategicPatchType = "application/strategic-merge-patch+json"
	applyPatchType     = "application/apply-patch+yaml"
)

func unsupportedPatch(res *registry.Resource) error {
	types := []string{jsonPatchType, mergePatchType}
	if res.Type != nil {
		types = append(types, strategicPatchType)
	}
	types = append(types, applyPatchType)
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: " + strings.Join(types, ", "),
	}}
}

// applyPatch applies a patch document of the given type to the JSON of cur, stopping when
// ctx ends; a large one as a long read (Server.work).
func (s *Server) applyPatch(ctx context.Context, res *registry.Resource, patchType string, cur runtime.Object, patch []byte) ([]byte, error) {
	orig, err := json.Marshal(cur)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if patchType == strategicPatchType && res.Type == nil {
		return nil, unsupportedPatch(res)
	}
	var schemaObj runtime.Object
	if res.Type != nil {
		schemaObj = res.New()
	}
	var out []byte
	err = s.work(ctx, len(orig)+len(patch), func(ws *workSeat) (err error) {
		out, err = applyPatchJSON(ctx, patchType, orig, patch, schemaObj, ws.take)
		return err
	})
	if err != nil {
		if se, ok := err.(*apierrors.StatusError); ok && se.ErrStatus.Code == http.StatusUnprocessableEntity {
			// As upstream: no resource in the message, the patch error as the cause.
			return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", se.ErrStatus.Message, 0, false)
		}
		return nil, err
	}
	return out, nil
}

// patchShapeError is upstream's 400 for a patch (valid JSON) of the wrong shape for its
// type: a JSON patch that is not an array of objects, a merge patch that is not an object,
// a strategic merge patch that is neither an object nor null (the types named are the
// ones upstream decodes into).
func patchShapeError(patchType string, patch []byte) error {
	kind := jsonKind(patch)
	switch patchType {
	case jsonPatchType:
		switch kind {
		case "null":
			return nil
		case "array":
			var ops []json.RawMessage
			if err := json.Unmarshal(patch, &ops); err != nil {
				return apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
			}
			for _, op := range ops {
				if k := jsonKind(op); k != "object" && k != "null" {
					return apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: json: cannot unmarshal %s into Go value of type handlers.jsonPatchOp", k))
				}
			}
			return nil
		}
		return apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: json: cannot unmarshal %s into Go value of type []handlers.jsonPatchOp", kind))
	case mergePatchType:
		if kind != "object" && kind != "null" {
			return apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: json: cannot unmarshal %s into Go value of type map[string]interface {}", kind))
		}
	case strategicPatchType:
		if kind != "object" && kind != "null" {
			return apierrors.NewBadRequest(fmt.Sprintf("json: cannot unmarshal %s into Go value of type map[string]interface {}", kind))
		}
	}
	return nil
}

// jsonKind names the kind of a JSON value as encoding/json's errors do ("object", "array",
// "string", "number", "bool"), or "null".
func jsonKind(b []byte) string {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return "null"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// MaxJSONPatchWork bounds a JSON patch's work (array elements moved, bytes copied): about
// a quarter of a second of a core. Past it the patch is refused with a 413, as a strategic
// merge past MaxStrategicMergeCost is, instead of running until its request's deadline
// while holding a seat of long reads (10,000 insertions at the head of a 200,000-element
// array move 2·10⁹ elements). kube-apiserver has no such bound.
const MaxJSONPatchWork = 100_000_000

// applyPatchJSON applies a patch to a JSON document; schemaObj is the Go type strategic merge
// patches are computed against. Its work is bounded (internal/jsonpatch's limits,
// MaxStrategicMergeCost) and a JSON patch stops when ctx ends; heavy, when set, is called
// (and may fail the patch) once the work turns out heavy (HeavyWorkBytes units of a JSON
// patch's work, HeavyMergeCost comparisons of a strategic merge).
func applyPatchJSON(ctx context.Context, patchType string, orig, patch []byte, schemaObj runtime.Object, heavy func() error) ([]byte, error) {
	if err := patchShapeError(patchType, patch); err != nil {
		return nil, err
	}
	switch patchType {
	case jsonPatchType:
		p, err := boundedpatch.Decode(patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		lim := boundedpatch.DefaultLimits
		lim.Heavy, lim.HeavyWork, lim.MaxWork = heavy, HeavyWorkBytes, MaxJSONPatchWork
		out, err := p.Apply(ctx, orig, lim)
		var tooMany *boundedpatch.TooManyOperationsError
		var tooMuch *boundedpatch.WorkError
		switch {
		case errors.As(err, &tooMany), errors.As(err, &tooMuch):
			return nil, apierrors.NewRequestEntityTooLargeError(err.Error())
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			return nil, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid, Message: err.Error()}}
		}
		return out, nil
	case mergePatchType:
		if jsonKind(patch) == "null" {
			return nil, apierrors.NewBadRequest("Invalid JSON Patch")
		}
		out, err := jsonpatch.MergePatch(orig, patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return out, nil
	case strategicPatchType:
		if bytes.IndexByte(patch, '[') >= 0 {
			cost, err := checkStrategicMergeCost(orig, patch, schemaObj)
			if err != nil {
				return nil, err
			}
			if cost >= HeavyMergeCost && heavy != nil {
				if err := heavy(); err != nil {
					return nil, err
				}
			}
		}
		out, err := strategicpatch.StrategicMergePatch(orig, patch, schemaObj)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return out, nil
	}
	return nil, apierrors.NewBadRequest("unsupported patch type " + patchType)
}

func (s *Server) patch(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo) {
	acc, err := negotiate(r)
	if err != nil {
		writeError(w, err)
		return
	}
	pt, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	pt = strings.TrimSpace(pt)
	switch pt {
	case jsonPatchType, mergePatchType, strategicPatchType, applyPatchType:
	default:
		if res.Type != nil {
			// A built-in kind's routes refuse other media types before its handler, with
			// their router's message.
			writeError(w, &apierrors.StatusError{ErrStatus: metav1.Status{
				Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
				Message: "415: Unsupported Media Type", Details: &metav1.StatusDetails{},
			}})
			return
		}
		writeError(w, unsupportedPatch(res))
		return
	}
	opts, fv, err := writeOptions(r, "patch", pt)
	if err != nil {
		writeError(w, err)
		return
	}
	body, err := readBody(r)
	if err != nil {
		writeError(w, err)
		return
	}
	if pt == applyPatchType {
		s.apply(w, r, res, info, acc, opts, fv, body)
		return
	}
	if !json.Valid(body) {
		writeError(w, apierrors.NewBadRequest("invalid JSON patch"))
		return
	}
	var warnings []string
	result, err := s.cfg.Store.Update(r.Context(), res, info.Namespace, info.Name, info.Subresource, s.trackUpdate(r, res, info.Subresource, s.patchWith(r.Context(), res, pt, body, fv, &warnings)), opts)
	if err != nil {
		writeError(w, err)
		return
	}
	warn(w, append(warnings, result.Warnings...))
	s.writeObjects(w, r, res, acc, http.StatusOK, result.Object)
}

// patchWith returns the update that applies patch (of type pt) to the current object and
// decodes the result under fv, keeping the decoding's warnings in *warnings.
func (s *Server) patchWith(ctx context.Context, res *registry.Resource, pt string, patch []byte, fv codec.FieldValidation, warnings *[]string) registry.UpdateFunc {
	kind := codec.JSONPatched
	if pt == strategicPatchType {
		kind = codec.StrategicPatched
	}
	return func(cur runtime.Object) (runtime.Object, error) {
		patched, err := s.applyPatch(ctx, res, pt, cur, patch)
		if err != nil {
			return nil, err
		}
		d, err := codec.DecodePatched(res, patched, fv, kind)
		if err != nil {
			return nil, err
		}
		*warnings = d.Warnings
		return d.Object, nil
	}
}

// apply serves a server-side apply patch. quotad keeps no managedFields: the applied
// configuration is merged onto the live object (strategic merge for built-in kinds, JSON
// merge for custom resources), and a missing object is created from it.
func (s *Server) apply(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo, acc accept, opts registry.WriteOptions, fv codec.FieldValidation, body []byte) {
	applied, err := codec.ToJSON(body, "application/yaml")
	if err != nil {
		// As upstream's patch handler, which converts an applied configuration to JSON first.
		writeError(w, apierrors.NewBadRequest("error encoding patch: "+err.Error()))
		return
	}
	// A subresource's object must exist first: it is never created by an apply.
	typeErr := appliedType(res, applied)
	if typeErr != nil && info.Subresource == "" {
		writeError(w, typeErr)
		return
	}
	if s.cfg.FieldManagers != nil && info.Subresource == "" {
		s.applyManaged(w, r, res, info, acc, opts, fv, body, applied)
		return
	}
	mergeType := strategicPatchType
	if res.Type == nil {
		mergeType = mergePatchType
	}
	var warnings []string
	code := http.StatusOK
	patch := s.patchWith(r.Context(), res, mergeType, applied, fv, &warnings)
	result, err := s.cfg.Store.Update(r.Context(), res, info.Namespace, info.Name, info.Subresource, func(cur runtime.Object) (runtime.Object, error) {
		if typeErr != nil {
			return nil, typeErr
		}
		return patch(cur)
	}, opts)
	if apierrors.IsNotFound(err) && info.Subresource == "" {
		d, derr := decodeApplied(res, info, applied, fv)
		if derr != nil {
			writeError(w, derr)
			return
		}
		warnings = d.Warnings
		result, err = s.cfg.Store.Create(r.Context(), res, info.Namespace, d.Object, opts)
		code = http.StatusCreated
	}
	if err != nil {
		writeError(w, err)
		return
	}
	warn(w, append(warnings, result.Warnings...))
	s.writeObjects(w, r, res, acc, code, result.Object)
}

// appliedType is upstream's answer (its field manager's version check) to an applied
// configuration of another kind or version than the resource's, or none: 400 "invalid object
// type: <group/version, Kind=kind>", and its decoder's to one that is not an object; nil
// when the configuration is of the resource's kind.
func appliedType(res *registry.Resource, applied []byte) error {
	if k := jsonKind(applied); k != "object" && k != "null" {
		return apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal %s into Go value of type map[string]interface {}", k))
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(applied, &tm); err != nil {
		return nil
	}
	if gvk := tm.GroupVersionKind(); gvk != res.GVK() {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid object type: %v", gvk))
	}
	return nil
}

// decodeApplied decodes an applied configuration as the resource's kind and checks that
// it names the object of the URL.
func decodeApplied(res *registry.Resource, info requestInfo, applied []byte, fv codec.FieldValidation) (*codec.Decoded, error) {
	d, err := codec.Decode(res, applied, fv)
	if err != nil {
		return nil, err
	}
	if n := metaOf(d.Object).Name; n != info.Name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, info.Name))
	}
	return d, nil
}

// applyManaged is server-side apply with field ownership (apimachinery's managedfields, as
// kube-apiserver): the applied configuration sets the fields it names, with conflicts (409)
// against fields other managers own unless forced; fields the manager applied before and
// no longer names are removed unless another manager owns them. The managers and what they
// own are kept in metadata.managedFields.
//
// As upstream's apply patcher: the applied configuration's fields are checked against the
// kind's schema by the field manager itself (an unknown field is its "failed to create typed
// patch object (...): .x: field not declared in schema", whatever fieldValidation says);
// fieldValidation=Strict|Warn then checks the YAML for duplicate keys ("error strict
// decoding YAML: ...", or its lines as warnings).
func (s *Server) applyManaged(w http.ResponseWriter, r *http.Request, res *registry.Resource, info requestInfo, acc accept, opts registry.WriteOptions, fv codec.FieldValidation, body, applied []byte) {
	q := query(r)
	manager, force := q.Get("fieldManager"), queryTrue(q, "force")
	fm, err := s.cfg.FieldManagers.For(res)
	if err != nil {
		writeError(w, apierrors.NewInternalError(err))
		return
	}
	// 1. The applied configuration: checked by decoding it as the resource's kind (errors
	// and unknown-field warnings as for any write), applied as the fields it names (a typed
	// object would name every field of its structs).
	if _, err := decodeApplied(res, info, applied, codec.FieldValidationIgnore); err != nil {
		writeError(w, err)
		return
	}
	cfg := &unstructured.Unstructured{}
	if err := json.Unmarshal(applied, &cfg.Object); err != nil {
		writeError(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	var warnings []string
	apply := func(live runtime.Object) (runtime.Object, error) {
		live = live.DeepCopyObject()
		live.GetObjectKind().SetGroupVersionKind(res.GVK())
		var obj runtime.Object
		if err := s.work(r.Context(), len(body), func(*workSeat) (err error) {
			obj, err = fm.Apply(live, cfg.DeepCopy(), manager, force)
			return err
		}); err != nil {
			return nil, err
		}
		warnings = nil
		if fv == codec.FieldValidationStrict || fv == codec.FieldValidationWarn {
			if err := yaml.UnmarshalStrict(body, &map[string]interface{}{}); err != nil {
				if fv == codec.FieldValidationStrict {
					return nil, apierrors.NewBadRequest(fmt.Sprintf("error strict decoding YAML: %v", err))
				}
				for _, line := range strings.Split(err.Error(), "\n") {
					if line = strings.TrimSpace(line); line != "" {
						warnings = append(warnings, line)
					}
				}
			}
		}
		return obj, nil
	}
	// 2. Onto the live object, or onto an empty one when there is none.
	code := http.StatusOK
	result, err := s.cfg.Store.Update(r.Context(), res, info.Namespace, info.Name, "", apply, opts)
	if apierrors.IsNotFound(err) {
		empty := res.New()
		metaOf(empty).SetName(info.Name)
		metaOf(empty).SetNamespace(info.Namespace)
		var obj runtime.Object
		if obj, err = apply(empty); err == nil {
			result, err = s.cfg.Store.Create(r.Context(), res, info.Namespace, obj, opts)
			code = http.StatusCreated
		}
	}
	if err != nil {
		writeError(w, err)
		return
	}
	warn(w, append(warnings, result.Warnings...))
	s.writeObjects(w, r, res, acc, code, result.Object)
}

// trackUpdate makes the writer of a non-apply update the manager of the fields it changes,
// on objects whose fields are owned (server-side apply made them so): as upstream, an edit
// takes over what it changes, so an applier still naming the old value then conflicts
// instead of undoing it silently. Objects nobody applied to stay untracked.
func (s *Server) trackUpdate(r *http.Request, res *registry.Resource, subresource string, update registry.UpdateFunc) registry.UpdateFunc {
	if s.cfg.FieldManagers == nil || subresource != "" {
		return update
	}
	return func(cur runtime.Object) (runtime.Object, error) {
		obj, err := update(cur)
		if err != nil || len(metaOf(cur).GetManagedFields()) == 0 {
			return obj, err
		}
		fm, err := s.cfg.FieldManagers.For(res)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		live := cur.DeepCopyObject()
		live.GetObjectKind().SetGroupVersionKind(res.GVK())
		obj.GetObjectKind().SetGroupVersionKind(res.GVK())
		return fm.UpdateNoErrors(live, obj, updateManager(r)), nil
	}
}

// updateManager names the manager of a non-apply write as kube-apiserver does: the
// fieldManager parameter, or else the client's user agent up to its first "/" (at most 128
// characters).
func updateManager(r *http.Request) string {
	if m := query(r).Get("fieldManager"); m != "" {
		return m
	}
	ua, _, _ := strings.Cut(r.UserAgent(), "/")
	if len(ua) > 128 {
		ua = ua[:128]
	}
	return ua
}
