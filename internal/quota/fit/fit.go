package fit

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/quotad/quotad/internal/quota"
	"github.com/quotad/quotad/internal/quota/quantity"
)

// Quota is one quota of a namespace as admission checks a request against it.
type Quota struct {
	// Quota is the ResourceQuota as admission judges it (status.hard, status.used), or the
	// clusterquota.View of a cluster quota selecting the namespace, carrying the cluster
	// quota's annotations (its enforcement mode and thresholds).
	Quota corev1.ResourceQuota
	// Cluster marks a ClusterResourceQuota's view.
	Cluster bool
}

// Input is one question: a write of an object, as defaulting and mutating admission left
// it, in the namespace whose quotas are Quotas.
type Input struct {
	// Quotas are the namespace's ResourceQuotas in name order, then the views of the
	// cluster quotas selecting it in name order: the order admission checks them in.
	Quotas   []Quota
	Registry quota.Registry
	// Limited is the ResourceQuota admission configuration's limitedResources.
	Limited []quota.LimitedResource
	// Resource is the object's group-resource; Name the request's name (refusals name it).
	Resource schema.GroupResource
	Name     string
	// Object is the object written; OldObject the stored one (nil: the write is a create).
	Object    runtime.Object
	OldObject runtime.Object
	// Pod is one of the pods the object makes: a workload's template pod as its
	// controller would create it (defaults and mutating admission applied), the object
	// itself for a Pod; nil for objects that make no pods.
	Pod *corev1.Pod
	// Claims are the PersistentVolumeClaims each replica adds besides its pod (a
	// StatefulSet's volumeClaimTemplates, TemplateClaims).
	Claims []*corev1.PersistentVolumeClaim
	// Replicas is how many pods the write adds (Added). For a Pod being created the
	// object itself is the first of them.
	Replicas int32
}

// Result is the answer to an Input.
type Result struct {
	Status QuotaReviewStatus
	// ReplicaWarnings are the warnings of Status.Warnings about replicas that do not fit:
	// what admission gives the client of a workload write (the object's own Warn-quota
	// warnings are given by the quota plugin itself).
	ReplicaWarnings []string
}

var (
	podsGR = schema.GroupResource{Resource: "pods"}
	pvcsGR = schema.GroupResource{Resource: "persistentvolumeclaims"}
)

// Review answers in: whether admission admits the object (quota.Prepare and Check against
// every quota, exactly admission's mode-aware decision, nothing charged), the warnings its
// write would get (its Warn-mode and threshold findings, then the replicas that do not
// fit) and, per matching quota, what the object and its replicas consume and how many
// replicas fit (Enforce quotas bound Status.ReplicasFit; Warn and Audit ones only their
// own ReplicasFit and Fits).
func Review(in Input) Result {
	st := QuotaReviewStatus{Operation: string(quota.Create), Allowed: true, Replicas: max(in.Replicas, 0)}
	if in.OldObject != nil {
		st.Operation = string(quota.Update)
	}
	// podIsObject: a Pod being created is the first of its own copies, so its usage is
	// counted once, as a replica's.
	podIsObject := in.Resource == podsGR && in.OldObject == nil && in.Pod != nil

	// 1. The object itself, decided as admission decides it (Warn and Audit quotas admit
	// over-limit writes with a finding), and the warnings its write would get: as the
	// registry delivers findings, each Warn-mode finding and each crossed threshold.
	all := make([]corev1.ResourceQuota, 0, len(in.Quotas))
	for i := range in.Quotas {
		all = append(all, in.Quotas[i].Quota)
	}
	op := quota.Create
	if in.OldObject != nil {
		op = quota.Update
	}
	req := quota.Request{Operation: op, Resource: in.Resource, Name: in.Name, Object: in.Object, OldObject: in.OldObject}
	var objectWarnings []string
	prepared, err := quota.Prepare(req, in.Registry, in.Limited)
	var changed []corev1.ResourceQuota
	if err == nil {
		changed, err = prepared.Check(all)
	}
	if err != nil {
		st.Allowed, st.Reason = false, err.Error()
	} else {
		for _, f := range prepared.Findings() {
			if f.Reason == quota.FindingThreshold || f.Mode == quota.Warn {
				objectWarnings = append(objectWarnings, f.Message)
			}
		}
	}

	// 2. What one object and one replica consume.
	ev := in.Registry.Get(in.Resource)
	var newUsage, oldUsage corev1.ResourceList
	if ev != nil && ev.Handles("") && !podIsObject {
		newUsage, _ = ev.Usage(in.Object)
		if in.OldObject != nil {
			oldUsage, _ = ev.Usage(in.OldObject)
		}
	}
	podEv := in.Registry.Get(podsGR)
	var podUsage corev1.ResourceList
	if in.Pod != nil && podEv != nil {
		podUsage, _ = podEv.Usage(in.Pod)
	}
	pvcEv := in.Registry.Get(pvcsGR)
	claimUsage := make([]corev1.ResourceList, len(in.Claims))
	for j, c := range in.Claims {
		if pvcEv != nil {
			claimUsage[j], _ = pvcEv.Usage(c)
		}
	}

	// 3. Each quota the object or its pods match.
	var replicaWarnings []string
	replicasFit := st.Replicas
	for i := range in.Quotas {
		q := &in.Quotas[i]
		rq := &q.Quota
		m := mode(q)
		matchNew, matchOld, podMatch := false, false, false
		if ev != nil && !podIsObject {
			matchNew, _ = quota.Matches(rq, ev, in.Object)
			if in.OldObject != nil {
				matchOld, _ = quota.Matches(rq, ev, in.OldObject)
			}
		}
		if in.Pod != nil && podEv != nil {
			podMatch, _ = quota.Matches(rq, podEv, in.Pod)
		}
		// What one replica adds to this quota: its pod and its claims, each when the quota
		// matches it.
		perReplica := corev1.ResourceList{}
		if podMatch {
			perReplica = podUsage
		}
		replicaMatch := podMatch
		for j, c := range in.Claims {
			if ok, _ := quota.Matches(rq, pvcEv, c); ok && pvcEv != nil && in.Pod != nil {
				perReplica = quota.Add(perReplica, claimUsage[j])
				replicaMatch = true
			}
		}
		if !matchNew && !matchOld && !replicaMatch {
			continue
		}
		qf := QuotaFit{Kind: quota.KindResourceQuota, Name: rq.Name, Enforcement: string(m), Fits: true}
		if q.Cluster {
			qf.Kind = quota.KindClusterResourceQuota
		}
		if w := quota.WarnAtOf(rq.Annotations); !w.Empty() {
			qf.WarnAt = w.String()
		}
		// The object's own change of this quota's usage, and the usage it leaves.
		delta := corev1.ResourceList{}
		after := corev1.ResourceList{}
		for _, name := range quota.ResourceNames(rq.Status.Hard) {
			d := zero()
			if v, ok := newUsage[name]; ok && matchNew {
				d = quantity.Add(d, v)
			}
			if v, ok := oldUsage[name]; ok && matchOld {
				d = quantity.Sub(d, v)
			}
			delta[name] = d
			used := usedOf(rq, name)
			after[name] = quantity.Add(used, d)
		}
		// How many replicas fit after the object: the fewest over the names a replica
		// consumes; none when the quota refuses every pod (a "must specify" constraint).
		var binding []corev1.ResourceName
		var constraint error
		if replicaMatch {
			n := st.Replicas
			if c, ok := podEv.(quota.Constrainer); ok && podMatch {
				constraint = c.Constraints(podEv.MatchingResources(quota.ResourceNames(rq.Status.Hard)), in.Pod)
			}
			if constraint != nil {
				n = 0
			} else {
				for _, name := range quota.ResourceNames(rq.Status.Hard) {
					per, ok := perReplica[name]
					if !ok || per.Sign() <= 0 {
						continue
					}
					room := quantity.Sub(rq.Status.Hard[name], after[name])
					k := int32(quantity.Quotient(room, per, int64(st.Replicas)))
					switch {
					case k < n:
						n, binding = k, []corev1.ResourceName{name}
					case k == n && k < st.Replicas:
						binding = append(binding, name)
					}
				}
			}
			qf.ReplicasFit = &n
			if n < st.Replicas {
				qf.Fits = false
				// A single Pod's own refusal or Warn-quota warning says it already.
				if m != quota.Audit && !(podIsObject && st.Replicas == 1) {
					replicaWarnings = append(replicaWarnings, replicaWarning(q, m, n, st.Replicas, binding, perReplica, after, constraint))
				}
			}
			if m == quota.Enforce && n < replicasFit {
				replicasFit = n
			}
		}
		// The resources the request consumes (or frees), in name order.
		for _, name := range quota.ResourceNames(rq.Status.Hard) {
			d := zero()
			if !podIsObject {
				d = delta[name]
			}
			per, perOK := perReplica[name]
			perOK = perOK && replicaMatch && !per.IsZero()
			if d.IsZero() && !perOK {
				continue
			}
			hard := rq.Status.Hard[name]
			used := usedOf(rq, name)
			requested := d.DeepCopy()
			rf := ResourceFit{Name: name, Used: used.DeepCopy(), Hard: hard.DeepCopy()}
			if perOK {
				p := per.DeepCopy()
				rf.PerReplica = &p
				requested = quantity.Add(requested, times(per, st.Replicas))
			}
			rf.Requested = requested
			rf.Remaining = zero()
			if room := quantity.Sub(hard, used); room.Sign() > 0 {
				rf.Remaining = room
			}
			rf.Fits = requested.Sign() <= 0 || quantity.Cmp(quantity.Add(used, requested), hard) <= 0
			if !rf.Fits {
				qf.Fits = false
			}
			qf.Resources = append(qf.Resources, rf)
		}
		if constraint != nil {
			qf.Fits = false
		}
		st.Quotas = append(st.Quotas, qf)
	}

	// 4. A replica refused for another reason (limitedResources without a covering quota)
	// fits nowhere: decide one replica as admission would, after the object.
	if !st.Allowed {
		replicasFit = 0
	}
	if in.Pod != nil && podEv != nil && !podIsObject && replicasFit > 0 {
		quotas := slices.Clone(all)
		for _, c := range changed {
			for j := range quotas {
				if quotas[j].UID == c.UID && quotas[j].Name == c.Name {
					quotas[j] = c
				}
			}
		}
		preq := quota.Request{Operation: quota.Create, Resource: podsGR, Object: in.Pod}
		if _, err := quota.CheckRequest(quotas, preq, in.Registry, in.Limited); err != nil {
			replicasFit = 0
			replicaWarnings = append(replicaWarnings, fmt.Sprintf("none of %d replicas fit: %v", st.Replicas, err))
		}
	}
	st.ReplicasFit = replicasFit
	st.Fits = st.Allowed && replicasFit == st.Replicas
	for _, qf := range st.Quotas {
		st.Fits = st.Fits && qf.Fits
	}
	st.Warnings = append(objectWarnings, replicaWarnings...)
	return Result{Status: st, ReplicaWarnings: replicaWarnings}
}

// mode returns a quota's enforcement mode.
func mode(q *Quota) quota.Enforcement { return quota.EnforcementOf(q.Quota.Annotations) }

// usedOf returns a quota's usage of name (zero when not recorded).
func usedOf(rq *corev1.ResourceQuota, name corev1.ResourceName) resource.Quantity {
	if v, ok := rq.Status.Used[name]; ok {
		return v.DeepCopy()
	}
	return zero()
}

func zero() resource.Quantity { return resource.Quantity{Format: resource.DecimalSI} }

// times returns q·n (n >= 0). Quantity.Mul multiplies the mantissa and never scales.
func times(q resource.Quantity, n int32) resource.Quantity {
	r := q.DeepCopy()
	r.Mul(int64(n))
	return r
}

// text renders q for a message: its canonical text, or a placeholder for a value whose
// text would be expensive to build (stored before quantities were bounded).
func text(q resource.Quantity) string {
	if s, ok := quantity.BadValue(q).(string); ok {
		return s
	}
	return "<too large to show>"
}

// quotaLabel names a quota in a warning: "quota <name>", "cluster quota <name>", with the
// mode when it does not enforce.
func quotaLabel(q *Quota, m quota.Enforcement) string {
	s := "quota " + q.Quota.Name
	if q.Cluster {
		s = "cluster quota " + q.Quota.Name
	}
	if m != quota.Enforce {
		s += " (enforcement: " + string(m) + ")"
	}
	return s
}

// replicaWarning is the Warning about replicas that do not fit one quota:
//
//	only 3 of 10 replicas fit quota compute: requests.cpu: 500m per replica, used 1500m, limited 3
//
// naming every resource that allows no more; or, when the quota refuses every pod,
// the refusal ("only 0 of 10 replicas fit quota compute: must specify limits.cpu for: app").
func replicaWarning(q *Quota, m quota.Enforcement, n, of int32, binding []corev1.ResourceName, per, after corev1.ResourceList, constraint error) string {
	head := fmt.Sprintf("only %d of %d replicas fit %s: ", n, of, quotaLabel(q, m))
	if constraint != nil {
		return head + constraint.Error()
	}
	parts := make([]string, 0, len(binding))
	for _, name := range binding {
		parts = append(parts, fmt.Sprintf("%s: %s per replica, used %s, limited %s", name, text(per[name]), text(after[name]), text(q.Quota.Status.Hard[name])))
	}
	return head + strings.Join(parts, "; ")
}
