#!/bin/bash
# Runs one quotabench scenario against a fresh quotad and prints the rate, the latencies and
# quotad's CPU per attempted write (from /proc/<pid>/stat, utime + stime).
#
#   hack/quotabench.sh BIN LABEL SCENARIO [quotabench flags...]
#   e.g. hack/quotabench.sh /tmp/quotad after quota --clients 32 --creates 20000
#
# BIN is a built quotad, started on a fresh data dir (/tmp/bench-LABEL) with --secure-port 0
# and stopped afterwards; quotabench is /tmp/quotabench (go build -o /tmp/quotabench
# ./cmd/quotabench). Run binaries alternately to compare them on a shared machine.
set -euo pipefail
bin=$1; label=$2; sc=$3; shift 3
d=/tmp/bench-$label; rm -rf "$d"; mkdir -p "$d"
"$bin" --data-dir "$d/data" --secure-port 0 > "$d/log" 2>&1 &
pid=$!
for _ in $(seq 1 120); do grep -q "quotad is ready" "$d/log" && break; sleep 0.5; done
export KUBECONFIG=$d/data/admin.kubeconfig
c0=$(awk '{print $14+$15}' /proc/$pid/stat)
out=$(/tmp/quotabench --kubeconfig "$KUBECONFIG" --scenario "$sc" "$@" 2>&1 | tail -3)
c1=$(awk '{print $14+$15}' /proc/$pid/stat)
att=$(echo "$out" | grep -o "attempts=[0-9]*" | cut -d= -f2)
tick=$(getconf CLK_TCK)
echo "$label $sc: $(echo "$out" | grep creates/s) cpu=$(( (c1-c0)*1000000/tick/att ))us/write $(echo "$out" | grep -o 'quota-used-pods=[0-9]*' || true)"
kill "$pid"; wait "$pid" 2>/dev/null || true
