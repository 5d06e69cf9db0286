// Command kubectl-quota is a kubectl plugin for quota feedback: `kubectl quota top` (usage
// against hard per quota and resource, highest pressure first), `kubectl quota fit` (asks
// the server's quota.quotad.io/v1 QuotaReview whether objects and their replicas fit,
// exiting 1 when they do not) and `kubectl quota explain` (which quotas match an object and
// why, scope by scope, and what it is charged).
//
// kubectl runs it for `kubectl quota ...` once the binary is on PATH. It reads the
// kubeconfig and takes kubectl's connection flags (k8s.io/cli-runtime's ConfigFlags).
//
// Invariants:
//   - Reading commands (top, explain) use only upstream Kubernetes APIs (and the
//     quota.openshift.io applied cluster quotas when the server serves them), so they work
//     against any cluster; only fit needs quotad's QuotaReview.
//   - Scope matching and usage are internal/quota's and internal/quota/evaluator's, the
//     same code admission runs; this command only reads objects and explains the answers.
//   - main.go only wires the process's streams, arguments and exit code; every command
//     runs from a rest.Config and an io.Writer, so tests run it in process.
package main
