// Package workloads holds quotad's workload controllers: ReplicaSet, ReplicationController,
// Deployment, StatefulSet, DaemonSet, Job and CronJob. They follow upstream's controllers
// (pkg/controller/...) in behaviour, object names, conditions and event texts, and write only through the registry
// store, so every pod, ReplicaSet and Job they create is admitted and charged to quota like
// a user's, and a quota refusal surfaces exactly as upstream: a FailedCreate Warning event
// on the owner ("Error creating: <the 403 text>") and, for ReplicaSets, Deployments and
// ReplicationControllers, a ReplicaFailure condition.
//
// Invariants:
//   - Level-triggered: every sync reads its owner from storage at the latest revision.
//     The ReplicaSet, ReplicationController, DaemonSet, StatefulSet and Job controllers
//     read their pods, the Deployment controller its ReplicaSets and its ReplicaSets'
//     pods, the CronJob controller its Jobs and the DaemonSet controller the Nodes from a
//     watch-fed controller.Index (kube-controller-manager's informers and their
//     controller-UID indexes), so a sync costs what its owner has, not what its namespace
//     has; a sync first waits until the index holds every write its owner's earlier syncs
//     made (controller.Revisions: expectations as revisions), so a pod is never created
//     twice for one missing replica, and a restart loses nothing (a new index starts from
//     a list past every earlier write). No sync lists pods from storage.
//   - A Recreate rollout waits until its old ReplicaSets' pods are gone or finished; the
//     last one of a ReplicaSet to go (deleted, Failed or Succeeded) queues the Deployment,
//     as upstream's deletePod does for deletions.
//   - StatefulSets create each pod's claims before the pod, so storage quota refuses the
//     claim first ("create Claim ... failed error: ..." and "create Pod ... failed error:
//     failed to create PVC ..."); their pods are named <set>-<ordinal> and their
//     ControllerRevisions <set>-<hash>, both deterministic. Other pods are named by the
//     registry from their owner's prefix (generateName "<owner>-", "<job>-<index>-" for an
//     indexed Job), a fresh name for every attempt, as upstream: a pod refused by quota is
//     named in its refusal, and its next attempt has another name. DaemonSet pods are bound
//     to their node by a required node affinity on metadata.name.
//   - One writer: with --leader-elect (the default) only the leader runs these
//     controllers; a sync sees every pod its previous syncs created (from its index once
//     the index holds them). Status and spec writes carry the resourceVersion the sync
//     read, so a concurrent change makes the sync retry instead of overwriting.
//   - A controller refused by quota is retried with backoff and at once when any quota of
//     its namespace changes (raised, or usage credited by a delete).
//   - Pods are run by their nodes: a pod is ready when its Ready condition is True and
//     available when ready for minReadySeconds, exactly as upstream; nodes (kubelets, KWOK)
//     or clients drive this (and phases Succeeded/Failed for Jobs) through pods/status.
//   - A Job's policies (podFailurePolicy, backoffLimitPerIndex, successPolicy) are pure
//     functions of the Job and its pods (jobpolicy.go); its counts come from the pods that
//     exist and never go down (no pod tracking finalizer), and its indexes from
//     .status.completedIndexes and .status.failedIndexes joined with the pods'.
//   - Clocks are injected (Options.Clock); the CronJob controller's queue runs on it, so
//     tests step a fake clock instead of waiting for minutes.
package workloads
