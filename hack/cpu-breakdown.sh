#!/bin/bash
# Splits a CPU profile of quotad under a create load into the stages of a create, as
# docs/benchmarks.md reports them: each stage's share of the profile's samples (its
# functions and what they call: pprof -focus) and, given the CPU per create measured beside
# the profile, its µs per create. Stages overlap where one calls another's functions (little),
# and what falls in none (logging, metrics, timers) is not shown.
#
#   PROFILE=/tmp/cpu.pprof hack/allocs.sh                 a profile and the CPU per create
#   hack/cpu-breakdown.sh /tmp/cpu.pprof 255               then this (255 µs per create)
set -euo pipefail
prof=$1
per_create=$2
total=$(go tool pprof -top "$prof" 2>/dev/null | grep -o 'Total samples = [0-9.]*m\?s' | awk '{v=$4; if (v ~ /ms$/) {sub("ms","",v); v/=1000} else sub("s","",v); print v}')
while IFS='|' read -r name focus; do
	secs=$(go tool pprof -top -focus "$focus" "$prof" 2>/dev/null | grep -m1 'Showing nodes' |
		awk '{v=$5; sub(",","",v); if (v ~ /ms$/) {sub("ms","",v); v/=1000} else sub("s","",v); print v}')
	awk -v n="$name" -v s="${secs:-0}" -v t="$total" -v c="$per_create" 'BEGIN { printf "%-34s %5.1f%%  %6.1f µs/create\n", n, s*100/t, s*c/t }'
done <<'STAGES'
HTTP: read the request|net/http.\(\*conn\).readRequest|bufio.\(\*Reader\).Peek
HTTP: write the response|net/http.\(\*response\).finishRequest
dispatch, authentication, audit|apiserver.\(\*Server\).ServeHTTP
decode the body|apiserver.\(\*Server\).decodeBody
admission|timedAdmission
defaults, validation, warnings|registry.\(\*Store\).validate|Store\).warnings|Store\).defaultObject|prepareForCreate
encode for storage|registry.encodeStored
commit engine (plan, transaction)|commit.\(\*Engine\).Commit
etcd|etcdserver|raft|wal\.|backend\.|mvcc
watch fan-out, controllers, caches|watchhub|registry.\(\*Store\).Watch|controller.\(\*Loop\)|revSet|listWatchIn|garbagecollector
garbage collection|gcBgMarkWorker|gcAssist|bgsweep|scavenge
goroutine scheduling|runtime.schedule|runtime.findRunnable|runtime.mcall|stopm|startm
STAGES
