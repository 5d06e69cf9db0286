#!/bin/bash
# Measures quotad against upstream's control plane on the throughput scenarios of
# docs/benchmarks.md, the two sides alternately, ROUNDS times (default 3), and prints every run
# and each scenario's ratios:
#
#   - quota: 32 clients, one namespace with a ResourceQuota (two pairs a round);
#   - quota --clients 1;
#   - namespaces: 32 clients over 100 namespaces, a quota each.
#
#   SERVE=upstream WORK=/tmp/up hack/clusterloader2.sh &    # upstream, until interrupted
#   hack/vs-upstream.sh /path/to/quotad                      # then this
#
# Each run is hack/quotabench.sh's (quotad on a fresh data dir, stopped after it). Upstream
# keeps working after its own runs (kube-controller-manager's quota controller recounts the
# namespaces it just filled): before every quotad run this waits until upstream's three
# processes used less than 5% of a core over 2 s, so that neither side runs on the other's
# leftovers. quotabench is /tmp/quotabench (go build -o /tmp/quotabench ./cmd/quotabench).
set -euo pipefail
bin=$1
rounds=${ROUNDS:-3}
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT

upstream_idle() {
	local pids t0 t1 p
	pids=$(pgrep -f "quotad-components/.*/(etcd|kube-apiserver|kube-controller-manager) " | tr '\n' ' ')
	for _ in $(seq 1 60); do
		t0=0 t1=0
		for p in $pids; do t0=$((t0 + $(awk '{print $14+$15}' "/proc/$p/stat"))); done
		sleep 2
		for p in $pids; do t1=$((t1 + $(awk '{print $14+$15}' "/proc/$p/stat"))); done
		((t1 - t0 < $(getconf CLK_TCK) / 10)) && return
	done
	echo "(upstream still busy after 120 s)"
}

pair() {
	local name=$1 up=$2 qd=$3
	shift 3
	hack/quotabench.sh upstream up "$@" --creates "$up" 2>&1 | tail -1 | sed "s/^/$name /" | tee -a "$out"
	upstream_idle
	hack/quotabench.sh "$bin" qd "$@" --creates "$qd" 2>&1 | tail -1 | sed "s/^/$name /" | tee -a "$out"
}

for r in $(seq 1 "$rounds"); do
	echo "# round $r, $(date -u +%H:%M:%S) UTC"
	pair 32-clients 10000 20000 quota --clients 32
	pair 32-clients 10000 20000 quota --clients 32
	pair 1-client 1000 5000 quota --clients 1
	pair 100-namespaces 5000 20000 namespaces --clients 32 --namespaces 100
done

echo "# ratios (each quotad run over the upstream run before it)"
awk '{
	rate = $0; sub(/.*creates\/s=/, "", rate); sub(/ .*/, "", rate)
	if ($2 == "up") { up[$1] = rate } else if (up[$1] > 0) { r[$1] = r[$1] sprintf(" %.1fx", rate / up[$1]) }
} END { for (k in r) print k ":" r[k] }' "$out" | sort
