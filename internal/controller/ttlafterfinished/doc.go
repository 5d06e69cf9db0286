// Package ttlafterfinished is kube-controller-manager's ttlafterfinished controller: a
// Job with spec.ttlSecondsAfterFinished is deleted that many seconds after it finished
// (the lastTransitionTime of its Complete or Failed condition), with foreground
// propagation as upstream (its pods go before it), guarded by its UID.
//
// Invariants:
//   - The decision is made on the Job as read from storage just before deleting it (the
//     fresh read upstream makes after its cache's), so a Job whose TTL was raised or
//     removed meanwhile, or that is already being deleted, is kept; the delete is guarded
//     by the UID read.
//   - Time is the injected clock's: a Job not yet expired is looked at again when its
//     TTL ends (the work queue's delay runs on the same clock); nothing sleeps.
package ttlafterfinished
