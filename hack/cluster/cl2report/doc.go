// Command cl2report prints the table hack/clusterloader2.sh ends with: for each run of
// clusterloader2's load test (one directory per control plane and repetition), what
// clusterloader2 itself measured (its junit result, PodStartupLatency, SchedulingThroughput)
// and the API call latencies the control plane served during the test.
//
// clusterloader2 measures API call latency (APIResponsivenessPrometheusSimple) with an
// in-cluster Prometheus, which a KWOK cluster cannot run; cl2report computes the same
// numbers from two scrapes of the apiserver's /metrics, one just before clusterloader2 starts
// and one just after it ends: per resource, subresource, verb and scope, the increase of
// apiserver_request_duration_seconds over the test and its 50th, 90th and 99th percentiles,
// interpolated within buckets as Prometheus' histogram_quantile does, and checked against the
// thresholds of the API call latency SLO (1 s for a single object, 5 s for a namespace's list,
// 30 s for a cluster-wide list) as that measurement checks them.
//
//	cl2report NAME=DIR [NAME=DIR...]
//
// Each DIR holds report/ (clusterloader2's --report-dir), metrics-before.txt and
// metrics-after.txt (the scrapes), and result.txt (key=value lines the script writes: exit,
// seconds, and each process's cpu seconds and peak RSS).
package main
