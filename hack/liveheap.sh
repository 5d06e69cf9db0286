#!/usr/bin/env bash
# Measures the memory of a fresh quotad holding N pods, as docs/benchmarks.md reports it
# ("Session 40"): N creates of quotabench's quota scenario (32 clients), 15 s idle, a heap
# profile taken after a collection (/debug/pprof/heap?gc=1, kept as $work/heap.pprof while
# the script runs, copied to PROFILE if set), then the Go runtime's heap counters from
# /metrics (live heap: go_memstats_heap_alloc_bytes; spans in use: ..._heap_inuse_bytes) and
# the RSS with its anonymous and file parts.
#
#   hack/liveheap.sh                        build both; 100,000 pods
#   QUOTAD=/path QUOTABENCH=/path ...       reuse built binaries
#   N=30000 BOUND=1 ...                     fewer pods, bound to nodes and labelled
#   PROFILE=/tmp/heap.pprof ...             keep the heap profile
set -euo pipefail

source "$(dirname "$0")/benchlib.sh"
n=${N:-100000}
bound=()
[[ ${BOUND:-} == 1 ]] && bound=(--bound)
bench_start -- --profiling
"$bench" --scenario quota --clients 32 --creates "$n" --prefix fill "${bound[@]}" 2>>"$work/bench.err" | grep '^creates/s' | sed 's/^/fill: /'
sleep 15
kubectl get --raw '/debug/pprof/heap?gc=1' >"$work/heap.pprof"
[[ -n ${PROFILE:-} ]] && cp "$work/heap.pprof" "$PROFILE"
kubectl get --raw /metrics |
	awk '/^go_memstats_(heap_alloc|heap_inuse|heap_idle|heap_released|stack_inuse)_bytes / {printf "%s %.1f MB\n", $1, $2 / 1048576}'
awk '/^VmRSS|^RssAnon|^RssFile/ {printf "%s %d MB  ", $1, $2 / 1024} END {print ""}' "/proc/$pid/status"
