package validation

import (
	"encoding/json"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ControllerRevision validates a ControllerRevision on create (upstream
// ValidateControllerRevision): a DNS-subdomain name, data present and a
// non-negative revision.
func ControllerRevision(cr *appsv1.ControllerRevision) field.ErrorList {
	errs := objectMeta(&cr.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	if cr.Data.Raw == nil && cr.Data.Object == nil {
		errs = append(errs, field.Required(field.NewPath("data"), "data is mandatory"))
	}
	return append(errs, nonnegative(cr.Revision, field.NewPath("revision"))...)
}

// ControllerRevisionUpdate validates an update of a ControllerRevision
// (upstream ValidateControllerRevisionUpdate): data is immutable.
func ControllerRevisionUpdate(n, o *appsv1.ControllerRevision) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, ControllerRevision(n)...)
	if nv, ov := rawValue(n.Data.Raw), rawValue(o.Data.Raw); !reflect.DeepEqual(nv, ov) {
		errs = append(errs, immutable(nv, ov, field.NewPath("data"))...)
	}
	return errs
}

// rawValue decodes the JSON of a RawExtension for a semantic comparison; bytes
// that are not JSON compare as themselves.
func rawValue(raw []byte) interface{} {
	if raw == nil {
		return nil
	}
	var v interface{}
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	return v
}
