// Package controller holds what quotad's in-process controllers share. Each controller
// lives in its own sub-package (namespace, crd, quotaverify, workloads,
// garbagecollector, etcdsnapshot…) and, unless it is a timer (etcdsnapshot), runs on a Loop:
//
//   - Loop.Watch: a watch of the registry delivering every object to a Handler; when it
//     ends (the watcher fell behind, a storage error) it resumes from the last revision
//     it saw, so missed changes, deletions included, are delivered; only a compacted
//     revision makes it start over from the current objects. With the registry's store the
//     Handler runs in the goroutine that takes the watch's batches from the hub
//     (registry.Store.WatchEach): no goroutine or channel of the store's between them;
//   - Loop.Process: workers over a rate-limited work queue (NewQueue) of string keys;
//   - Throttle: the rate limiter of repeated identical failure log lines (first failure
//     logged, repeats counted and summarised at most once per interval), usable by any
//     component;
//   - Paced: a Client whose writes wait for a token bucket's tokens (--kube-api-qps,
//     --kube-api-burst), as kube-controller-manager's client paces each controller;
//   - As, On and Meta: checked access to objects of any kind, typed or unstructured;
//   - Index (fed by Loop.WatchIndex): an informer with a controller-UID index, Synced, and
//     the revision it has reached, the one watch-fed cache every controller reads;
//     OnChange hands a handler the version held before each event; Revisions records the revision of each write a sync
//     makes for an owner, and the owner's next sync waits until its Index holds it
//     (upstream's expectations, as revisions). A start-over from the current objects
//     removes, and delivers the deletion of, what was not listed again;
//   - PodViews: the read-only views of pods (PodView) that the controllers watching every
//     pod keep, so a large cluster's pods are held once, small; the parts a workload's pods
//     have alike (labels, owner references, tolerations, ported containers) are held once
//     for all of them (podShape, found by content);
//     PodsByNode indexes pods' keys by node from an Index's changes;
//   - SharedPods: one watch and one Index of pods' views for all the controllers that
//     watch every pod (kube-controller-manager's shared pod informer). Each subscribes
//     (Sub) with a PodFilter in its constructor and reads, through its PodSub (a Cache,
//     as an Index is), only the pods it keeps; the watch starts once every subscriber has
//     its handlers (PodSub.Start), and a subscriber's panics are its own loop's. A
//     subscriber reading its pods in more detail than a view (PodFilter.Detailed: Jobs,
//     DaemonSets) finds that detail in the same views, so no controller keeps a second
//     cache of pods that could lag the first.
//
// Invariants: controllers are level-triggered (every object is seen at start, and every change
// after it), idempotent, and write only through the registry store, so every write is
// admitted and quota-accounted like a user's. No object can take the server down: a panic
// in a handler or a sync is recovered, logged once at Error with its stack, reported to
// the PanicObserver (quotad_controller_panics_total), and a panicking sync's key is
// retried with backoff. Failures already reported to users (Expected, such as a quota
// refusal recorded as an Event) log at Debug.
package controller
