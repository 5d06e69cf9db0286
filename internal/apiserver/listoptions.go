package apiserver

import (
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metainternalversionvalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// listScalars are the list and watch parameters other than the selectors (which
// Server.selectors parses, with its bounds), in the order upstream's parameter codec reads
// them.
var listScalars = []string{"watch", "allowWatchBookmarks", "resourceVersion", "resourceVersionMatch", "timeoutSeconds", "limit", "continue", "sendInitialEvents"}

// listQueryError is upstream's answer to a list's or a watch's query that its parameter
// codec refuses (400: a number that does not parse, with the parser's error) or its
// ListOptions validation does (422: a resourceVersionMatch without a resourceVersion or
// with a continue token, one it does not know, sendInitialEvents on a list or without
// NotOlderThan on a watch); nil when both take it. watch is the request's verb.
func listQueryError(q url.Values, watch bool) error {
	var sub url.Values
	for _, k := range listScalars {
		if v, ok := q[k]; ok {
			if sub == nil {
				sub = make(url.Values, len(listScalars))
			}
			sub[k] = v
		}
	}
	if sub == nil {
		return nil // the defaults, which the validation takes
	}
	var o metainternalversion.ListOptions
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(sub, metav1.SchemeGroupVersion, &o); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	o.Watch = watch
	// With the WatchList feature (on in v1.37), a watch from no resourceVersion or "0"
	// defaults to initial events not older than it.
	metainternalversion.SetListOptionsDefaults(&o, true)
	if errs := metainternalversionvalidation.ValidateListOptions(&o, true); len(errs) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	return nil
}

// queryTrue reads a boolean query parameter as upstream's parameter codec does: absent,
// "0" or "false" (in any case) is false, anything else true.
func queryTrue(q url.Values, key string) bool {
	v, ok := q[key]
	if !ok || len(v) == 0 {
		return false
	}
	return !(v[0] == "0" || strings.EqualFold(v[0], "false"))
}
