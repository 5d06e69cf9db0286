package validation

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/quota/quantity"
	"github.com/quotad/quotad/internal/registry/convert"
	"github.com/quotad/quotad/internal/registry/defaults"
)

// maxSecretSize bounds the data of a Secret or ConfigMap (1 MiB).
const maxSecretSize = 1 * 1024 * 1024

func annotations(a map[string]string, p *field.Path) field.ErrorList {
	return apimachineryvalidation.ValidateAnnotations(a, p)
}

// immutable is upstream ValidateImmutableField.
func immutable(newVal, oldVal interface{}, p *field.Path) field.ErrorList {
	// quotad's semantic equality: quantities compared within their bounds (apimachinery's
	// scales a quantity by its exponent, however large).
	if semantic.DeepEqual(oldVal, newVal) {
		return nil
	}
	// The value as upstream prints its internal objects.
	return field.ErrorList{field.Invalid(p, convert.InternalValue(newVal), apimachineryvalidation.FieldImmutableErrorMsg)}
}

var (
	supportedAccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOnce, corev1.ReadWriteOncePod}
	supportedVolumeModes = []corev1.PersistentVolumeMode{corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem}
)

// PersistentVolumeClaim validates a PersistentVolumeClaim on create.
func PersistentVolumeClaim(c *corev1.PersistentVolumeClaim) field.ErrorList {
	errs := objectMeta(&c.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	return append(errs, pvcSpec(&c.Spec, field.NewPath("spec"))...)
}

// pvcSpec is upstream ValidatePersistentVolumeClaimSpec.
func pvcSpec(s *corev1.PersistentVolumeClaimSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.AccessModes) == 0 {
		errs = append(errs, field.Required(p.Child("accessModes"), "at least 1 access mode is required"))
	}
	if s.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(s.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
	}
	rwop, other := false, false
	for _, m := range s.AccessModes {
		switch m {
		case corev1.ReadWriteOncePod:
			rwop = true
		case corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOnce:
			other = true
		default:
			errs = append(errs, field.NotSupported(p.Child("accessModes"), m, supportedAccessModes))
		}
	}
	if rwop && other {
		errs = append(errs, field.Forbidden(p.Child("accessModes"), "may not use ReadWriteOncePod with other access modes"))
	}
	sp := p.Child("resources").Key(string(corev1.ResourceStorage))
	if q, ok := s.Resources.Requests[corev1.ResourceStorage]; !ok {
		errs = append(errs, field.Required(sp, ""))
	} else if e := positiveQuantity(q, sp); len(e) > 0 {
		errs = append(errs, e...)
	} else {
		errs = append(errs, resourceQuantityValue(corev1.ResourceStorage, q, sp)...)
	}
	if s.StorageClassName != nil && *s.StorageClassName != "" {
		errs = append(errs, nameErrs(nameIsDNSSubdomain, *s.StorageClassName, p.Child("storageClassName"))...)
	}
	if s.VolumeMode != nil && *s.VolumeMode != corev1.PersistentVolumeBlock && *s.VolumeMode != corev1.PersistentVolumeFilesystem {
		errs = append(errs, field.NotSupported(p.Child("volumeMode"), *s.VolumeMode, supportedVolumeModes))
	}
	if ds := s.DataSource; ds != nil {
		errs = append(errs, dataSource(ds.Name, ds.Kind, ds.APIGroup, nil, p.Child("dataSource"))...)
	}
	if dr := s.DataSourceRef; dr != nil {
		errs = append(errs, dataSource(dr.Name, dr.Kind, dr.APIGroup, dr.Namespace, p.Child("dataSourceRef"))...)
	}
	if s.DataSourceRef != nil && s.DataSourceRef.Namespace != nil && *s.DataSourceRef.Namespace != "" {
		if s.DataSource != nil {
			errs = append(errs, field.Invalid(p, p.Child("dataSource"), "may not be specified when dataSourceRef.namespace is specified"))
		}
	} else if s.DataSource != nil && s.DataSourceRef != nil {
		if !reflect.DeepEqual(s.DataSource.APIGroup, s.DataSourceRef.APIGroup) || s.DataSource.Kind != s.DataSourceRef.Kind || s.DataSource.Name != s.DataSourceRef.Name {
			errs = append(errs, field.Invalid(p, p.Child("dataSource"), "must match dataSourceRef"))
		}
	}
	if s.VolumeAttributesClassName != nil && *s.VolumeAttributesClassName != "" {
		errs = append(errs, nameErrs(nameIsDNSSubdomain, *s.VolumeAttributesClassName, p.Child("volumeAttributesClassName"))...)
	}
	return errs
}

func dataSource(name, kind string, group, ns *string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	if kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	}
	g := ""
	if group != nil {
		g = *group
	}
	if g == "" && kind != "PersistentVolumeClaim" {
		errs = append(errs, field.Invalid(p, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"))
	}
	if g != "" {
		for _, m := range validation.IsDNS1123Subdomain(g) {
			errs = append(errs, field.Invalid(p.Child("apiGroup"), g, m))
		}
	}
	if ns != nil && *ns != "" {
		errs = append(errs, nameErrs(nameIsDNSLabel, *ns, p.Child("namespace"))...)
	}
	return errs
}

// PersistentVolumeClaimUpdate validates an update of a PersistentVolumeClaim:
// the spec is immutable except volumeName (once), the storage request of a
// bound claim and the volume attributes class; storage may not shrink below
// status.capacity.
func PersistentVolumeClaimUpdate(n, o *corev1.PersistentVolumeClaim) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, PersistentVolumeClaim(n)...)
	// quotad's bound on the status sizes the quota evaluator charges
	// (status.allocatedResources) and the resize rule compares (status.capacity).
	errs = append(errs, boundedQuantities(n.Status.Capacity, o.Status.Capacity, field.NewPath("status", "capacity"))...)
	errs = append(errs, boundedQuantities(n.Status.AllocatedResources, o.Status.AllocatedResources, field.NewPath("status", "allocatedResources"))...)
	nc, oc := n.DeepCopy(), o.DeepCopy()
	// A claim stored without one of its data source fields is compared as normalized.
	defaults.NormalizePVCDataSources(&oc.Spec)
	if o.Spec.VolumeName == "" {
		oc.Spec.VolumeName = nc.Spec.VolumeName
	}
	const betaSC = corev1.BetaStorageClassAnnotation
	oldSC, oldAnn := o.Annotations[betaSC]
	newSCAnn, newAnn := n.Annotations[betaSC]
	if oldAnn && o.Spec.StorageClassName == nil && n.Spec.StorageClassName != nil && *n.Spec.StorageClassName == oldSC && (!newAnn || newSCAnn == oldSC) {
		nc.Spec.StorageClassName = nil
	} else {
		if n.Annotations[betaSC] != o.Annotations[betaSC] {
			errs = append(errs, field.Invalid(metaPath.Child("annotations", betaSC), n.Annotations[betaSC], immutableErrorMsg))
		}
		if n.Spec.StorageClassName != nil && o.Spec.StorageClassName == nil && (!oldAnn || *n.Spec.StorageClassName == oldSC) {
			nc.Spec.StorageClassName = oc.Spec.StorageClassName
		}
	}
	if n.Status.Phase == corev1.ClaimBound && nc.Spec.Resources.Requests != nil {
		nc.Spec.Resources.Requests[corev1.ResourceStorage] = o.Spec.Resources.Requests[corev1.ResourceStorage]
	}
	if n.Status.Phase == corev1.ClaimBound && nc.Spec.VolumeAttributesClassName != nil {
		nc.Spec.VolumeAttributesClassName = oc.Spec.VolumeAttributesClassName
	}
	oldSize := o.Spec.Resources.Requests[corev1.ResourceStorage]
	newSize := n.Spec.Resources.Requests[corev1.ResourceStorage]
	statusSize := o.Status.Capacity[corev1.ResourceStorage]
	if !semantic.DeepEqual(nc.Spec, oc.Spec) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), fmt.Sprintf(
			"spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n%v", diff.Diff(convert.InternalJSON(oc.Spec), convert.InternalJSON(nc.Spec)))))
	}
	if quantity.Cmp(newSize, oldSize) < 0 && quantity.Cmp(newSize, statusSize) <= 0 {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "resources", "requests", "storage"), "field can not be less than status.capacity"))
	}
	errs = append(errs, immutable(n.Spec.VolumeMode, o.Spec.VolumeMode, field.NewPath("volumeMode"))...)
	if o.Spec.VolumeAttributesClassName != nil && !reflect.DeepEqual(o.Spec.VolumeAttributesClassName, n.Spec.VolumeAttributesClassName) {
		if n.Spec.VolumeAttributesClassName == nil {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "volumeAttributesClassName"), "update from non-nil value to nil is forbidden"))
		} else if *n.Spec.VolumeAttributesClassName == "" {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "volumeAttributesClassName"), "update from non-nil value to an empty string is forbidden"))
		}
	}
	return errs
}

// ReplicationController validates a ReplicationController on create.
func ReplicationController(rc *corev1.ReplicationController) field.ErrorList {
	errs := objectMeta(&rc.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	return append(errs, rcSpec(&rc.Spec, field.NewPath("spec"))...)
}

// ReplicationControllerUpdate validates an update of a ReplicationController.
func ReplicationControllerUpdate(n, o *corev1.ReplicationController) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	return append(errs, rcSpec(&n.Spec, field.NewPath("spec"))...)
}

func rcSpec(s *corev1.ReplicationControllerSpec, p *field.Path) (errs field.ErrorList) {
	// The replicas, which upstream's declarative validation checks (1.37), after the rest.
	defer func() {
		if s.Replicas == nil {
			errs = append(errs, field.Required(p.Child("replicas"), ""))
		} else {
			errs = append(errs, nonnegative(int64(*s.Replicas), p.Child("replicas"))...)
		}
	}()
	errs = nonnegative(int64(s.MinReadySeconds), p.Child("minReadySeconds"))
	selector := labels.Set(s.Selector).AsSelector()
	if selector.Empty() {
		errs = append(errs, field.Required(p.Child("selector"), ""))
	}
	tp := p.Child("template")
	if s.Template == nil {
		return append(errs, field.Required(tp, ""))
	}
	if !selector.Empty() && !selector.Matches(labels.Set(s.Template.Labels)) {
		errs = append(errs, field.Invalid(tp.Child("metadata", "labels"), s.Template.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, podTemplateSpec(s.Template, tp)...)
	if s.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(tp.Child("spec", "restartPolicy"), s.Template.Spec.RestartPolicy, []corev1.RestartPolicy{corev1.RestartPolicyAlways}))
	}
	if s.Template.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(tp.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in ReplicationController is not Supported"))
	}
	return errs
}

// Namespace validates a Namespace on create.
func Namespace(ns *corev1.Namespace) field.ErrorList {
	errs := objectMeta(&ns.ObjectMeta, false, nameIsDNSLabel, metaPath)
	for i := range ns.Spec.Finalizers {
		f := string(ns.Spec.Finalizers[i])
		fp := field.NewPath("spec", "finalizers")
		errs = append(errs, apimachineryvalidation.ValidateFinalizerName(f, fp)...)
		errs = append(errs, kubeFinalizerName(f, fp)...)
	}
	return errs
}

// NamespaceStatusUpdate validates a write of namespaces/status (upstream's
// ValidateNamespaceStatusUpdate): the phase follows the deletion timestamp.
func NamespaceStatusUpdate(n, o *corev1.Namespace) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	phase := field.NewPath("status", "Phase")
	if n.DeletionTimestamp.IsZero() {
		if n.Status.Phase != corev1.NamespaceActive {
			errs = append(errs, field.Invalid(phase, n.Status.Phase, "may only be 'Active' if `deletionTimestamp` is empty"))
		}
	} else if n.Status.Phase != corev1.NamespaceTerminating {
		errs = append(errs, field.Invalid(phase, n.Status.Phase, "may only be 'Terminating' if `deletionTimestamp` is not empty"))
	}
	return errs
}

// NamespaceFinalizeUpdate validates a write of namespaces/finalize (upstream's
// ValidateNamespaceFinalizeUpdate): each finalizer's name, by index.
func NamespaceFinalizeUpdate(n, o *corev1.Namespace) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	fp := field.NewPath("spec", "finalizers")
	for i := range n.Spec.Finalizers {
		f := string(n.Spec.Finalizers[i])
		errs = append(errs, apimachineryvalidation.ValidateFinalizerName(f, fp.Index(i))...)
		errs = append(errs, kubeFinalizerName(f, fp.Index(i))...)
	}
	return errs
}

// NamespaceUpdate validates an update of a Namespace.
func NamespaceUpdate(n, o *corev1.Namespace) field.ErrorList {
	return append(Namespace(n), objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
}

// Secret validates a Secret on create.
func Secret(s *corev1.Secret) field.ErrorList {
	errs := objectMeta(&s.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	dp := field.NewPath("data")
	total := 0
	for _, k := range sortedKeys(s.Data) {
		for _, m := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(dp.Key(k), k, m))
		}
		total += len(s.Data[k])
	}
	if total > maxSecretSize {
		errs = append(errs, field.TooLong(dp, "", maxSecretSize))
	}
	redactedJSON := func(key string) {
		b, ok := s.Data[key]
		if !ok {
			errs = append(errs, field.Required(dp.Key(key), ""))
			return
		}
		if err := json.Unmarshal(b, &map[string]interface{}{}); err != nil {
			errs = append(errs, field.Invalid(dp.Key(key), "<secret contents redacted>", err.Error()))
		}
	}
	switch s.Type {
	case corev1.SecretTypeServiceAccountToken:
		if s.Annotations[corev1.ServiceAccountNameKey] == "" {
			errs = append(errs, field.Required(metaPath.Child("annotations").Key(corev1.ServiceAccountNameKey), ""))
		}
	case corev1.SecretTypeDockercfg:
		redactedJSON(corev1.DockerConfigKey)
	case corev1.SecretTypeDockerConfigJson:
		redactedJSON(corev1.DockerConfigJsonKey)
	case corev1.SecretTypeBasicAuth:
		_, u := s.Data[corev1.BasicAuthUsernameKey]
		_, pw := s.Data[corev1.BasicAuthPasswordKey]
		if !u && !pw {
			errs = append(errs, field.Required(dp.Key(corev1.BasicAuthUsernameKey), ""), field.Required(dp.Key(corev1.BasicAuthPasswordKey), ""))
		}
	case corev1.SecretTypeSSHAuth:
		if len(s.Data[corev1.SSHAuthPrivateKey]) == 0 {
			errs = append(errs, field.Required(dp.Key(corev1.SSHAuthPrivateKey), ""))
		}
	case corev1.SecretTypeTLS:
		if _, ok := s.Data[corev1.TLSCertKey]; !ok {
			errs = append(errs, field.Required(dp.Key(corev1.TLSCertKey), ""))
		}
		if _, ok := s.Data[corev1.TLSPrivateKeyKey]; !ok {
			errs = append(errs, field.Required(dp.Key(corev1.TLSPrivateKeyKey), ""))
		}
	}
	return errs
}

// SecretUpdate validates an update of a Secret: type is immutable, and so
// is the data of an immutable secret.
func SecretUpdate(n, o *corev1.Secret) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, immutable(n.Type, o.Type, field.NewPath("type"))...)
	if o.Immutable != nil && *o.Immutable {
		if n.Immutable == nil || !*n.Immutable {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
		}
		if !reflect.DeepEqual(n.Data, o.Data) {
			errs = append(errs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
		}
	}
	return append(errs, Secret(n)...)
}

// ConfigMap validates a ConfigMap on create.
func ConfigMap(c *corev1.ConfigMap) field.ErrorList {
	errs := objectMeta(&c.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	total := 0
	for _, k := range sortedKeys(c.Data) {
		for _, m := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(k), k, m))
		}
		if _, dup := c.BinaryData[k]; dup {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(k), k, "duplicate of key present in binaryData"))
		}
		total += len(c.Data[k])
	}
	for _, k := range sortedKeys(c.BinaryData) {
		for _, m := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(k), k, m))
		}
		total += len(c.BinaryData[k])
	}
	if total > maxSecretSize {
		errs = append(errs, field.TooLong(field.NewPath(""), "", maxSecretSize))
	}
	return errs
}

// ConfigMapUpdate validates an update of a ConfigMap.
func ConfigMapUpdate(n, o *corev1.ConfigMap) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	if o.Immutable != nil && *o.Immutable {
		if n.Immutable == nil || !*n.Immutable {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
		}
		if !reflect.DeepEqual(n.Data, o.Data) {
			errs = append(errs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
		}
		if !reflect.DeepEqual(n.BinaryData, o.BinaryData) {
			errs = append(errs, field.Forbidden(field.NewPath("binaryData"), "field is immutable when `immutable` is set"))
		}
	}
	return append(errs, ConfigMap(n)...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return sets.List(sets.New(keys...))
}

// LimitRange validates a LimitRange on create and update (upstream has no
// update-specific rules).
func LimitRange(lr *corev1.LimitRange) field.ErrorList {
	errs := objectMeta(&lr.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	types := map[corev1.LimitType]bool{}
	fp := field.NewPath("spec", "limits")
	for i := range lr.Spec.Limits {
		ip := fp.Index(i)
		it := &lr.Spec.Limits[i]
		errs = append(errs, limitRangeType(it.Type, ip.Child("type"))...)
		if types[it.Type] {
			errs = append(errs, field.Duplicate(ip.Child("type"), it.Type))
		}
		types[it.Type] = true
		nameFn := resourceName
		if it.Type == corev1.LimitTypePod || it.Type == corev1.LimitTypeContainer {
			nameFn = containerResourceName
		}
		keys := sets.Set[string]{}
		collect := func(l corev1.ResourceList, child string) map[string]resource.Quantity {
			out := map[string]resource.Quantity{}
			var names namesBuf
			for _, k := range sortedNames(l, &names) {
				errs = append(errs, nameFn(k, ip.Child(child).Key(string(k)))...)
				keys.Insert(string(k))
				out[string(k)] = l[k]
			}
			// quotad's bound (LimitRanger compares these with every pod's values).
			errs = append(errs, boundedQuantities(l, nil, ip.Child(child))...)
			return out
		}
		maxes := collect(it.Max, "max")
		mins := collect(it.Min, "min")
		defs, defReqs := map[string]resource.Quantity{}, map[string]resource.Quantity{}
		if it.Type == corev1.LimitTypePod {
			if len(it.Default) > 0 {
				errs = append(errs, field.Forbidden(ip.Child("default"), "may not be specified when `type` is 'Pod'"))
			}
			if len(it.DefaultRequest) > 0 {
				errs = append(errs, field.Forbidden(ip.Child("defaultRequest"), "may not be specified when `type` is 'Pod'"))
			}
		} else {
			defs = collect(it.Default, "default")
			defReqs = collect(it.DefaultRequest, "defaultRequest")
		}
		if it.Type == corev1.LimitTypePersistentVolumeClaim {
			_, minOK := it.Min[corev1.ResourceStorage]
			_, maxOK := it.Max[corev1.ResourceStorage]
			if !minOK && !maxOK {
				errs = append(errs, field.Required(ip.Child("limits"), "either minimum or maximum storage value is required, but neither was provided"))
			}
		}
		ratios := collect(it.MaxLimitRequestRatio, "maxLimitRequestRatio")
		for _, k := range sets.List(keys) {
			minQ, minOK := mins[k]
			maxQ, maxOK := maxes[k]
			defQ, defOK := defs[k]
			reqQ, reqOK := defReqs[k]
			ratio, ratioOK := ratios[k]
			if minOK && maxOK && quantity.Cmp(minQ, maxQ) > 0 {
				errs = append(errs, field.Invalid(ip.Child("min").Key(k), minQ, fmt.Sprintf("min value %s is greater than max value %s", minQ.String(), maxQ.String())))
			}
			if reqOK && minOK && quantity.Cmp(minQ, reqQ) > 0 {
				errs = append(errs, field.Invalid(ip.Child("defaultRequest").Key(k), reqQ, fmt.Sprintf("min value %s is greater than default request value %s", minQ.String(), reqQ.String())))
			}
			if reqOK && maxOK && quantity.Cmp(reqQ, maxQ) > 0 {
				errs = append(errs, field.Invalid(ip.Child("defaultRequest").Key(k), reqQ, fmt.Sprintf("default request value %s is greater than max value %s", reqQ.String(), maxQ.String())))
			}
			if reqOK && defOK && quantity.Cmp(reqQ, defQ) > 0 {
				errs = append(errs, field.Invalid(ip.Child("defaultRequest").Key(k), reqQ, fmt.Sprintf("default request value %s is greater than default limit value %s", reqQ.String(), defQ.String())))
			}
			if defOK && minOK && quantity.Cmp(minQ, defQ) > 0 {
				errs = append(errs, field.Invalid(ip.Child("default").Key(k), minQ, fmt.Sprintf("min value %s is greater than default value %s", minQ.String(), defQ.String())))
			}
			if defOK && maxOK && quantity.Cmp(defQ, maxQ) > 0 {
				errs = append(errs, field.Invalid(ip.Child("default").Key(k), maxQ, fmt.Sprintf("default value %s is greater than max value %s", defQ.String(), maxQ.String())))
			}
			if ratioOK && quantity.Cmp(ratio, *resource.NewQuantity(1, resource.DecimalSI)) < 0 {
				errs = append(errs, field.Invalid(ip.Child("maxLimitRequestRatio").Key(k), ratio, fmt.Sprintf("ratio %s is less than 1", ratio.String())))
			}
			if ratioOK && minOK && maxOK {
				r := float64(ratio.Value())
				minV, maxV := minQ.Value(), maxQ.Value()
				if ratio.Value() < resource.MaxMilliValue && minV < resource.MaxMilliValue && maxV < resource.MaxMilliValue {
					r = float64(ratio.MilliValue()) / 1000
					minV, maxV = minQ.MilliValue(), maxQ.MilliValue()
				}
				limit := float64(maxV) / float64(minV)
				if r > limit {
					errs = append(errs, field.Invalid(ip.Child("maxLimitRequestRatio").Key(k), ratio, fmt.Sprintf("ratio %s is greater than max/min = %f", ratio.String(), limit)))
				}
			}
			if !isOvercommitAllowed(corev1.ResourceName(k)) && defOK && reqOK && quantity.Cmp(defQ, reqQ) != 0 {
				errs = append(errs, field.Invalid(ip.Child("defaultRequest").Key(k), reqQ, fmt.Sprintf("default value %s must equal to defaultRequest value %s in %s", defQ.String(), reqQ.String(), k)))
			}
		}
	}
	return errs
}

func limitRangeType(t corev1.LimitType, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, m := range validation.IsQualifiedName(string(t)) {
		errs = append(errs, field.Invalid(p, t, m))
	}
	if len(errs) != 0 {
		return errs
	}
	if !strings.Contains(string(t), "/") && t != corev1.LimitTypePod && t != corev1.LimitTypeContainer && t != corev1.LimitTypePersistentVolumeClaim {
		errs = append(errs, field.Invalid(p, t, "must be a standard limit type or fully qualified"))
	}
	return errs
}

// LimitRangeUpdate validates an update of a LimitRange.
func LimitRangeUpdate(n, o *corev1.LimitRange) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	return append(errs, LimitRange(n)...)
}

// ServiceAccount validates a ServiceAccount on create.
func ServiceAccount(sa *corev1.ServiceAccount) field.ErrorList {
	return objectMeta(&sa.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
}

// ServiceAccountUpdate validates an update of a ServiceAccount.
func ServiceAccountUpdate(n, o *corev1.ServiceAccount) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	return append(errs, ServiceAccount(n)...)
}

// Length limits of core/v1 Event fields.
const (
	eventReportingInstanceMax = 128
	eventActionMax            = 128
	eventReasonMax            = 128
	eventNoteMax              = 1024
)

// Event validates a core/v1 Event on create (upstream legacy event rules,
// with reportingComponent as the v1 field name).
func Event(e *corev1.Event) field.ErrorList {
	errs := objectMeta(&e.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	return append(errs, legacyEvent(e)...)
}

func legacyEvent(e *corev1.Event) field.ErrorList {
	var errs field.ErrorList
	invNS := field.NewPath("involvedObject", "namespace")
	if e.EventTime.IsZero() {
		if e.InvolvedObject.Namespace == "" {
			if e.Namespace != metav1.NamespaceNone && e.Namespace != metav1.NamespaceDefault {
				errs = append(errs, field.Invalid(invNS, e.InvolvedObject.Namespace, "does not match event.namespace"))
			}
		} else if e.Namespace != e.InvolvedObject.Namespace {
			errs = append(errs, field.Invalid(invNS, e.InvolvedObject.Namespace, "does not match event.namespace"))
		}
	} else {
		if e.InvolvedObject.Namespace == "" && e.Namespace != metav1.NamespaceDefault && e.Namespace != metav1.NamespaceSystem {
			errs = append(errs, field.Invalid(invNS, e.InvolvedObject.Namespace, "does not match event.namespace"))
		}
		rc := field.NewPath("reportingComponent")
		if e.ReportingController == "" {
			errs = append(errs, field.Required(rc, ""))
		}
		errs = append(errs, qualifiedName(e.ReportingController, rc)...)
		if e.ReportingInstance == "" {
			errs = append(errs, field.Required(field.NewPath("reportingInstance"), ""))
		}
		if len(e.ReportingInstance) > eventReportingInstanceMax {
			errs = append(errs, field.Invalid(field.NewPath("reportingInstance"), "", fmt.Sprintf("can have at most %v characters", eventReportingInstanceMax)))
		}
		if e.Action == "" {
			errs = append(errs, field.Required(field.NewPath("action"), ""))
		}
		if len(e.Action) > eventActionMax {
			errs = append(errs, field.Invalid(field.NewPath("action"), "", fmt.Sprintf("can have at most %v characters", eventActionMax)))
		}
		if e.Reason == "" {
			errs = append(errs, field.Required(field.NewPath("reason"), ""))
		}
		if len(e.Reason) > eventReasonMax {
			errs = append(errs, field.Invalid(field.NewPath("reason"), "", fmt.Sprintf("can have at most %v characters", eventReasonMax)))
		}
		if len(e.Message) > eventNoteMax {
			errs = append(errs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", eventNoteMax)))
		}
	}
	for _, m := range validation.IsDNS1123Subdomain(e.Namespace) {
		errs = append(errs, field.Invalid(field.NewPath("namespace"), e.Namespace, m))
	}
	return errs
}

// EventUpdate validates an update of a core/v1 Event.
func EventUpdate(n, o *corev1.Event) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	return append(errs, legacyEvent(n)...)
}

// Node validates a Node on create.
func Node(n *corev1.Node) field.ErrorList {
	errs := objectMeta(&n.ObjectMeta, false, nameIsDNSSubdomain, metaPath)
	errs = append(errs, nodeTaints(n.Spec.Taints, metaPath.Child("taints"))...)
	errs = append(errs, nodeResources(n)...)
	pp := field.NewPath("spec", "podCIDRs")
	for i, c := range n.Spec.PodCIDRs {
		errs = append(errs, validation.IsValidCIDR(pp.Index(i), c)...)
	}
	if len(n.Spec.PodCIDRs) > 1 {
		seen := sets.Set[string]{}
		for i, c := range n.Spec.PodCIDRs {
			if seen.Has(c) {
				errs = append(errs, field.Duplicate(pp.Index(i), c))
			}
			seen.Insert(c)
		}
	}
	return errs
}

func nodeResources(n *corev1.Node) field.ErrorList {
	var errs field.ErrorList
	var names namesBuf
	for _, k := range sortedNames(n.Status.Capacity, &names) {
		errs = append(errs, resourceQuantityValue(k, n.Status.Capacity[k], field.NewPath("status", "capacity", string(k)))...)
	}
	for _, k := range sortedNames(n.Status.Allocatable, &names) {
		errs = append(errs, resourceQuantityValue(k, n.Status.Allocatable[k], field.NewPath("status", "allocatable", string(k)))...)
	}
	return errs
}

func nodeTaints(ts []corev1.Taint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	unique := map[corev1.TaintEffect]sets.Set[string]{}
	for i, t := range ts {
		ip := p.Index(i)
		errs = append(errs, labelName(t.Key, ip.Child("key"))...)
		if msgs := validation.IsValidLabelValue(t.Value); len(msgs) != 0 {
			errs = append(errs, field.Invalid(ip.Child("value"), t.Value, strings.Join(msgs, ";")))
		}
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		case "":
			errs = append(errs, field.Required(ip.Child("effect"), ""))
		default:
			errs = append(errs, field.NotSupported(ip.Child("effect"), t.Effect, []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}))
		}
		if unique[t.Effect].Has(t.Key) {
			d := field.Duplicate(ip, convert.InternalJSON(t))
			d.Detail = "taints must be unique by key and effect pair"
			errs = append(errs, d)
			continue
		}
		if unique[t.Effect] == nil {
			unique[t.Effect] = sets.Set[string]{}
		}
		unique[t.Effect].Insert(t.Key)
	}
	return errs
}

// NodeUpdate validates an update of a Node: podCIDRs and providerID are
// fixed once set.
func NodeUpdate(n, o *corev1.Node) field.ErrorList {
	errs := Node(n)
	errs = append(errs, objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)...)
	addrs := map[corev1.NodeAddress]bool{}
	for i, a := range n.Status.Addresses {
		if addrs[a] {
			errs = append(errs, field.Duplicate(field.NewPath("status", "addresses").Index(i), convert.InternalJSON(a)))
		}
		addrs[a] = true
	}
	const cidrMsg = "node updates may not change podCIDR except from \"\" to valid"
	if len(o.Spec.PodCIDRs) > 0 {
		if len(o.Spec.PodCIDRs) != len(n.Spec.PodCIDRs) {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "podCIDRs"), cidrMsg))
		} else {
			for i, v := range o.Spec.PodCIDRs {
				if v != n.Spec.PodCIDRs[i] {
					errs = append(errs, field.Forbidden(field.NewPath("spec", "podCIDRs"), cidrMsg))
				}
			}
		}
	}
	if o.Spec.ProviderID != "" && o.Spec.ProviderID != n.Spec.ProviderID {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "providerID"), "node updates may not change providerID except from \"\" to valid"))
	}
	if n.Spec.DoNotUseExternalID != o.Spec.DoNotUseExternalID {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "externalID"), "may not be updated"))
	}
	return errs
}
