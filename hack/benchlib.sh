# Sourced by the benchmark scripts of hack/: builds quotad and quotabench (unless QUOTAD and
# QUOTABENCH name built ones), and starts a fresh quotad whose process the caller measures.
#
# After sourcing: $root (the repository), $work (a temporary directory removed on exit, with
# every process in $pid and $kill_on_exit stopped), $quotad and $bench (the binaries).
# bench_start [runner...] -- [quotad flags...] starts quotad on $work/qd (--secure-port 0),
# waits until it is ready, sets $pid and exports KUBECONFIG. cpu prints its CPU ticks
# (user + system, /proc/<pid>/stat).

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
kill_on_exit=()
trap 'kill "${kill_on_exit[@]}" "${pid:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
if [[ -z "${QUOTAD:-}" || -z "${QUOTABENCH:-}" ]]; then
	(cd "$root" && go build -o "$work/quotad" ./cmd/quotad && go build -o "$work/quotabench" ./cmd/quotabench)
fi
quotad=${QUOTAD:-$work/quotad}
bench=${QUOTABENCH:-$work/quotabench}

bench_start() {
	local runner=()
	while [[ $# -gt 0 && $1 != -- ]]; do runner+=("$1"); shift; done
	[[ $# -gt 0 ]] && shift
	"${runner[@]}" "$quotad" --data-dir "$work/qd" --secure-port 0 "$@" >"$work/server.log" 2>&1 &
	pid=$!
	until grep -q 'quotad is ready' "$work/server.log" 2>/dev/null; do
		kill -0 "$pid" || { cat "$work/server.log"; exit 1; }
		sleep 0.2
	done
	export KUBECONFIG=$work/qd/admin.kubeconfig
}

cpu() { awk '{print $14+$15}' "/proc/$pid/stat"; }
