package apiserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// writeJSON writes one object as JSON with the given status code.
func writeJSON(w http.ResponseWriter, code int, obj interface{}) {
	b, err := json.Marshal(obj)
	if err != nil {
		writeError(w, apierrors.NewInternalError(err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// statusOf converts any error into upstream's metav1.Status.
func statusOf(err error) metav1.Status {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		s := st.Status()
		s.Kind, s.APIVersion = "Status", "v1"
		if s.Status == "" {
			s.Status = metav1.StatusFailure
		}
		return s
	}
	// Plain errors (e.g. admission's "insufficient quota to match these scopes") are HTTP 500
	// with an empty reason and the text verbatim, as upstream.
	return metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  err.Error(),
		Code:     http.StatusInternalServerError,
	}
}

// writeError writes err as a metav1.Status. Past the request's deadline, any error is
// answered as the timeout (the handler's work ended because its context did).
func writeError(w http.ResponseWriter, err error) {
	if tw, ok := w.(*timeoutWriter); ok && tw.expired() {
		tw.answerTimeout()
		return
	}
	if n, ok := w.(errorNoter); ok {
		n.noteError(err)
	}
	st := statusOf(err)
	code := int(st.Code)
	if code == 0 {
		code = http.StatusInternalServerError
	}
	// As upstream, a status that says when to retry says it in Retry-After too.
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	writeJSON(w, code, st)
}

func successStatus(details *metav1.StatusDetails) metav1.Status {
	return metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Details:  details,
	}
}

// warn adds upstream's Warning headers (code 299, agent "-", the text quoted as upstream
// quotes it: only '"' and '\\' escaped).
func warn(w http.ResponseWriter, msgs []string) {
	for _, m := range msgs {
		if h, err := utilnet.NewWarningHeader(299, "-", m); err == nil {
			w.Header().Add("Warning", h)
		}
	}
}

// accept is what the client asked for in its Accept header.
type accept struct {
	table    bool
	partial  bool // PartialObjectMetadata(List)
	tableVer string
}

// negotiate reads the Accept header: JSON, Table or PartialObjectMetadata. It reports a 406
// when only unsupported media types are acceptable.
func negotiate(r *http.Request) (accept, error) {
	h := r.Header.Get("Accept")
	if h == "" {
		return accept{}, nil
	}
	supported := false
	for part := range strings.SplitSeq(h, ",") {
		mt, rest, _ := strings.Cut(part, ";")
		mt = strings.TrimSpace(mt)
		// The parameters read: as, g and v (the last of each wins).
		var as, g, v string
		for f := range strings.SplitSeq(rest, ";") {
			switch k, val, ok := strings.Cut(strings.TrimSpace(f), "="); {
			case !ok:
			case k == "as":
				as = val
			case k == "g":
				g = val
			case k == "v":
				v = val
			}
		}
		if mt != "application/json" && mt != "*/*" && mt != "application/*" && mt != "application/yaml" {
			continue
		}
		switch as {
		case "Table":
			if g == "meta.k8s.io" && (v == "v1" || v == "v1beta1") {
				return accept{table: true, tableVer: v}, nil
			}
			continue
		case "PartialObjectMetadata", "PartialObjectMetadataList":
			if g == "meta.k8s.io" && (v == "v1" || v == "v1beta1") {
				return accept{partial: true, tableVer: v}, nil
			}
			continue
		case "":
			supported = true
		}
		if supported {
			return accept{}, nil
		}
	}
	if !supported {
		return accept{}, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotAcceptable, Reason: metav1.StatusReasonNotAcceptable,
			Message: "only the following media types are accepted: application/json, application/yaml, application/json;as=Table;v=v1;g=meta.k8s.io"}}
	}
	return accept{}, nil
}

// partialOf returns the PartialObjectMetadata of an object.
func partialOf(obj runtime.Object, ver string) *metav1.PartialObjectMetadata {
	m := metaOf(obj)
	p := &metav1.PartialObjectMetadata{}
	p.APIVersion = "meta.k8s.io/" + ver
	p.Kind = "PartialObjectMetadata"
	p.ObjectMeta = *m
	return p
}
