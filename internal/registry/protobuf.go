package registry

import (
	"encoding/json"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// ProtobufContentType is the media type of Kubernetes' protobuf encoding, which kubectl's
// typed clients send.
const ProtobufContentType = "application/vnd.kubernetes.protobuf"

var protobufSerializer = protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)

// IsProtobuf reports whether a Content-Type is Kubernetes protobuf.
func IsProtobuf(contentType string) bool {
	return strings.TrimSpace(strings.Split(contentType, ";")[0]) == ProtobufContentType
}

// ProtobufToJSON decodes a protobuf body of a built-in kind and returns its JSON.
func ProtobufToJSON(res *Resource, body []byte) ([]byte, error) {
	if res.Type == nil {
		return nil, apierrors.NewGenericServerResponse(415, "create", res.GroupResource(), "", "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml", 0, false)
	}
	into := res.New()
	obj, _, err := protobufSerializer.Decode(body, nil, into)
	if err != nil {
		gvk := res.GVK()
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, gvk.Kind, err))
	}
	return json.Marshal(obj.(runtime.Object))
}

// DecodeProtobuf decodes a protobuf body into into (a registered built-in type such as
// metav1.DeleteOptions).
func DecodeProtobuf(body []byte, into runtime.Object) error {
	_, _, err := protobufSerializer.Decode(body, nil, into)
	return err
}
