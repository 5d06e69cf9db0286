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
#
# The line ends with etcd's WAL syncs over the run (etcd_disk_wal_fsync_duration_seconds:
# how many, their mean, and the share under 1 ms), read from quotad's /metrics or from
# upstream's etcd: every write waits for one, so the disk sets a floor under the latencies,
# and it differs from machine to machine more than the CPU does.
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
# etcd's metrics: quotad serves its embedded member's; upstream's etcd serves them on its
# client URL to a client certificate (kube-apiserver's, from the same PKI directory).
metrics() {
	if [[ $bin == upstream ]]; then
		local e args url pki
		e=$(pgrep -f "quotad-components/.*/etcd " | head -n1)
		args=$(tr '\0' ' ' <"/proc/$e/cmdline")
		url=$(grep -oE -- '--listen-client-urls [^ ]+' <<<"$args" | cut -d' ' -f2)
		pki=$(dirname "$(grep -oE -- '--trusted-ca-file [^ ]+' <<<"$args" | cut -d' ' -f2)")
		curl -s --cacert "$pki/ca.crt" --cert "$pki/apiserver-etcd-client.crt" --key "$pki/apiserver-etcd-client.key" "$url/metrics"
	else
		kubectl get --raw /metrics
	fi
}
# fsyncs prints the WAL syncs' count, seconds and count under 1 ms.
fsyncs() {
	metrics 2>/dev/null | awk '/^etcd_disk_wal_fsync_duration_seconds_count /{n=$2}
		/^etcd_disk_wal_fsync_duration_seconds_sum /{s=$2}
		/^etcd_disk_wal_fsync_duration_seconds_bucket\{le="0.001"\} /{f=$2}
		END {printf "%d %.6f %d\n", n, s, f}'
}
read -r n0 s0 f0 < <(fsyncs)
c0=$(cpu)
out=$(/tmp/quotabench --kubeconfig "$KUBECONFIG" --scenario "$sc" "$@" 2>&1)
c1=$(cpu)
read -r n1 s1 f1 < <(fsyncs)
sync=$(awk -v n=$((n1 - n0)) -v s="$s1" -v s0="$s0" -v f=$((f1 - f0)) \
	'BEGIN { if (n > 0) printf "wal-fsyncs=%d mean=%.2fms under-1ms=%d%%", n, (s - s0) * 1000 / n, f * 100 / n }')
att=$(echo "$out" | grep -o "attempts=[0-9]*" | tail -1 | cut -d= -f2)
tick=$(getconf CLK_TCK)
echo "$label $sc: $(echo "$out" | grep -E "^(creates/s|first-event)" | tr '\n' ' ')cpu=$(( (c1-c0)*1000000/tick/${att:-1} ))us/write $(echo "$out" | grep -oE '(cluster-)?quota-used-pods=[0-9]*|ratio cluster/one=[0-9.]*' | tr '\n' ' ')$sync"
