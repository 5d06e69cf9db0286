package limitranger

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"github.com/quotad/quotad/internal/quota/quantity"
)

// applyDefaults sets the Container defaults of lr on every container and init container
// of pod that lacks them, and records what it set in the annotation.
func applyDefaults(lr *corev1.LimitRange, pod *corev1.Pod) {
	// 1. Collect the defaults; a later Container item overrides an earlier one.
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypeContainer {
			continue
		}
		for name, q := range item.DefaultRequest {
			requests[name] = q.DeepCopy()
		}
		for name, q := range item.Default {
			limits[name] = q.DeepCopy()
		}
	}

	// 2. Fill them in, noting per container what was set.
	var notes []string
	for i := range pod.Spec.Containers {
		notes = mergeDefaults(&pod.Spec.Containers[i], requests, limits, "container", notes)
	}
	for i := range pod.Spec.InitContainers {
		notes = mergeDefaults(&pod.Spec.InitContainers[i], requests, limits, "init container", notes)
	}
	if len(notes) == 0 {
		return
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[Annotation] = "LimitRanger plugin set: " + strings.Join(notes, "; ")
}

// mergeDefaults fills one container and appends its notes, e.g.
// "cpu, memory request for container app".
func mergeDefaults(c *corev1.Container, requests, limits corev1.ResourceList, prefix string, notes []string) []string {
	if c.Resources.Limits == nil {
		c.Resources.Limits = corev1.ResourceList{}
	}
	if c.Resources.Requests == nil {
		c.Resources.Requests = corev1.ResourceList{}
	}
	setLimits := fill(c.Resources.Limits, limits)
	setRequests := fill(c.Resources.Requests, requests)
	if len(setRequests) > 0 {
		notes = append(notes, fmt.Sprintf("%s request for %s %s", strings.Join(setRequests, ", "), prefix, c.Name))
	}
	if len(setLimits) > 0 {
		notes = append(notes, fmt.Sprintf("%s limit for %s %s", strings.Join(setLimits, ", "), prefix, c.Name))
	}
	return notes
}

// fill copies into dst every entry of defaults it lacks and returns their sorted names.
func fill(dst, defaults corev1.ResourceList) []string {
	var set []string
	for name, q := range defaults {
		if _, ok := dst[name]; !ok {
			dst[name] = q.DeepCopy()
			set = append(set, string(name))
		}
	}
	slices.Sort(set)
	return set
}

// validatePod checks pod against the Container and Pod items of lr.
func validatePod(lr *corev1.LimitRange, pod *corev1.Pod) error {
	var errs []error
	for _, item := range lr.Spec.Limits {
		switch item.Type {
		case corev1.LimitTypeContainer:
			for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
				for i := range cs {
					errs = append(errs, checkItem(item, cs[i].Resources.Requests, cs[i].Resources.Limits)...)
				}
			}
		case corev1.LimitTypePod:
			errs = append(errs, checkItem(item, podRequests(pod), podLimits(pod))...)
		}
	}
	return utilerrors.NewAggregate(errs)
}

// checkItem checks one request/limit pair against an item's min, max and ratio.
func checkItem(item corev1.LimitRangeItem, requests, limits corev1.ResourceList) []error {
	var errs []error
	t := string(item.Type)
	for _, name := range sortedNames(item.Min) {
		if err := minConstraint(t, name, item.Min[name], requests, limits); err != nil {
			errs = append(errs, err)
		}
	}
	for _, name := range sortedNames(item.Max) {
		if err := maxConstraint(t, name, item.Max[name], requests, limits); err != nil {
			errs = append(errs, err)
		}
	}
	for _, name := range sortedNames(item.MaxLimitRequestRatio) {
		if err := ratioConstraint(t, name, item.MaxLimitRequestRatio[name], requests, limits); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// validatePVC checks a claim's storage requests (never its limits) against the
// PersistentVolumeClaim items of lr. Claims get no defaults.
func validatePVC(lr *corev1.LimitRange, pvc *corev1.PersistentVolumeClaim) error {
	var errs []error
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypePersistentVolumeClaim {
			continue
		}
		t := string(item.Type)
		requests := pvc.Spec.Resources.Requests
		for _, name := range sortedNames(item.Min) {
			if err := minConstraint(t, name, item.Min[name], requests, corev1.ResourceList{}); err != nil {
				errs = append(errs, err)
			}
		}
		for _, name := range sortedNames(item.Max) {
			if err := maxRequestConstraint(t, name, item.Max[name], requests); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return utilerrors.NewAggregate(errs)
}

func sortedNames(rl corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(rl))
	for name := range rl {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// atCommonScale returns the three quantities at a common precision: milli-units when none of
// them would overflow, whole units otherwise. Values stored beyond the quantity bound (before
// it existed) count as the bound.
func atCommonScale(request, limit, enforced resource.Quantity) (int64, int64, int64) {
	request, limit, enforced = quantity.Clamp(request), quantity.Clamp(limit), quantity.Clamp(enforced)
	r, l, e := request.Value(), limit.Value(), enforced.Value()
	if r <= resource.MaxMilliValue && l <= resource.MaxMilliValue && e <= resource.MaxMilliValue {
		return request.MilliValue(), limit.MilliValue(), enforced.MilliValue()
	}
	return r, l, e
}

func minConstraint(limitType string, name corev1.ResourceName, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[name]
	lim, hasLim := limits[name]
	r, l, e := atCommonScale(req, lim, enforced)
	switch {
	case !hasReq:
		return fmt.Errorf("minimum %s usage per %s is %s.  No request is specified", name, limitType, enforced.String())
	case r < e:
		return fmt.Errorf("minimum %s usage per %s is %s, but request is %s", name, limitType, enforced.String(), req.String())
	case hasLim && l < e:
		return fmt.Errorf("minimum %s usage per %s is %s, but limit is %s", name, limitType, enforced.String(), lim.String())
	}
	return nil
}

func maxConstraint(limitType string, name corev1.ResourceName, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[name]
	lim, hasLim := limits[name]
	r, l, e := atCommonScale(req, lim, enforced)
	switch {
	case !hasLim:
		return fmt.Errorf("maximum %s usage per %s is %s.  No limit is specified", name, limitType, enforced.String())
	case l > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but limit is %s", name, limitType, enforced.String(), lim.String())
	case hasReq && r > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, limitType, enforced.String(), req.String())
	}
	return nil
}

// maxRequestConstraint is the max check for kinds whose limits are not user input (PVCs).
func maxRequestConstraint(limitType string, name corev1.ResourceName, enforced resource.Quantity, requests corev1.ResourceList) error {
	req, hasReq := requests[name]
	r, _, e := atCommonScale(req, resource.Quantity{}, enforced)
	switch {
	case !hasReq:
		return fmt.Errorf("maximum %s usage per %s is %s.  No request is specified", name, limitType, enforced.String())
	case r > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, limitType, enforced.String(), req.String())
	}
	return nil
}

func ratioConstraint(limitType string, name corev1.ResourceName, enforced resource.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[name]
	lim, hasLim := limits[name]
	r, l, _ := atCommonScale(req, lim, enforced)
	if !hasReq || r == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", name, limitType, enforced.String())
	}
	if !hasLim || l == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", name, limitType, enforced.String())
	}
	// The observed ratio is shown as is; the comparison is in milli-units when the
	// enforced ratio allows it, as upstream does.
	observed := float64(l) / float64(r)
	shown := observed
	enforced = quantity.Clamp(enforced)
	allowed := float64(enforced.Value())
	if enforced.Value() <= resource.MaxMilliValue {
		observed *= 1000
		allowed = float64(enforced.MilliValue())
	}
	if observed > allowed {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but provided ratio is %f", name, limitType, enforced.String(), shown)
	}
	return nil
}
