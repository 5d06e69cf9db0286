package codec

import (
	"encoding/json"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// ProtobufContentType is the media type of Kubernetes' protobuf encoding, which kubectl's
// typed clients send.
const ProtobufContentType = "application/vnd.kubernetes.protobuf"

// protobufScheme knows every built-in kind client-go's typed clients send, plus the
// apiextensions.k8s.io kinds (CRDs, and DeleteOptions as the apiextensions clientset sends it).
var protobufScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(scheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(apiregistrationv1.AddToScheme(s))
	return s
}()

var protobufSerializer = protobuf.NewSerializer(protobufScheme, protobufScheme)

// IsProtobuf reports whether a Content-Type is Kubernetes protobuf.
func IsProtobuf(contentType string) bool {
	return strings.TrimSpace(strings.Split(contentType, ";")[0]) == ProtobufContentType
}

// ProtobufToJSON decodes a protobuf body of a built-in kind and returns its JSON.
func ProtobufToJSON(res Kind, body []byte) ([]byte, error) {
	if res.GoType() == nil {
		return nil, apierrors.NewGenericServerResponse(415, "create", res.GroupResource(), "", "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml", 0, false)
	}
	if err := checkProtobufQuantityTexts(res, body); err != nil {
		return nil, err
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
