package registry

import (
	"fmt"
	"reflect"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"

	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/registry/codec"
	"github.com/quotad/quotad/internal/storage"
)

// A Resource is the codec's description of its kind (codec.Kind): package codec decodes
// request bodies and encodes objects; what stays here is what ties the stored form to the
// catalogue (versions served from another resource's storage, the cluster quota's stored
// form).

// GoType returns r.Type, the struct type of the resource's objects (codec.Kind).
func (r *Resource) GoType() reflect.Type { return r.Type }

// CustomSchema returns the structural schema of a custom resource's version (nil for
// built-in kinds and versions without one) and whether its CRD preserves unknown fields
// (codec.Kind).
func (r *Resource) CustomSchema() (*apiextensionsv1.JSONSchemaProps, bool) {
	v := r.CRDVersion()
	if v == nil || v.Schema == nil {
		return nil, false
	}
	return v.Schema.OpenAPIV3Schema, r.CRD.Spec.PreserveUnknownFields
}

// encodeStored returns the stored form of an object of res: its own, or, for a version
// sharing another resource's storage, that resource's.
func encodeStored(res *Resource, obj runtime.Object) ([]byte, error) {
	if sv := res.Storage; sv != nil {
		stored, err := sv.ToStorage(obj)
		if err != nil {
			return nil, err
		}
		m, err := meta.Accessor(stored)
		if err != nil {
			return nil, err
		}
		m.SetResourceVersion("")
		return codec.Encode(stored, sv.Resource.GVK())
	}
	return codec.EncodeForStorage(obj, res.GVK())
}

// decodeKV decodes a stored value into a fresh object of res and sets its resourceVersion.
func decodeKV(res *Resource, kv storage.KV) (runtime.Object, error) {
	return decodeStored(res, kv.Value, kv.ModRevision)
}

func decodeStored(res *Resource, value []byte, rev int64) (runtime.Object, error) {
	if sv := res.Storage; sv != nil {
		stored, err := decodeStored(sv.Resource, value, rev)
		if err != nil {
			return nil, err
		}
		obj, err := sv.FromStorage(stored)
		if err != nil {
			return nil, err
		}
		obj.GetObjectKind().SetGroupVersionKind(res.GVK())
		return obj, nil
	}
	obj := res.New()
	if crq, ok := obj.(*clusterquota.ClusterResourceQuota); ok {
		if err := codec.DecodeClusterQuota(value, crq); err != nil { // its stored form (codec.EncodeClusterQuota)
			return nil, err
		}
	} else if u, ok := obj.(*unstructured.Unstructured); ok {
		m := map[string]interface{}{}
		if err := kjson.UnmarshalCaseSensitivePreserveInts(value, &m); err != nil {
			return nil, err
		}
		u.Object = m
		codec.DefaultCustom(res, u) // objects stored before a default was added get it on read
	} else if err := kjson.UnmarshalCaseSensitivePreserveInts(value, obj); err != nil {
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(res.GVK())
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	m.SetResourceVersion(fmt.Sprint(rev))
	return obj, nil
}
