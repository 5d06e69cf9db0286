// Package quotaenforce is quotad's ResourceQuota admission plugin: it reads the plugin's
// configuration (limitedResources) from an AdmissionConfiguration file and evaluates
// requests against the quotas of their namespace with quota.CheckRequest.
//
// Invariants: the plugin never writes and keeps no per-request state. Prepare (when a
// write is submitted) and the Check of its result (when the write's namespace batch plans
// its transaction; Evaluate does both) return the quotas whose status.used changes; the
// registry commits them in the same storage transaction as the object, guarded by the
// quotas' mod revisions (or drops them for dry-run requests). Refusals are
// *apierrors.StatusError values from upstream's constructors, except upstream's plain
// "insufficient quota to match these scopes" error.
package quotaenforce
