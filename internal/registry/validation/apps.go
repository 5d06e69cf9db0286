package validation

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/quotad/quotad/internal/registry/convert"
)

func deref32(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// workloadSelector checks a required, non-empty label selector and returns
// it parsed (nil when it does not parse).
func workloadSelector(sel *metav1.LabelSelector, kind string, p *field.Path) (labels.Selector, field.ErrorList) {
	var errs field.ErrorList
	if sel == nil {
		errs = append(errs, field.Required(p, ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, p)...)
		if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
			errs = append(errs, field.Invalid(p, sel, "empty selector is invalid for "+kind))
		}
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, errs
	}
	return s, errs
}

// templateForReplicaSet is upstream ValidatePodTemplateSpecForReplicaSet;
// kind names the workload in the activeDeadlineSeconds message.
func templateForReplicaSet(t *corev1.PodTemplateSpec, sel labels.Selector, kind string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !sel.Empty() && !sel.Matches(labels.Set(t.Labels)) {
		errs = append(errs, field.Invalid(p.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, podTemplateSpec(t, p)...)
	if t.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(p.Child("spec", "restartPolicy"), t.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(p.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in "+kind+" is not Supported"))
	}
	return errs
}

// Deployment validates a Deployment on create.
func Deployment(d *appsv1.Deployment) field.ErrorList {
	errs := objectMeta(&d.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	return append(errs, deploymentSpec(&d.Spec, field.NewPath("spec"))...)
}

// DeploymentUpdate validates an update of a Deployment; in apps/v1 the
// selector is immutable.
func DeploymentUpdate(n, o *appsv1.Deployment) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, deploymentSpec(&n.Spec, field.NewPath("spec"))...)
	return append(errs, immutable(n.Spec.Selector, o.Spec.Selector, field.NewPath("spec").Child("selector"))...)
}

func deploymentSpec(s *appsv1.DeploymentSpec, p *field.Path) field.ErrorList {
	errs := nonnegative(int64(deref32(s.Replicas)), p.Child("replicas"))
	sel, sErrs := workloadSelector(s.Selector, "deployment", p.Child("selector"))
	errs = append(errs, sErrs...)
	if sel == nil {
		errs = append(errs, field.Invalid(p.Child("selector"), s.Selector, "invalid label selector"))
	} else {
		errs = append(errs, templateForReplicaSet(&s.Template, sel, "ReplicaSet", p.Child("template"))...)
	}
	errs = append(errs, deploymentStrategy(&s.Strategy, p.Child("strategy"))...)
	errs = append(errs, nonnegative(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	if s.RevisionHistoryLimit != nil {
		errs = append(errs, nonnegative(int64(*s.RevisionHistoryLimit), p.Child("revisionHistoryLimit"))...)
	}
	if s.ProgressDeadlineSeconds != nil {
		errs = append(errs, nonnegative(int64(*s.ProgressDeadlineSeconds), p.Child("progressDeadlineSeconds"))...)
		if *s.ProgressDeadlineSeconds <= s.MinReadySeconds {
			errs = append(errs, field.Invalid(p.Child("progressDeadlineSeconds"), s.ProgressDeadlineSeconds, "must be greater than minReadySeconds"))
		}
	}
	return errs
}

func deploymentStrategy(st *appsv1.DeploymentStrategy, p *field.Path) field.ErrorList {
	switch st.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if st.RollingUpdate != nil {
			return field.ErrorList{field.Forbidden(p.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'")}
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		if st.RollingUpdate == nil {
			return field.ErrorList{field.Required(p.Child("rollingUpdate"), "this should be defaulted and never be nil")}
		}
		ru := st.RollingUpdate
		mu, ms := intOrZero(ru.MaxUnavailable), intOrZero(ru.MaxSurge)
		errs := positiveIntOrPercent(mu, p.Child("rollingUpdate").Child("maxUnavailable"))
		errs = append(errs, positiveIntOrPercent(ms, p.Child("rollingUpdate").Child("maxSurge"))...)
		if intOrPercentValue(mu) == 0 && intOrPercentValue(ms) == 0 {
			errs = append(errs, field.Invalid(p.Child("rollingUpdate").Child("maxUnavailable"), mu, "may not be 0 when `maxSurge` is 0"))
		}
		return append(errs, notMoreThan100Percent(mu, p.Child("rollingUpdate").Child("maxUnavailable"))...)
	default:
		return field.ErrorList{field.NotSupported(p, convert.InternalJSON(st), []string{string(appsv1.RecreateDeploymentStrategyType), string(appsv1.RollingUpdateDeploymentStrategyType)})}
	}
	return nil
}

func intOrZero(v *intstr.IntOrString) intstr.IntOrString {
	if v == nil {
		return intstr.FromInt32(0)
	}
	return *v
}

func positiveIntOrPercent(v intstr.IntOrString, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch v.Type {
	case intstr.String:
		for _, m := range validation.IsValidPercent(v.StrVal) {
			errs = append(errs, field.Invalid(p, v, m))
		}
	case intstr.Int:
		errs = append(errs, nonnegative(int64(v.IntValue()), p)...)
	default:
		errs = append(errs, field.Invalid(p, v, "must be an integer or percentage (e.g '5%%')"))
	}
	return errs
}

func percentValue(v intstr.IntOrString) (int, bool) {
	if v.Type != intstr.String || len(validation.IsValidPercent(v.StrVal)) != 0 {
		return 0, false
	}
	n, _ := strconv.Atoi(v.StrVal[:len(v.StrVal)-1])
	return n, true
}

func intOrPercentValue(v intstr.IntOrString) int {
	if n, ok := percentValue(v); ok {
		return n
	}
	return v.IntValue()
}

func notMoreThan100Percent(v intstr.IntOrString, p *field.Path) field.ErrorList {
	n, ok := percentValue(v)
	if !ok || n <= 100 {
		return nil
	}
	return field.ErrorList{field.Invalid(p, v, "must not be greater than 100%")}
}

// ReplicaSet validates a ReplicaSet on create.
func ReplicaSet(rs *appsv1.ReplicaSet) field.ErrorList {
	errs := objectMeta(&rs.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	return append(errs, replicaSetSpec(&rs.Spec, field.NewPath("spec"))...)
}

// ReplicaSetUpdate validates an update of a ReplicaSet.
func ReplicaSetUpdate(n, o *appsv1.ReplicaSet) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, replicaSetSpec(&n.Spec, field.NewPath("spec"))...)
	return append(errs, immutable(n.Spec.Selector, o.Spec.Selector, field.NewPath("spec").Child("selector"))...)
}

func replicaSetSpec(s *appsv1.ReplicaSetSpec, p *field.Path) field.ErrorList {
	errs := nonnegative(int64(deref32(s.Replicas)), p.Child("replicas"))
	errs = append(errs, nonnegative(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	sel, sErrs := workloadSelector(s.Selector, "deployment", p.Child("selector"))
	errs = append(errs, sErrs...)
	if sel == nil {
		return append(errs, field.Invalid(p.Child("selector"), s.Selector, "invalid label selector"))
	}
	return append(errs, templateForReplicaSet(&s.Template, sel, "ReplicaSet", p.Child("template"))...)
}

// StatefulSet validates a StatefulSet on create.
func StatefulSet(ss *appsv1.StatefulSet) field.ErrorList {
	errs := objectMeta(&ss.ObjectMeta, true, nameIsDNSLabel, metaPath)
	return append(errs, statefulSetSpec(&ss.Spec, field.NewPath("spec"))...)
}

func statefulSetSpec(s *appsv1.StatefulSetSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch s.PodManagementPolicy {
	case "":
		errs = append(errs, field.Required(p.Child("podManagementPolicy"), ""))
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		errs = append(errs, field.Invalid(p.Child("podManagementPolicy"), s.PodManagementPolicy,
			fmt.Sprintf("must be '%s' or '%s'", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement)))
	}
	switch s.UpdateStrategy.Type {
	case "":
		errs = append(errs, field.Required(p.Child("updateStrategy"), ""))
	case appsv1.OnDeleteStatefulSetStrategyType:
		if s.UpdateStrategy.RollingUpdate != nil {
			errs = append(errs, field.Invalid(p.Child("updateStrategy").Child("rollingUpdate"), convert.InternalJSON(s.UpdateStrategy.RollingUpdate),
				fmt.Sprintf("only allowed for updateStrategy '%s'", appsv1.RollingUpdateStatefulSetStrategyType)))
		}
	case appsv1.RollingUpdateStatefulSetStrategyType:
		if ru := s.UpdateStrategy.RollingUpdate; ru != nil {
			rp := p.Child("updateStrategy", "rollingUpdate")
			errs = append(errs, nonnegative(int64(deref32(ru.Partition)), rp.Child("partition"))...)
			if ru.MaxUnavailable != nil {
				mp := rp.Child("maxUnavailable")
				errs = append(errs, positiveIntOrPercent(*ru.MaxUnavailable, mp)...)
				if intOrPercentValue(*ru.MaxUnavailable) == 0 {
					errs = append(errs, field.Invalid(mp, *ru.MaxUnavailable, "cannot be 0"))
				}
				errs = append(errs, notMoreThan100Percent(*ru.MaxUnavailable, mp)...)
			}
		}
	default:
		errs = append(errs, field.Invalid(p.Child("updateStrategy"), convert.InternalJSON(s.UpdateStrategy),
			fmt.Sprintf("must be '%s' or '%s'", appsv1.RollingUpdateStatefulSetStrategyType, appsv1.OnDeleteStatefulSetStrategyType)))
	}
	if pol := s.PersistentVolumeClaimRetentionPolicy; pol != nil {
		pp := p.Child("persistentVolumeClaimRetentionPolicy")
		for _, f := range []struct {
			child string
			v     appsv1.PersistentVolumeClaimRetentionPolicyType
		}{{"whenDeleted", pol.WhenDeleted}, {"whenScaled", pol.WhenScaled}} {
			child, v := f.child, f.v
			if v != appsv1.RetainPersistentVolumeClaimRetentionPolicyType && v != appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
				errs = append(errs, field.NotSupported(pp.Child(child), v, []string{string(appsv1.RetainPersistentVolumeClaimRetentionPolicyType), string(appsv1.DeletePersistentVolumeClaimRetentionPolicyType)}))
			}
		}
	}
	for i := range s.VolumeClaimTemplates {
		vp := p.Child("volumeClaimTemplates").Index(i)
		t := &s.VolumeClaimTemplates[i]
		errs = append(errs, metav1validation.ValidateLabels(t.Labels, vp.Child("metadata", "labels"))...)
		errs = append(errs, pvcSpec(&t.Spec, vp.Child("spec"))...)
	}
	errs = append(errs, nonnegative(int64(deref32(s.Replicas)), p.Child("replicas"))...)
	errs = append(errs, nonnegative(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	if s.Ordinals != nil {
		errs = append(errs, nonnegative(int64(s.Ordinals.Start), p.Child("ordinals.start"))...)
	}
	sel, sErrs := workloadSelector(s.Selector, "statefulset", p.Child("selector"))
	errs = append(errs, sErrs...)
	tp := p.Child("template")
	if sel == nil {
		errs = append(errs, field.Invalid(p.Child("selector"), s.Selector, ""))
	} else if !sel.Empty() && !sel.Matches(labels.Set(s.Template.Labels)) {
		errs = append(errs, field.Invalid(tp.Child("metadata", "labels"), s.Template.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, podTemplateSpec(statefulSetPodTemplate(s), tp)...)
	if s.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(tp.Child("spec", "restartPolicy"), s.Template.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if s.Template.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(tp.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in StatefulSet is not Supported"))
	}
	return errs
}

// statefulSetPodTemplate is the template as upstream validates it: the volumes the controller
// adds for the volumeClaimTemplates (a claim's volume replacing a template volume of the same
// name) are there, so containers may mount them, and the hostname and subdomain the
// controller sets are not.
func statefulSetPodTemplate(s *appsv1.StatefulSetSpec) *corev1.PodTemplateSpec {
	if s.Template.Spec.Subdomain == "" && s.Template.Spec.Hostname == "" && len(s.VolumeClaimTemplates) == 0 {
		return &s.Template
	}
	t := s.Template.DeepCopy()
	t.Spec.Subdomain, t.Spec.Hostname = "", ""
	if len(s.VolumeClaimTemplates) > 0 {
		claims := make(map[string]bool, len(s.VolumeClaimTemplates))
		vols := make([]corev1.Volume, 0, len(s.VolumeClaimTemplates)+len(t.Spec.Volumes))
		for i := range s.VolumeClaimTemplates {
			name := s.VolumeClaimTemplates[i].Name
			if claims[name] {
				continue
			}
			claims[name] = true
			vols = append(vols, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name},
			}})
		}
		for _, v := range t.Spec.Volumes {
			if !claims[v.Name] {
				vols = append(vols, v)
			}
		}
		t.Spec.Volumes = vols
	}
	return t
}

// StatefulSetUpdate validates an update of a StatefulSet: only replicas,
// ordinals, template, updateStrategy, the PVC retention policy and
// minReadySeconds may change.
func StatefulSetUpdate(n, o *appsv1.StatefulSet) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, statefulSetSpec(&n.Spec, field.NewPath("spec"))...)
	c := n.DeepCopy()
	c.Spec.Replicas = o.Spec.Replicas
	c.Spec.Template = o.Spec.Template
	c.Spec.UpdateStrategy = o.Spec.UpdateStrategy
	c.Spec.MinReadySeconds = o.Spec.MinReadySeconds
	c.Spec.Ordinals = o.Spec.Ordinals
	c.Spec.PersistentVolumeClaimRetentionPolicy = o.Spec.PersistentVolumeClaimRetentionPolicy
	if !semantic.DeepEqual(c.Spec, o.Spec) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"))
	}
	return errs
}

// DaemonSet validates a DaemonSet on create.
func DaemonSet(ds *appsv1.DaemonSet) field.ErrorList {
	errs := objectMeta(&ds.ObjectMeta, true, nameIsDNSSubdomain, metaPath)
	return append(errs, daemonSetSpec(&ds.Spec, field.NewPath("spec"))...)
}

// DaemonSetUpdate validates an update of a DaemonSet.
func DaemonSetUpdate(n, o *appsv1.DaemonSet) field.ErrorList {
	errs := objectMetaUpdate(&n.ObjectMeta, &o.ObjectMeta, metaPath)
	errs = append(errs, daemonSetSpec(&n.Spec, field.NewPath("spec"))...)
	return append(errs, immutable(n.Spec.Selector, o.Spec.Selector, field.NewPath("spec").Child("selector"))...)
}

func daemonSetSpec(s *appsv1.DaemonSetSpec, p *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabelSelector(s.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))
	if s.Selector == nil {
		errs = append(errs, field.Required(p.Child("selector"), ""))
	}
	sel, err := metav1.LabelSelectorAsSelector(s.Selector)
	if err == nil && s.Selector != nil && !sel.Matches(labels.Set(s.Template.Labels)) {
		errs = append(errs, field.Invalid(p.Child("template", "metadata", "labels"), s.Template.Labels, "`selector` does not match template `labels`"))
	}
	if s.Selector != nil && len(s.Selector.MatchLabels)+len(s.Selector.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(p.Child("selector"), s.Selector, "empty selector is invalid for daemonset"))
	}
	errs = append(errs, podTemplateSpec(&s.Template, p.Child("template"))...)
	if s.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(p.Child("template", "spec", "restartPolicy"), s.Template.Spec.RestartPolicy, []string{string(corev1.RestartPolicyAlways)}))
	}
	if s.Template.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(p.Child("template", "spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in DaemonSet is not Supported"))
	}
	errs = append(errs, nonnegative(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	us := &s.UpdateStrategy
	up := p.Child("updateStrategy")
	switch us.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
	case appsv1.RollingUpdateDaemonSetStrategyType:
		if us.RollingUpdate == nil {
			errs = append(errs, field.Required(up.Child("rollingUpdate"), ""))
			break
		}
		rp := up.Child("rollingUpdate")
		mu, ms := intOrZero(us.RollingUpdate.MaxUnavailable), intOrZero(us.RollingUpdate.MaxSurge)
		errs = append(errs, positiveIntOrPercent(mu, rp.Child("maxUnavailable"))...)
		errs = append(errs, positiveIntOrPercent(ms, rp.Child("maxSurge"))...)
		errs = append(errs, notMoreThan100Percent(mu, rp.Child("maxUnavailable"))...)
		errs = append(errs, notMoreThan100Percent(ms, rp.Child("maxSurge"))...)
		hasU, hasS := intOrPercentValue(mu) != 0, intOrPercentValue(ms) != 0
		switch {
		case hasU && hasS:
			errs = append(errs, field.Invalid(rp.Child("maxSurge"), us.RollingUpdate.MaxSurge, "may not be set when maxUnavailable is non-zero"))
		case !hasU && !hasS:
			errs = append(errs, field.Required(rp.Child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
		}
	default:
		errs = append(errs, field.NotSupported(up, convert.InternalJSON(us), []string{string(appsv1.RollingUpdateDaemonSetStrategyType), string(appsv1.OnDeleteDaemonSetStrategyType)}))
	}
	if s.RevisionHistoryLimit != nil {
		errs = append(errs, nonnegative(int64(*s.RevisionHistoryLimit), p.Child("revisionHistoryLimit"))...)
	}
	return errs
}
