// Package record writes core/v1 Events with client-go's event recorder (tools/record) and
// an event sink over the registry store. client-go's EventCorrelator, with upstream's
// defaults, does the rest: one Event per distinct (source, object, type, reason, message),
// repeats patch count and lastTimestamp, from the tenth distinct message of one object,
// type and reason within ten minutes one "(combined from similar events): …" event counts
// them all, and a per-object token bucket (burst 25, one more every five minutes) drops
// floods, so a busy object cannot fill etcd with events. The workload controllers record
// their FailedCreate/SuccessfulCreate events with it, and the server the Events of quotas
// in Warn mode and of crossed warn-at thresholds.
//
// Invariants: writes go through the registry (admitted and quota-accounted like any
// other); they are asynchronous (client-go's broadcaster queues them), and their failures
// are logged, never returned; events about cluster-scoped objects live in the "default"
// namespace, as upstream's; a recorder's goroutines end when the context given to its
// Start ends.
package record
