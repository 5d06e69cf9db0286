package graceful

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Deleter is a kind deleted gracefully (upstream's RESTGracefulDeleteStrategy):
// GracePeriod returns the grace period in seconds of a first delete of obj, given the
// period the request asked for (nil: none); 0 removes it at once, a positive period
// marks it with deletionTimestamp = now + period and deletionGracePeriodSeconds = period
// and leaves its removal to whoever confirms it (a pod's node, with a zero-grace delete).
type Deleter interface {
	GracePeriod(obj runtime.Object, requested *int64) int64
}

// Stamp is what a graceful delete sets: deletionTimestamp and
// deletionGracePeriodSeconds.
type Stamp struct {
	At    metav1.Time
	Grace int64
}

// Decide applies upstream's BeforeDelete to a delete of old asking for requested
// seconds (nil: none; negative: 1). For an object already deleting with no grace period
// left, it returns nil (the delete proceeds as for any kind). Otherwise, an object not yet
// deleting gets the stamp of the strategy's period (grace 0: removed at once); one deleting with a grace period gets a shorter
// period when asked for one (its deletionTimestamp moved back by the difference, never
// before now: then, unless the new period is 0, the period is 1 and the object still
// waits), and pending is true when it is not shortened.
func Decide(gd Deleter, old runtime.Object, requested *int64, now metav1.Time) (stamp *Stamp, pending bool) {
	if requested != nil && *requested < 0 {
		one := int64(1)
		requested = &one
	}
	m, err := meta.Accessor(old)
	if err != nil {
		return nil, false
	}
	ts := m.GetDeletionTimestamp()
	if ts == nil {
		period := gd.GracePeriod(old, requested)
		return &Stamp{At: metav1.NewTime(now.Add(time.Duration(period) * time.Second)), Grace: period}, false
	}
	g := m.GetDeletionGracePeriodSeconds()
	if g == nil || *g == 0 {
		return nil, false
	}
	cur := max(*g, 1)
	if requested == nil || *requested >= cur {
		return nil, true
	}
	period := *requested
	at := ts.Add(-time.Duration(cur) * time.Second).Add(time.Duration(period) * time.Second)
	if at.Before(now.Time) {
		at = now.Time
		if period != 0 {
			period = 1
		}
	}
	return &Stamp{At: metav1.NewTime(at), Grace: period}, false
}

// Mark marks m deleting: with stamp when set (a graceful delete), otherwise,
// when not yet deleting, at now with no grace period. Either way a first mark bumps a
// tracked generation, as upstream (BeforeDelete for graceful kinds, markAsDeleting for
// the others): whoever acts on the object sees it change.
func Mark(m metav1.Object, stamp *Stamp, now metav1.Time) {
	if m.GetDeletionTimestamp() == nil && m.GetGeneration() > 0 {
		m.SetGeneration(m.GetGeneration() + 1)
	}
	switch {
	case stamp != nil:
		at, grace := stamp.At, stamp.Grace
		m.SetDeletionTimestamp(&at)
		m.SetDeletionGracePeriodSeconds(&grace)
	case m.GetDeletionTimestamp() == nil:
		m.SetDeletionTimestamp(&now)
		zero := int64(0)
		m.SetDeletionGracePeriodSeconds(&zero)
	}
}

// NoGraceLeft reports a deleting object's grace period unset or 0 (upstream's
// shouldDeleteDuringUpdate).
func NoGraceLeft(m metav1.Object) bool {
	g := m.GetDeletionGracePeriodSeconds()
	return g == nil || *g == 0
}
