package codec

import (
	"mime"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DecodeDeleteOptions decodes a delete's body (of media type contentType: JSON, YAML or
// Kubernetes protobuf; "" is JSON) as kube-apiserver does: with the meta group's codecs,
// which take a DeleteOptions of any group and version (older clients send their group's),
// default an empty apiVersion or kind to meta.k8s.io/v1 DeleteOptions, and refuse every
// other kind (400, with the decoder's error as the message), so that no body of another
// kind is read as options and acted on.
func DecodeDeleteOptions(body []byte, contentType string) (*metav1.DeleteOptions, error) {
	mt := runtime.ContentTypeJSON
	if contentType != "" {
		if t, _, err := mime.ParseMediaType(contentType); err == nil {
			mt = t
		}
	}
	info, ok := runtime.SerializerInfoForMediaType(metainternalversionscheme.Codecs.SupportedMediaTypes(), mt)
	if !ok {
		info, _ = runtime.SerializerInfoForMediaType(metainternalversionscheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	}
	o := &metav1.DeleteOptions{}
	def := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
	obj, _, err := metainternalversionscheme.Codecs.DecoderToVersion(info.Serializer, def.GroupVersion()).Decode(body, &def, o)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if obj != runtime.Object(o) {
		return nil, apierrors.NewBadRequest("decoded object cannot be converted to DeleteOptions")
	}
	return o, nil
}

// DecodeDeleteParameters reads a delete's options from its query when it has no body, as
// kube-apiserver's parameter codec does (a malformed number is a 400 with the parser's
// error; a boolean other than false, f or 0 is true).
func DecodeDeleteParameters(query map[string][]string) (*metav1.DeleteOptions, error) {
	o := &metav1.DeleteOptions{}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(query, metav1.SchemeGroupVersion, o); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return o, nil
}
