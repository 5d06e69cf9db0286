package server

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/controller/record"
	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/clusterquota"
	"github.com/quotad/quotad/internal/registry"
)

// Reasons of the Events recorded on quotas (type Warning) for writes they admitted over
// their limit (Warn mode) and for crossed warn-at thresholds.
const (
	EventQuotaExceeded          = "QuotaExceeded"
	EventQuotaConstraintFailed  = "QuotaConstraintFailed"
	EventQuotaThresholdExceeded = "QuotaThresholdExceeded"
)

// quotaEventComponent is the source of those Events.
const quotaEventComponent = "quota-admission"

// quotaFindings handles the quota findings of settled writes (registry.Config.QuotaFindings, commit.Observers)
// beyond the Warning headers and audit annotations the store gives: a metric for every
// finding of a real (non-dry-run) write, and, for a real write a Warn finding or a crossed
// threshold admitted, an Event on the quota.
type quotaFindings struct {
	metrics *metrics
	// rec writes the Events asynchronously (client-go's spam filter bounds them per
	// quota), outside the request that caused them; nil records none.
	rec *record.Recorder
}

var eventsGRs = []schema.GroupResource{{Resource: "events"}, {Group: "events.k8s.io", Resource: "events"}}

// observe is registry.Config.QuotaFindings.
func (q *quotaFindings) observe(ctx context.Context, r registry.QuotaReport) {
	if r.DryRun {
		// A dry run gets its warnings (the store gave them); it charges nothing, so it
		// counts nothing and records nothing.
		return
	}
	for _, f := range r.Findings {
		switch f.Reason {
		case quota.FindingExceeded:
			q.metrics.quotaExceeded.WithLabelValues(f.Kind, f.Namespace, f.Quota, string(f.Mode)).Inc()
		case quota.FindingConstraint:
			q.metrics.quotaConstraint.WithLabelValues(f.Kind, f.Namespace, f.Quota, string(f.Mode)).Inc()
		case quota.FindingThreshold:
			for _, name := range f.Resources {
				q.metrics.quotaThresholds.WithLabelValues(f.Kind, f.Namespace, f.Quota, string(name)).Inc()
			}
		}
	}
	if !r.Admitted || q.rec == nil {
		return
	}
	// An Event write is itself a write: its own findings record no Event, so a namespace
	// whose count/events quota is in Warn mode cannot feed itself.
	for _, gr := range eventsGRs {
		if r.Resource == gr {
			return
		}
	}
	for _, f := range r.Findings {
		reason := ""
		switch {
		case f.Reason == quota.FindingThreshold:
			reason = EventQuotaThresholdExceeded
		case f.Mode != quota.Warn:
			continue // Audit: the audit log and metrics only
		case f.Reason == quota.FindingExceeded:
			reason = EventQuotaExceeded
		case f.Reason == quota.FindingConstraint:
			reason = EventQuotaConstraintFailed
		default:
			continue
		}
		q.rec.EventRef(ctx, quotaRef(f), corev1.EventTypeWarning, reason, quotaEventMessage(r, f))
	}
}

// quotaRef is the involvedObject of a quota's Event.
func quotaRef(f quota.Finding) corev1.ObjectReference {
	if f.Kind == quota.KindClusterResourceQuota {
		return corev1.ObjectReference{Kind: quota.KindClusterResourceQuota, APIVersion: clusterquota.SchemeGroupVersion.String(), Name: f.Quota, UID: f.UID}
	}
	return corev1.ObjectReference{Kind: quota.KindResourceQuota, APIVersion: "v1", Namespace: f.Namespace, Name: f.Quota, UID: f.UID}
}

// quotaEventMessage is the Event's message: the write, then the finding's text. A cluster
// quota's Event (in namespace default) names the write's namespace too.
func quotaEventMessage(r registry.QuotaReport, f quota.Finding) string {
	if f.Kind == quota.KindClusterResourceQuota {
		return fmt.Sprintf("%s %q in namespace %q: %s", r.Resource.String(), r.Name, r.Namespace, f.Message)
	}
	return fmt.Sprintf("%s %q: %s", r.Resource.String(), r.Name, f.Message)
}
