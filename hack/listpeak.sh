#!/usr/bin/env bash
# Measures quotad's memory holding many pods, as docs/benchmarks.md reports it ("Memory with
# 120,000 pods"): a fresh quotad with the default soft memory limit, FILL pods created by
# quotabench (32 clients), MEASURE more with quotad's CPU per create, IDLE s idle, then an
# un-paged `kubectl get pods -A --chunk-size=0 -o name` of all of them while RSS is sampled
# every 200 ms, and RSS again 30 s later. RSS, anonymous and file parts come from
# /proc/<pid>/status (the file part includes quotad's own mapped binary).
#
#   hack/listpeak.sh                           build both; 100,000 + 20,000 pods
#   QUOTAD=/path QUOTABENCH=/path ...          reuse built binaries
#   FILL=20000 MEASURE=5000 ...                fewer pods
#   INDEX=1 ...                                the pods' index running (as kubelets' lists of
#                                              their pods keep it) before the idle measure
#   BOUND=1 ...                                the pods bound to nodes and labelled (quotabench
#                                              --bound, which creates the nodes), as a
#                                              cluster's running pods are: the controllers
#                                              watching every pod keep them
#   IDLE=30 ...                                seconds idle before the list (default 90)
set -euo pipefail

source "$(dirname "$0")/benchlib.sh"
fill=${FILL:-100000}
measure=${MEASURE:-20000}
bench_start
bound=()
[[ ${BOUND:-} == 1 ]] && bound=(--bound)

rss() { # RSS, anonymous and file parts in MB
	awk '/^VmRSS|^RssAnon|^RssFile/ {v[$1]=int($2/1024)} END {printf "%d MB (anonymous %d, file %d)", v["VmRSS:"], v["RssAnon:"], v["RssFile:"]}' "/proc/$pid/status"
}

"$bench" --scenario quota --clients 32 --creates "$fill" --prefix fill "${bound[@]}" 2>>"$work/bench.err" | grep '^creates/s' | sed 's/^/fill: /'
c0=$(cpu)
"$bench" --scenario quota --clients 32 --creates "$measure" --prefix meas "${bound[@]}" 2>>"$work/bench.err" | grep '^creates/s' | sed 's/^/measured: /'
c1=$(cpu)
tick=$(getconf CLK_TCK)
echo "quotad CPU per create: $(((c1 - c0) * 1000000 / tick / measure)) us"
if [[ ${INDEX:-} == 1 ]]; then
	# The first list of a node's pods starts the index; the next ones wait until it serves.
	until kubectl get --raw /metrics | grep -q '^quotad_field_index_lists_total{outcome="indexed",resource="pods"}'; do
		kubectl get pods -A --field-selector spec.nodeName=listpeak-node -o name >/dev/null
		sleep 1
	done
	echo "the pods' index serves lists"
fi
# The server settles after a fill (the trim of a quiet spell, the controllers' first passes
# over what they hold): RSS every 10 s for IDLE seconds (default 90), then the last as idle.
series=""
for _ in $(seq 1 $((${IDLE:-90} / 10))); do
	sleep 10
	series="$series $(awk '/^VmRSS/ {printf "%d", $2 / 1024}' "/proc/$pid/status")"
done
echo "idle RSS every 10 s (MB):$series"
echo "idle: $(rss)"

# The sampler keeps the largest RSS it saw, with its parts.
(
	peak=0
	while kill -0 "$pid" 2>/dev/null; do
		r=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
		if ((r > peak)); then
			peak=$r
			rss >"$work/peak"
		fi
		sleep 0.2
	done
) &
sampler=$!
kill_on_exit+=("$sampler")
start=$(date +%s.%N)
n=$(kubectl get pods -A --chunk-size=0 -o name | wc -l)
end=$(date +%s.%N)
kill "$sampler" 2>/dev/null || true
echo "list of $n pods: $(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.1f", b - a}') s; peak during it: $(cat "$work/peak")"
sleep 30
echo "30 s after the list: $(rss)"
