package quota

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// IsStandardScope reports whether scope is one of the scope names the API accepts:
// Terminating, NotTerminating, BestEffort, NotBestEffort, PriorityClass,
// CrossNamespacePodAffinity and VolumeAttributesClass.
func IsStandardScope(scope corev1.ResourceQuotaScope) bool {
	switch scope {
	case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating,
		corev1.ResourceQuotaScopeBestEffort, corev1.ResourceQuotaScopeNotBestEffort,
		corev1.ResourceQuotaScopePriorityClass, corev1.ResourceQuotaScopeCrossNamespacePodAffinity,
		corev1.ResourceQuotaScopeVolumeAttributesClass:
		return true
	}
	return false
}

// IsScopeValidForResource reports whether a quota with scope may limit the standard quota
// resource name (validation's "unsupported scope applied to resource").
func IsScopeValidForResource(scope corev1.ResourceQuotaScope, name corev1.ResourceName) bool {
	podCount := name == corev1.ResourcePods
	podCompute := false
	switch name {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory:
		podCompute = true
	}
	switch scope {
	case corev1.ResourceQuotaScopeTerminating, corev1.ResourceQuotaScopeNotTerminating,
		corev1.ResourceQuotaScopeNotBestEffort, corev1.ResourceQuotaScopePriorityClass,
		corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return podCount || podCompute
	case corev1.ResourceQuotaScopeBestEffort:
		return podCount
	case corev1.ResourceQuotaScopeVolumeAttributesClass:
		return name == corev1.ResourcePersistentVolumeClaims || name == corev1.ResourceRequestsStorage
	default:
		return true
	}
}

// ScopeSelectors returns the selectors a quota's objects must all match: one
// {scopeName: s, operator: Exists} per spec.scopes entry, then spec.scopeSelector's
// match expressions. An empty result matches everything.
func ScopeSelectors(rq *corev1.ResourceQuota) []corev1.ScopedResourceSelectorRequirement {
	selectors := []corev1.ScopedResourceSelectorRequirement{}
	for _, scope := range rq.Spec.Scopes {
		selectors = append(selectors, corev1.ScopedResourceSelectorRequirement{
			ScopeName: scope,
			Operator:  corev1.ScopeSelectorOpExists,
		})
	}
	if rq.Spec.ScopeSelector != nil {
		selectors = append(selectors, rq.Spec.ScopeSelector.MatchExpressions...)
	}
	return selectors
}

// ScopeSelectorAsLabelSelector converts a scope selector requirement to a label selector
// over the one-key label set {scopeName: value}, as upstream matches PriorityClass and
// VolumeAttributesClass. Invalid operators or values return an error.
func ScopeSelectorAsLabelSelector(req corev1.ScopedResourceSelectorRequirement) (labels.Selector, error) {
	var op selection.Operator
	switch req.Operator {
	case corev1.ScopeSelectorOpIn:
		op = selection.In
	case corev1.ScopeSelectorOpNotIn:
		op = selection.NotIn
	case corev1.ScopeSelectorOpExists:
		op = selection.Exists
	case corev1.ScopeSelectorOpDoesNotExist:
		op = selection.DoesNotExist
	default:
		return nil, fmt.Errorf("%q is not a valid scope selector operator", req.Operator)
	}
	r, err := labels.NewRequirement(string(req.ScopeName), op, req.Values)
	if err != nil {
		return nil, err
	}
	return labels.NewSelector().Add(*r), nil
}

// UncoveredScopes returns the limited scopes for which no matched quota selector has the
// same scope name (operator and values are not compared, as upstream).
func UncoveredScopes(limited, matched []corev1.ScopedResourceSelectorRequirement) []corev1.ScopedResourceSelectorRequirement {
	var uncovered []corev1.ScopedResourceSelectorRequirement
	for _, l := range limited {
		covered := false
		for _, m := range matched {
			if m.ScopeName == l.ScopeName {
				covered = true
				break
			}
		}
		if !covered {
			uncovered = append(uncovered, l)
		}
	}
	return uncovered
}
