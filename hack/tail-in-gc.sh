#!/usr/bin/env bash
# Tells how much of quotad's latency tail under a create load falls in the garbage
# collector's mark phases, as docs/benchmarks.md (session 41) reports it: a fresh quotad run
# with GODEBUG=gctrace=1, quotabench's quota scenario (32 clients, CREATES creates, default
# 40,000) with --latencies, then the p99 and, of the creates at or above it, how many started
# in the load's first second (the server warming up), how many within 10 ms of a mark phase
# (from 10 ms before it began to 10 ms after it ended), and the rest; and the mark phases'
# number and summed wall time against the load's.
#
#   hack/tail-in-gc.sh BIN          BIN a built quotad; quotabench is /tmp/quotabench
#                                   (go build -o /tmp/quotabench ./cmd/quotabench)
#   CREATES=20000 hack/tail-in-gc.sh BIN
#
# Extra environment (GOGC, GOMEMLIMIT, GOMAXPROCS) reaches quotad: GOMEMLIMIT replaces its
# memory policy, so GOGC then applies as given.
set -euo pipefail
bin=$1
creates=${CREATES:-40000}
d=$(mktemp -d)
start=$(date +%s%N)
GODEBUG=gctrace=1 "$bin" --data-dir "$d/data" --secure-port 0 >"$d/log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; rm -rf "$d"' EXIT
for _ in $(seq 1 120); do grep -q "quotad is ready" "$d/log" && break; sleep 0.5; done
KUBECONFIG=$d/data/admin.kubeconfig /tmp/quotabench --scenario quota --clients 32 \
	--creates "$creates" --latencies "$d/lat" 2>/dev/null | grep creates/s
# Mark phases in ms since quotad started: "gc N @S.SSSs P%: a+MARK+c ms clock, ...".
grep '^gc ' "$d/log" | awk '{at=substr($3, 2); sub(/s$/, "", at); split($5, c, "+"); printf "%.3f %.3f\n", at*1000, at*1000 + c[2]}' >"$d/gc"
# Creates in ms since quotad started, and their latencies in ms.
awk -v s="$start" '{printf "%.3f %.3f\n", ($1 - s)/1e6, $2/1e6}' "$d/lat" | sort -n >"$d/creates"
p99=$(sort -n -k2 "$d/creates" | awk '{l[NR] = $2} END {print l[int((NR - 1)*0.99) + 1]}')
awk -v p99="$p99" '
	FNR == NR { from[n] = $1; to[n] = $2; n++; next }
	FNR == 1 { first = $1 }
	{ last = $1 }
	$2 >= p99 {
		slow++
		if ($1 < first + 1000) { warm++; next }
		for (i = 0; i < n; i++) if ($1 >= from[i] - 10 && $1 <= to[i] + 10) { ingc++; next }
		other++
	}
	END {
		for (i = 0; i < n; i++) if (to[i] >= first && from[i] <= last) { marks++; marked += to[i] - from[i] }
		printf "p99 %.1f ms: %d creates at or above it; started in the first second %d, near a mark phase %d, other %d\n", p99, slow, warm, ingc, other
		printf "mark phases during the load: %d, %.0f ms of %.0f ms (%.1f%%)\n", marks, marked, last - first, marked*100/(last - first)
	}' "$d/gc" "$d/creates"
