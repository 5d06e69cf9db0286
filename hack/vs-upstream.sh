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
# The two control planes are treated alike: quotad, as upstream's, is one server started
# once (a fresh data dir) and kept running for the whole comparison, so each side runs beside
# the other one idle and holding the pods of its earlier runs, and neither runs cold.
# FRESH=1 starts a fresh quotad for each of its runs instead and stops it after (the method
# of sessions 27 to 31: quotad cold, upstream warm). Each side keeps working after its runs
# (kube-controller-manager's quota controller recounts the namespaces it just filled): before
# every run this waits until the other side's processes used less than 5% of a core over
# 2 s, so that neither runs on the other's leftovers. quotabench is /tmp/quotabench
# (go build -o /tmp/quotabench ./cmd/quotabench).
set -euo pipefail
bin=$1
rounds=${ROUNDS:-3}
cd "$(dirname "$0")/.."
out=$(mktemp)
qd=$bin
if [[ -z ${FRESH:-} ]]; then
	data=$(mktemp -d)
	"$bin" --data-dir "$data/qd" --secure-port 0 >"$data/log" 2>&1 &
	qpid=$!
	until grep -q 'quotad is ready' "$data/log"; do
		kill -0 "$qpid" || { cat "$data/log"; exit 1; }
		sleep 0.2
	done
	qd=pid:$qpid
	trap 'kill "$qpid"; wait "$qpid" 2>/dev/null; rm -rf "$out" "$data"' EXIT
else
	trap 'rm -f "$out"' EXIT
fi
upstream_pids() { pgrep -f "quotad-components/.*/(etcd|kube-apiserver|kube-controller-manager) " | tr '\n' ' '; }

# idle waits until the processes named used less than 5% of a core over 2 s.
idle() {
	local t0 t1 p
	for _ in $(seq 1 60); do
		t0=0 t1=0
		for p in "$@"; do t0=$((t0 + $(awk '{print $14+$15}' "/proc/$p/stat"))); done
		sleep 2
		for p in "$@"; do t1=$((t1 + $(awk '{print $14+$15}' "/proc/$p/stat"))); done
		((t1 - t0 < $(getconf CLK_TCK) / 10)) && return
	done
	echo "(still busy after 120 s: $*)"
}

pair() {
	local name=$1 up=$2 n=$3
	shift 3
	[[ $qd == pid:* ]] && idle "${qd#pid:}"
	hack/quotabench.sh upstream up "$@" --creates "$up" 2>&1 | tail -1 | sed "s/^/$name /" | tee -a "$out"
	# shellcheck disable=SC2046 # one word per process
	idle $(upstream_pids)
	(
		[[ $qd == pid:* ]] && export KUBECONFIG=$data/qd/admin.kubeconfig
		hack/quotabench.sh "$qd" qd "$@" --creates "$n"
	) 2>&1 | tail -1 | sed "s/^/$name /" | tee -a "$out"
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
