#!/bin/bash
# Runs one quotabench scenario and prints the rate, the latencies and the control plane's CPU
# per attempted write (from /proc/<pid>/stat, utime + stime).
#
#   hack/quotabench.sh BIN LABEL SCENARIO [quotabench flags...]
#   e.g. hack/quotabench.sh /tmp/quotad after quota --clients 32 --creates 20000
#
# BIN is a built quotad, started on a fresh data dir (/tmp/bench-LABEL) with --secure-port 0
# and the flags in QUOTAD_ARGS, and stopped afterwards. BIN "pid:N" runs against a quotad
# already running as process N, with the KUBECONFIG of the environment (hack/vs-upstream.sh
# keeps one running beside upstream's). BIN "upstream" runs against the control plane that
# `SERVE=upstream WORK=/tmp/up hack/clusterloader2.sh` serves (kube-apiserver, etcd and
# kube-controller-manager; UPSTREAM_KUBECONFIG overrides its kubeconfig), their three
# processes' CPU summed. quotabench is /tmp/quotabench (go build -o /tmp/quotabench
# ./cmd/quotabench). Run the sides alternately to compare them on a shared machine.
set -euo pipefail
bin=$1; label=$2; sc=$3; shift 3
if [[ $bin == upstream ]]; then
	export KUBECONFIG=${UPSTREAM_KUBECONFIG:-/tmp/up/serve-upstream/admin.kubeconfig}
	pids=$(pgrep -f "quotad-components/.*/(etcd|kube-apiserver|kube-controller-manager) " | tr '\n' ' ')
elif [[ $bin == pid:* ]]; then
	pids=${bin#pid:}
else
	d=/tmp/bench-$label; rm -rf "$d"; mkdir -p "$d"
	"$bin" --data-dir "$d/data" --secure-port 0 ${QUOTAD_ARGS:-} > "$d/log" 2>&1 &
	pids=$!
	trap 'kill "$pids" 2>/dev/null; wait "$pids" 2>/dev/null || true' EXIT
	for _ in $(seq 1 120); do grep -q "quotad is ready" "$d/log" && break; sleep 0.5; done
	export KUBECONFIG=$d/data/admin.kubeconfig
fi
cpu() { local t=0; for p in $pids; do t=$((t + $(awk '{print $14+$15}' /proc/$p/stat))); done; echo $t; }
c0=$(cpu)
out=$(/tmp/quotabench --kubeconfig "$KUBECONFIG" --scenario "$sc" "$@" 2>&1)
c1=$(cpu)
att=$(echo "$out" | grep -o "attempts=[0-9]*" | tail -1 | cut -d= -f2)
tick=$(getconf CLK_TCK)
echo "$label $sc: $(echo "$out" | grep -E "^(creates/s|first-event)" | tr '\n' ' ')cpu=$(( (c1-c0)*1000000/tick/${att:-1} ))us/write $(echo "$out" | grep -oE '(cluster-)?quota-used-pods=[0-9]*|ratio cluster/one=[0-9.]*' | tr '\n' ' ')"
