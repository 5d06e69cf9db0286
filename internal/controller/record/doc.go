// Package record writes core/v1 Events as upstream's event recorder (client-go
// tools/record) does, through the registry store: one Event per distinct (source, object,
// type, reason, message), repeats bump count and lastTimestamp, from the tenth distinct
// message of one object, type and reason within ten minutes one "(combined from similar
// events): …" event counts them all (as upstream's aggregator), and a per-object token
// bucket (burst 25, one more every five minutes) drops floods, so a busy object cannot fill
// etcd with events. The workload controllers record their FailedCreate/SuccessfulCreate
// events with it, and the server the Events of quotas in Warn mode and of crossed warn-at
// thresholds.
//
// Invariants: writes go through the registry (admitted and quota-accounted like any
// other); failures are logged, never returned; events about cluster-scoped objects live in
// the "default" namespace, as upstream's.
package record
