// Command quotabench is quotad's load generator. It creates pods through the Kubernetes REST
// API over HTTPS+JSON with N concurrent clients against any API server (--server and --token,
// or --kubeconfig), and prints creates/s, p50/p99/max latency, admitted/refused/errors, and
// the quota's used count afterwards. Scenarios: one namespace with a quota, 100 namespaces
// with a quota each, no quota, a tight quota (exactly hard admitted), and mixed creates and
// deletes; cluster quotas over many namespaces (clusterquota, clustertight); lease
// renewals (leases); watches of every bound pod from resourceVersion 0, as KWOK watches
// again each time its watch ends, and a node's list of its pods (rewatch); and abuse,
// where a probe tenant, in a process of its own (the binary run with --scenario probe),
// measures its latency alone on a settled server, then again while hostile clients run
// (slow bodies, watchers that never read, un-paged lists, anonymous scrapers, huge
// quantities). See docs/benchmarks.md.
package main
