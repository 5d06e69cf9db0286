package validation

import (
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PriorityClass limits (upstream pkg/apis/scheduling).
const (
	highestUserDefinablePriority = int32(1000000000)
	systemPriorityClassPrefix    = "system-"
)

// systemPriorityClasses are the only classes allowed to use the system-
// prefix, with their fixed values.
var systemPriorityClasses = []schedulingv1.PriorityClass{
	{Value: 2000001000}, {Value: 2000000000},
}

var systemPriorityClassNames = []string{"system-node-critical", "system-cluster-critical"}

func knownSystemPriorityClass(name string, value int32, globalDefault bool) error {
	for i, n := range systemPriorityClassNames {
		if n != name {
			continue
		}
		if systemPriorityClasses[i].Value != value {
			return fmt.Errorf("value of %v PriorityClass must be %v", n, systemPriorityClasses[i].Value)
		}
		if globalDefault {
			return fmt.Errorf("globalDefault of %v PriorityClass must be %v", n, false)
		}
		return nil
	}
	return fmt.Errorf("%v is not a known system priority class", name)
}

// PriorityClass validates a PriorityClass on create.
func PriorityClass(pc *schedulingv1.PriorityClass) field.ErrorList {
	errs := objectMeta(&pc.ObjectMeta, false, nameIsDNSSubdomain, metaPath)
	if strings.HasPrefix(pc.Name, systemPriorityClassPrefix) {
		if err := knownSystemPriorityClass(pc.Name, pc.Value, pc.GlobalDefault); err != nil {
			errs = append(errs, field.Forbidden(metaPath.Child("name"),
				"priority class names with '"+systemPriorityClassPrefix+"' prefix are reserved for system use only. error: "+err.Error()))
		}
	} else if pc.Value > highestUserDefinablePriority {
		errs = append(errs, field.Forbidden(field.NewPath("value"), fmt.Sprintf("maximum allowed value of a user defined priority is %v", highestUserDefinablePriority)))
	}
	if pc.PreemptionPolicy != nil {
		errs = append(errs, preemptionPolicy(pc.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
	}
	return errs
}

// PriorityClassUpdate validates an update of a PriorityClass: value and
// preemptionPolicy are immutable.
func PriorityClassUpdate(n, o *schedulingv1.PriorityClass) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	if n.Value != o.Value {
		errs = append(errs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
	}
	return append(errs, immutable(n.PreemptionPolicy, o.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
}

// StorageClass limits (upstream pkg/apis/storage/validation).
const (
	maxProvisionerParameterSize = 256 * (1 << 10)
	maxProvisionerParameterLen  = 512
)

// StorageClass validates a StorageClass on create.
func StorageClass(sc *storagev1.StorageClass) field.ErrorList {
	errs := objectMeta(&sc.ObjectMeta, false, nameIsDNSSubdomain, metaPath)
	pp := field.NewPath("provisioner")
	if sc.Provisioner == "" {
		errs = append(errs, field.Required(pp, sc.Provisioner))
	} else {
		errs = append(errs, qualifiedName(strings.ToLower(sc.Provisioner), pp)...)
	}
	errs = append(errs, storageClassParameters(sc.Parameters, field.NewPath("parameters"))...)
	if rp := sc.ReclaimPolicy; rp != nil && *rp != "" && *rp != corev1.PersistentVolumeReclaimDelete && *rp != corev1.PersistentVolumeReclaimRetain {
		errs = append(errs, field.NotSupported(field.NewPath("reclaimPolicy"), rp, []string{string(corev1.PersistentVolumeReclaimDelete), string(corev1.PersistentVolumeReclaimRetain)}))
	}
	bp := field.NewPath("volumeBindingMode")
	if m := sc.VolumeBindingMode; m == nil {
		errs = append(errs, field.Required(bp, ""))
	} else if *m != storagev1.VolumeBindingImmediate && *m != storagev1.VolumeBindingWaitForFirstConsumer {
		errs = append(errs, field.NotSupported(bp, m, []string{string(storagev1.VolumeBindingImmediate), string(storagev1.VolumeBindingWaitForFirstConsumer)}))
	}
	return append(errs, allowedTopologies(sc.AllowedTopologies, field.NewPath("allowedTopologies"))...)
}

// allowedTopologies is upstream's validateAllowedTopologies: each term's label
// requirements (a key, values without repeats, no key twice), no term twice.
func allowedTopologies(terms []corev1.TopologySelectorTerm, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	// As upstream: the terms seen start as len(terms) nil maps, which an empty term equals.
	seen := make([]map[string]sets.Set[string], len(terms))
	for i, t := range terms {
		ep := p.Index(i).Child("matchLabelExpressions")
		keys := map[string]sets.Set[string]{}
		for j, r := range t.MatchLabelExpressions {
			rp := ep.Index(j)
			vp := rp.Child("values")
			if len(r.Values) == 0 {
				errs = append(errs, field.Required(vp, ""))
			}
			values := sets.New[string]()
			for k, v := range r.Values {
				if values.Has(v) {
					errs = append(errs, field.Duplicate(vp.Index(k), v))
				}
				values.Insert(v)
			}
			errs = append(errs, labelName(r.Key, rp.Child("key"))...)
			if _, ok := keys[r.Key]; ok {
				errs = append(errs, field.Duplicate(rp.Child("key"), r.Key))
			}
			keys[r.Key] = values
		}
		for _, o := range seen {
			if semantic.DeepEqual(o, keys) {
				errs = append(errs, field.Duplicate(ep, ""))
			}
		}
		seen = append(seen, keys)
	}
	return errs
}

func storageClassParameters(params map[string]string, p *field.Path) field.ErrorList {
	if len(params) > maxProvisionerParameterLen {
		return field.ErrorList{field.TooLong(p, "Provisioner Parameters exceeded max allowed", maxProvisionerParameterLen)}
	}
	var errs field.ErrorList
	var total int64
	for _, k := range sortedKeys(params) {
		if k == "" {
			errs = append(errs, field.Invalid(p, k, "field can not be empty."))
		}
		total += int64(len(k)) + int64(len(params[k]))
	}
	if total > maxProvisionerParameterSize {
		errs = append(errs, field.TooLong(p, "", maxProvisionerParameterSize))
	}
	return errs
}

// StorageClassUpdate validates an update of a StorageClass: parameters,
// provisioner, reclaimPolicy and volumeBindingMode are immutable.
func StorageClassUpdate(n, o *storagev1.StorageClass) field.ErrorList {
	errs := StorageClass(n)
	errs = append(errs, objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
	if !reflect.DeepEqual(o.Parameters, n.Parameters) {
		errs = append(errs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
	}
	if n.Provisioner != o.Provisioner {
		errs = append(errs, field.Forbidden(field.NewPath("provisioner"), "updates to provisioner are forbidden."))
	}
	if !ptrEqual(n.ReclaimPolicy, o.ReclaimPolicy) {
		errs = append(errs, field.Forbidden(field.NewPath("reclaimPolicy"), "updates to reclaimPolicy are forbidden."))
	}
	return append(errs, immutable(n.VolumeBindingMode, o.VolumeBindingMode, field.NewPath("volumeBindingMode"))...)
}
