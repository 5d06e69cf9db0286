// Package etcdsnapshot takes scheduled etcd snapshots, as k3s's --etcd-snapshot-schedule-cron:
// at each time of a cron schedule (parsed by the same parser as CronJob schedules,
// validation.ParseCron) it saves a snapshot named etcd-snapshot-<node>-<unix seconds> in
// its directory, then deletes this node's oldest scheduled snapshots beyond the retention.
//
// Invariants: only files named etcd-snapshot-<node>-<digits> are ever deleted (never
// another node's snapshots, partial files or anything else in the directory), and a
// snapshot is deleted only after a newer one was saved. The server runs the scheduler on
// the leader replica only (with leader election). Waiting uses the injected clock.
package etcdsnapshot
