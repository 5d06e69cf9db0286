package validation

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The warnings of the kinds with a pod template, as their upstream strategies'
// WarningsOnCreate (old nil) and WarningsOnUpdate (old set: the template's warnings only
// when the spec changed, as upstream tells by the generation), with upstream's texts and
// quirks.

var templatePath = field.NewPath("spec", "template")

// podNamesWarning is upstream's warning of a workload name that is not a DNS label.
func podNamesWarning(name string) []string {
	if msgs := validation.IsDNS1123Label(name); len(msgs) != 0 {
		return []string{fmt.Sprintf("metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: %v", msgs)}
	}
	return nil
}

// DeploymentWarnings are upstream's deployment strategy's.
func DeploymentWarnings(d, old *appsv1.Deployment) []string {
	if old == nil {
		return append(podNamesWarning(d.Name), PodTemplateWarnings(templatePath, &d.Spec.Template)...)
	}
	if d.Generation != old.Generation {
		return PodTemplateWarnings(templatePath, &d.Spec.Template)
	}
	return nil
}

// ReplicaSetWarnings are upstream's ReplicaSet strategy's.
func ReplicaSetWarnings(rs, old *appsv1.ReplicaSet) []string {
	if old == nil {
		return append(podNamesWarning(rs.Name), PodTemplateWarnings(templatePath, &rs.Spec.Template)...)
	}
	if rs.Generation != old.Generation {
		return PodTemplateWarnings(templatePath, &rs.Spec.Template)
	}
	return nil
}

// ReplicationControllerWarnings are upstream's ReplicationController strategy's; on update
// upstream warns of the old template (it passes the templates in that order).
func ReplicationControllerWarnings(rc, old *corev1.ReplicationController) []string {
	if old == nil {
		return append(podNamesWarning(rc.Name), PodTemplateWarnings(templatePath, rc.Spec.Template)...)
	}
	if rc.Generation != old.Generation {
		return PodTemplateWarnings(templatePath, old.Spec.Template)
	}
	return nil
}

// DaemonSetWarnings are upstream's DaemonSet strategy's (an update warns when the
// template changed, which bumps its template generation).
func DaemonSetWarnings(ds, old *appsv1.DaemonSet) []string {
	if old == nil || !apiequality.Semantic.DeepEqual(ds.Spec.Template, old.Spec.Template) {
		return PodTemplateWarnings(templatePath, &ds.Spec.Template)
	}
	return nil
}

// StatefulSetWarnings are upstream's StatefulSet strategy's, with its paths for the claim
// templates (no ".spec" on create, ".Spec" on update).
func StatefulSetWarnings(ss, old *appsv1.StatefulSet) []string {
	var w []string
	if old == nil || ss.Generation != old.Generation {
		w = PodTemplateWarnings(templatePath, &ss.Spec.Template)
	}
	for i := range ss.Spec.VolumeClaimTemplates {
		p := field.NewPath("spec", "volumeClaimTemplates").Index(i)
		if old != nil {
			p = p.Child("Spec")
		}
		w = append(w, PVCSpecWarnings(p, &ss.Spec.VolumeClaimTemplates[i].Spec)...)
	}
	if ss.Spec.RevisionHistoryLimit != nil && *ss.Spec.RevisionHistoryLimit < 0 {
		w = append(w, "spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended")
	}
	return w
}

// PodTemplateObjectWarnings are upstream's PodTemplate strategy's.
func PodTemplateObjectWarnings(t, old *corev1.PodTemplate) []string {
	if old == nil || t.Generation != old.Generation {
		return PodTemplateWarnings(field.NewPath("template"), &t.Template)
	}
	return nil
}

// JobWarnings are upstream's Job strategy's.
func JobWarnings(j, old *batchv1.Job) []string {
	if old == nil {
		return append(podNamesWarning(j.Name), jobSpecWarnings(field.NewPath("spec"), &j.Spec)...)
	}
	if j.Generation != old.Generation {
		return jobSpecWarnings(field.NewPath("spec"), &j.Spec)
	}
	return nil
}

// CronJobWarnings are upstream's CronJob strategy's (the TZ warning on update only, at
// upstream's path).
func CronJobWarnings(cj, old *batchv1.CronJob) []string {
	p := field.NewPath("spec", "jobTemplate", "spec")
	if old == nil {
		return append(podNamesWarning(cj.Name), jobSpecWarnings(p, &cj.Spec.JobTemplate.Spec)...)
	}
	var w []string
	if cj.Generation != old.Generation {
		w = jobSpecWarnings(p, &cj.Spec.JobTemplate.Spec)
	}
	if strings.Contains(cj.Spec.Schedule, "TZ") {
		w = append(w, fmt.Sprintf("cannot use TZ or CRON_TZ in %s, use timeZone instead, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details", field.NewPath("spec", "spec", "schedule")))
	}
	return w
}

// jobSpecWarnings is upstream's WarningsForJobSpec.
func jobSpecWarnings(p *field.Path, spec *batchv1.JobSpec) []string {
	var w []string
	if spec.CompletionMode != nil && *spec.CompletionMode == batchv1.IndexedCompletion {
		var completions, parallelism int32
		if spec.Completions != nil {
			completions = *spec.Completions
		}
		if spec.Parallelism != nil {
			parallelism = *spec.Parallelism
		}
		if completions > 100_000 && parallelism > 10_000 {
			w = append(w, fmt.Sprintf("%s: %s", p, "In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail"))
		}
	}
	return append(w, PodTemplateWarnings(p.Child("template"), &spec.Template)...)
}
