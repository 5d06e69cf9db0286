// Package ha is quotad's fault test: real quotad processes on a real three-member etcd
// cluster (etcd's own server main, built from the etcd module this project depends on, in
// ./etcdmain), a randomized workload of concurrent client-go writers and watchers, and
// faults injected while it runs — SIGKILL and restart of a quotad replica, of the etcd
// leader, of two etcd members at once (quorum loss), and compaction under running watches.
//
// history.go is the checker, kept apart from any one topology so that every fault test
// drives it the same way: a History records what clients were told (every write with its
// outcome, every watch event with its resume points); an EtcdLog records what etcd
// committed (a snapshot and then every change of the watched keys, read through the etcd
// client directly). Check compares the two afterwards:
//
//   - I1 at every revision: replaying the log, every quota's status.used equals the usage
//     the project's own computation (quota.CalculateUsage with the evaluator registry)
//     gives for the objects stored at that revision, and status.hard equals spec.hard;
//   - I2 at every revision: no commit raised a quota's used above its hard;
//   - no acknowledged write is missing: an acknowledged create or update is in the log at
//     the revision it returned, an acknowledged delete removed its key, a definitely refused
//     create never reached etcd, and every delete in the log was asked for;
//   - every watch saw resourceVersions that never go back and, between its resume points
//     (across replicas), exactly the log's events of its resource — a gap is allowed only
//     across an explicit 410 Gone and relist, which starts a new segment. (The objects one
//     transaction commits share a revision, so resourceVersions may repeat; a client that
//     stops inside such a revision and resumes after it would skip the rest of it.)
//   - every list a watcher made holds exactly what etcd stored at the list's revision;
//   - every quota refusal reports a state (used, limited) the quota had, or passed through
//     inside one group commit; refusals decided on a state an acknowledged write had
//     already replaced are counted;
//   - no write was acknowledged while etcd had lost quorum, and before any fault (while
//     etcd kept its leader) no write failed with a 5xx.
//
// Environment: QUOTAD_HA_DURATION lengthens the run (the fault schedule repeats),
// QUOTAD_HA_SEED replays a seed, QUOTAD_HA_BINARY tests another quotad binary,
// QUOTAD_HA_DUMP writes the recorded writes as JSON, QUOTAD_HA_LOGDIR keeps every
// process's stderr.
//
// Invariants of the test itself: no sleeps for correctness and no timing thresholds —
// fault phases end when a condition is observed (a write acknowledged, a member serving),
// bounded only by generous deadlines that fail the test; durations are logged, never
// compared.
package ha
