#!/usr/bin/env bash
# Runs quotabench's cluster quota scenarios against a fresh quotad, as docs/benchmarks.md
# ("Cluster quotas") reports them: a warm-up, then RUNS invocations of
# `--scenario clusterquota` (one namespace with a ResourceQuota, then 100 namespaces under one
# ClusterResourceQuota, and their ratio), each with quotad's CPU per create in each phase
# (user+system from /proc/<pid>/stat: 1 tick = 10 ms over 10,000 creates = 1 µs per create)
# and its RSS; then, with TIGHT=1, three `--scenario clustertight` runs.
#
#   hack/clusterquota-bench.sh                 build both, 3 runs
#   QUOTAD=/path QUOTABENCH=/path RUNS=5 ...   reuse built binaries
#   PROFILE=cpu.pprof ...                      one run of 20,000 creates; an 8 s CPU profile of
#                                              quotad taken during its 100-namespace phase
#   TRACE=dir ...                              one run of 40,000 creates; a 2 s execution trace
#                                              of quotad in each phase, dir/one.trace and
#                                              dir/cluster.trace (go tool trace)
#   NICE=-10 ...                               niceness of quotad and the load generator
#   CREATES=40000 ...                          creates a phase (default 10,000)
#   FIRST=cluster ...                          the 100-namespace phase first (quotabench
#                                              --cluster-first): the later phase holds the
#                                              earlier one's pods
#   ALTERNATE=4 ...                            each phase in 4 parts run in turn with the
#                                              other's (quotabench --alternate), so that
#                                              neither is the one run first; quotad's CPU
#                                              per create is then over both phases
set -euo pipefail

source "$(dirname "$0")/benchlib.sh"
run=(nice -n "${NICE:-0}")
bench_start "${run[@]}" -- --profiling
url=$(grep -o 'https://[0-9.:]*' "$work/server.log" | tail -1)

"${run[@]}" "$bench" --scenario quota --clients 32 --creates 10000 >/dev/null 2>&1
sleep 3
creates=${CREATES:-10000}
[[ -n "${PROFILE:-}" ]] && creates=20000 RUNS=1
[[ -n "${TRACE:-}" ]] && creates=40000 RUNS=1 && mkdir -p "$TRACE"
trace() { curl -sk -H "Authorization: Bearer $(cat "$work/qd/admin.token")" "$url/debug/pprof/trace?seconds=2" -o "$TRACE/$1.trace"; }
for r in $(seq 1 "${RUNS:-3}"); do
	echo "== run $r $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
	c0=$(cpu)
	first='one namespace, one ResourceQuota' flags=()
	if [[ ${FIRST:-} == cluster ]]; then
		first='one ClusterResourceQuota' flags=(--cluster-first)
	fi
	[[ -n "${ALTERNATE:-}" ]] && flags+=(--alternate "$ALTERNATE")
	"${run[@]}" "$bench" --scenario clusterquota --clients 32 --creates "$creates" --namespaces 100 "${flags[@]}" >"$work/out" 2>&1 &
	b=$!
	if [[ -n "${TRACE:-}" ]]; then
		sleep 1
		if [[ ${FIRST:-} == cluster ]]; then trace cluster; else trace one; fi
	fi
	until grep -q "$first" "$work/out" || ! kill -0 "$b" 2>/dev/null; do sleep 0.1; done
	c1=$(cpu)
	if [[ -n "${TRACE:-}" ]]; then
		sleep 1
		if [[ ${FIRST:-} == cluster ]]; then trace one; else trace cluster; fi
	fi
	if [[ -n "${PROFILE:-}" ]]; then
		curl -sk -H "Authorization: Bearer $(cat "$work/qd/admin.token")" "$url/debug/pprof/profile?seconds=8" -o "$PROFILE"
	fi
	wait "$b"
	c2=$(cpu)
	tr '\r' '\n' <"$work/out" | grep -E "creates/s=|ratio|cluster-quota-used|errors=|load-generator" | grep -v done || true
	if [[ -n "${ALTERNATE:-}" ]]; then
		echo "quotad µs of CPU per create, both phases: $(((c2 - c0) * 5000 / creates)); RSS $(awk '/VmRSS/ {print $2, $3}' "/proc/$pid/status")"
	elif [[ ${FIRST:-} == cluster ]]; then
		echo "quotad µs of CPU per create: 100 namespaces (with the setup) $(((c1 - c0) * 10000 / creates)), one namespace $(((c2 - c1) * 10000 / creates)); RSS $(awk '/VmRSS/ {print $2, $3}' "/proc/$pid/status")"
	else
		echo "quotad µs of CPU per create: one namespace (with the setup) $(((c1 - c0) * 10000 / creates)), 100 namespaces $(((c2 - c1) * 10000 / creates)); RSS $(awk '/VmRSS/ {print $2, $3}' "/proc/$pid/status")"
	fi
done
if [[ -n "${TIGHT:-}" ]]; then
	for r in 1 2 3; do
		echo "== tight $r $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
		"${run[@]}" "$bench" --scenario clustertight --clients 32 --creates 1500 --hard 1000 --namespaces 10 2>&1 |
			tr '\r' '\n' | grep -E 'creates/s=|admitted|cluster-quota-used' | grep -v done
	done
fi
echo "etcd data: $(du -sh "$work/qd/etcd/member/snap" | cut -f1)"
