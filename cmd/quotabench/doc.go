// Command quotabench is quotad's load generator. It creates pods through the Kubernetes REST
// API over HTTPS+JSON with N concurrent clients against any API server (--server and --token,
// or --kubeconfig), and prints creates/s, p50/p99/max latency, admitted/refused/errors, and
// the quota's used count afterwards. Scenarios: one namespace with a quota, 100 namespaces
// with a quota each, no quota, a tight quota (exactly hard admitted), and mixed creates and
// deletes. See docs/benchmarks.md.
package main
