#!/usr/bin/env bash
# Measures what quotad allocates per create, which unlike its CPU per create repeats from run
# to run on a shared machine: a fresh quotad, 10,000 creates of quotabench's quota scenario
# (32 clients; SCENARIO names another) to warm up, then MEASURE more (default 20,000) with
# the Go runtime's counters (go_memstats_alloc_bytes_total, go_memstats_mallocs_total) read
# before and after, and the CPU per create beside them. With PROFILE=file, a 5 s CPU profile
# is taken inside the measured run (quotad runs with --profiling).
#
#   hack/allocs.sh                          build both
#   QUOTAD=/path QUOTABENCH=/path ...       reuse built binaries
#   SCENARIO=namespaces ...                 another quotabench scenario (namespaces: 100
#                                           namespaces with a quota each)
set -euo pipefail

source "$(dirname "$0")/benchlib.sh"
measure=${MEASURE:-20000}
scenario=(--scenario "${SCENARIO:-quota}" --clients 32)
[[ ${SCENARIO:-} == namespaces ]] && scenario+=(--namespaces 100)
bench_start -- --profiling
url=$(grep -o 'https://[0-9.:]*' "$work/server.log" | tail -1)
auth="Authorization: Bearer $(cat "$work/qd/admin.token")"
counters() {
	curl -sk -H "$auth" "$url/metrics" |
		awk '/^go_memstats_alloc_bytes_total /{b=$2} /^go_memstats_mallocs_total /{o=$2} END{printf "%d %d\n", b, o}'
}

"$bench" "${scenario[@]}" --creates 10000 >/dev/null 2>&1
read -r b0 o0 < <(counters)
c0=$(cpu)
"$bench" "${scenario[@]}" --creates "$measure" >"$work/out" 2>&1 &
b=$!
if [[ -n "${PROFILE:-}" ]]; then
	sleep 1
	curl -sk -H "$auth" "$url/debug/pprof/profile?seconds=5" -o "$PROFILE"
fi
wait "$b"
c1=$(cpu)
read -r b1 o1 < <(counters)
tr '\r' '\n' <"$work/out" | grep -E '^creates/s' | tail -1
echo "per create: $(((b1 - b0) / measure)) bytes, $(((o1 - o0) / measure)) objects allocated; $(((c1 - c0) * 1000000 / $(getconf CLK_TCK) / measure)) µs of CPU"
