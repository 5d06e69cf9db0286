#!/usr/bin/env bash
# Runs upstream's scalability test, clusterloader2's load test (testing/load/config.yaml), on
# quotad and on upstream's control plane, one after the other on this machine, and prints
# what each measured side by side. docs/benchmarks.md ("clusterloader2") records a run.
#
# Each side is a fresh cluster of the same components but the control plane:
#   quotad     a quotad built from this tree (its embedded etcd, its in-process controllers)
#   upstream   kube-apiserver (RBAC and Node authorization, the default admission plugins,
#              service-account keys, TLS everywhere) on etcd, and kube-controller-manager
#              (--use-service-account-credentials, as kubeadm runs it); etcd is the server
#              quotad embeds (go.mod's go.etcd.io/etcd/server/v3, built from test/ha/etcdmain),
#              kube-apiserver and kube-controller-manager are of the version quotad emulates
# and on both: kube-scheduler of that version, KWOK simulating NODES nodes (its default
# stages but pod-complete: pods become Running and Ready and stay so, as the test's pause
# containers do), and clusterloader2 with
# --provider=ks (every provider feature off), no Prometheus and no exec service (a KWOK pod
# runs nothing). kube-scheduler,
# KWOK and clusterloader2 use the admin kubeconfig on both sides.
#
# clusterloader2 is not in this repo: its source (perf-tests' clusterloader2 directory, a Go
# module of its own) is taken from CL2_SRC, by default ../shared/third_party/clusterloader2
# relative to the repo root; hack/cluster/build.sh builds it with the upstream components.
#
#   hack/clusterloader2.sh                     100 nodes, 30 pods per node, quotad then upstream
#   REPS=2 hack/clusterloader2.sh              and again: quotad, upstream, quotad, upstream
#   SIDES=quotad hack/clusterloader2.sh        one side only
#   NODES=100 PODS_PER_NODE=10 ...             a smaller load (NODES below 100 makes the
#                                              load test skip its scheduler-throughput and
#                                              pod-startup-latency phases)
#   CL2_SRC=dir CL2_CONFIG=file ...            another clusterloader2 tree or test config
#   CL2_OVERRIDES=file ...                     more overrides, after the script's own
#   QUOTAD=path ...                            a quotad built before, instead of building one
#   QUOTAD_ARGS=... APISERVER_ARGS=...         more flags for quotad, kube-apiserver and
#   KCM_ARGS=...                               kube-controller-manager (e.g. KCM_ARGS=
#                                              "--kube-api-qps=100 --kube-api-burst=100": its
#                                              client's default is 20 requests/s, burst 30)
#   SCHEDULER_ARGS=...                         more flags for kube-scheduler, on both sides
#                                              (e.g. "--kube-api-qps=100": its default is 50
#                                              requests/s, burst 100). UPSTREAM_SCALE=1 sets
#                                              both as upstream's scale jobs run them:
#                                              kube-scheduler at 100/s, kube-controller-manager
#                                              at 100/s, burst 100, and quotad's controllers
#                                              as kube-controller-manager's (its flags of the
#                                              same names and defaults: 20/s, burst 30)
#   KWOK_DEBUG=1 ...                           KWOK serves /debug/pprof/ at the address in
#                                              $WORK/<side>-<n>/kwok-debug.txt
#   WORK=dir hack/clusterloader2.sh            where binaries, data dirs, logs and reports go
#   SERVE=upstream hack/clusterloader2.sh      only that side's control plane, until interrupted
#                                              (quotabench against it: docs/benchmarks.md)
#
# Per side and repetition, $WORK/<side>-<n>/ holds the components' logs, clusterloader2's log
# (cl2.log) and reports (report/), the apiserver's /metrics just before and after the test,
# and result.txt. The table comes from hack/cluster/cl2report (see its doc).
#
# The first run builds kube-apiserver, kube-controller-manager, etcd and clusterloader2 (many
# minutes on 2 cores; GOFLAGS=-p=1 under nice); later runs reuse them.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=${WORK:-$(mktemp -d /tmp/quotad-cl2.XXXXXX)}
mkdir -p "$work"
work=$(cd "$work" && pwd)
nodes=${NODES:-100}
pods_per_node=${PODS_PER_NODE:-30}
reps=${REPS:-1}
sides=${SIDES:-quotad upstream}
export CL2_SRC=${CL2_SRC:-$root/../shared/third_party/clusterloader2}
[[ -f $CL2_SRC/go.mod ]] || { echo "no clusterloader2 source at $CL2_SRC: set CL2_SRC to perf-tests' clusterloader2 directory" >&2; exit 2; }
CL2_SRC=$(cd "$CL2_SRC" && pwd)
cl2_config=${CL2_CONFIG:-$CL2_SRC/testing/load/config.yaml}
# The provider whose features are all off (no SSH to a master, no kubelet or pprof scraping, no
# probes, no Prometheus): what a KWOK cluster on this machine is. With "local", clusterloader2
# tries SSH to the master and reads every node's kubelet through nodes/proxy every minute,
# logging an error for each.
provider=${PROVIDER:-ks}
if [[ -n ${UPSTREAM_SCALE:-} ]]; then
	SCHEDULER_ARGS="--kube-api-qps=100 ${SCHEDULER_ARGS:-}"
	KCM_ARGS="--kube-api-qps=100 --kube-api-burst=100 ${KCM_ARGS:-}"
	QUOTAD_ARGS="--kube-api-qps=100 --kube-api-burst=100 ${QUOTAD_ARGS:-}"
fi

# 1. The binaries.
want=(clusterloader2 cl2report)
[[ " $sides " == *" upstream "* ]] && want+=(kube-apiserver kube-controller-manager etcd)
bin=$("$root/hack/cluster/build.sh" "${want[@]}" | tail -n1)
if [[ -n ${QUOTAD:-} ]]; then
	cp "$QUOTAD" "$work/quotad"
else
	(cd "$root" && GOFLAGS=-p=1 nice -n 10 go build -o "$work/quotad" ./cmd/quotad)
fi

# The overrides: the scale; no persistent volumes (no provisioner binds the StatefulSets'
# claims in a KWOK cluster); and off what a KWOK cluster without Prometheus cannot measure
# (probes and in-cluster network latency need pods that run; the system-pod and restart
# checks read kubelets' and containers' state; kube-proxy does not run).
cat >"$work/overrides.yaml" <<EOF
PODS_PER_NODE: $pods_per_node
NODES_PER_NAMESPACE: $((nodes < 100 ? nodes : 100))
CL2_ENABLE_PVS: false
CL2_ENABLE_IN_CLUSTER_NETWORK_LATENCY: false
CL2_ENABLE_SLO_MEASUREMENT: false
PROMETHEUS_SCRAPE_KUBE_PROXY: false
ENABLE_SYSTEM_POD_METRICS: false
CL2_ENABLE_CLUSTER_OOMS_TRACKER: false
ENABLE_RESTART_COUNT_CHECK: false
EOF
overrides=(--testoverrides="$work/overrides.yaml")
[[ -n ${CL2_OVERRIDES:-} ]] && overrides+=(--testoverrides="$CL2_OVERRIDES")

# KWOK's default stages but pod-complete: the load test's Jobs run pause containers, which
# never exit, and clusterloader2 waits for each Job's parallelism of pods to be running.
awk '/^---$/ { flush(); buf = $0 "\n"; next } { buf = buf $0 "\n" } /^  name: pod-complete$/ { skip = 1 }
	function flush() { if (!skip) printf "%s", buf; buf = ""; skip = 0 }
	END { flush() }' "$bin/kwok-stages.yaml" >"$work/kwok-stages.yaml"
# KWOK_DEBUG=1: KWOK serves its debugging handlers, /debug/pprof/ among them (on by default once
# it has a server address; the address is in $WORK/<side>-<n>/kwok-debug.txt).
kwok_args=()

pids=()
declare -A proc=() # component -> pid, for the side running
# Stops the side's processes in the reverse order of their start (the clients, then the
# apiserver, etcd last: a kube-apiserver whose etcd is gone hangs in its shutdown), each
# SIGKILLed if it has not exited 30 s after SIGTERM.
cleanup() {
	local i p
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		p=${pids[i]}
		kill "$p" 2>/dev/null || continue
		for _ in $(seq 1 300); do
			[[ $(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) =~ ^(Z|)$ ]] && break
			sleep 0.1
		done
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	pids=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wait_ready() { # kubeconfig
	for _ in $(seq 1 600); do
		kubectl --kubeconfig="$1" get --raw /readyz >/dev/null 2>&1 && return 0
		for c in "${!proc[@]}"; do
			kill -0 "${proc[$c]}" 2>/dev/null || { echo "$c exited; see $d/$c.log" >&2; tail -n 20 "$d/$c.log" >&2; return 1; }
		done
		sleep 0.2
	done
	echo "the control plane did not become ready" >&2
	return 1
}
start() { # name command args...: runs it in the background, logging to $d/name.log
	local name=$1
	shift
	"$@" >"$d/$name.log" 2>&1 &
	pids+=($!)
	proc[$name]=$!
}

# CPU seconds (user + system) of a process so far, and its peak RSS in MiB.
tck=$(getconf CLK_TCK)
cpu_of() { awk -v t="$tck" '{printf "%.1f", ($14 + $15) / t}' "/proc/$1/stat"; }
rss_of() { awk '$1=="VmHWM:"{printf "%.0f", $2 / 1024}' "/proc/$1/status"; }

pki() { # dir: a CA, serving and client certificates, the service-account key pair
	local p=$1
	mkdir -p "$p"
	(
		cd "$p"
		openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=kubernetes-ca \
			-addext keyUsage=critical,keyCertSign,cRLSign,digitalSignature 2>/dev/null
		cert() { # name subject extensions
			openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -subj "$2" 2>/dev/null |
				openssl x509 -req -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -out "$1.crt" \
					-extfile <(printf '%b' "$3") 2>/dev/null
		}
		local server='keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n'
		local client='keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n'
		cert apiserver /CN=kube-apiserver "${server}subjectAltName=IP:127.0.0.1,DNS:localhost,IP:10.96.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\n"
		cert etcd-server /CN=etcd "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n"
		cert apiserver-etcd-client /CN=kube-apiserver-etcd-client "$client"
		cert admin "/O=system:masters/CN=kubernetes-admin" "$client"
		cert controller-manager /CN=system:kube-controller-manager "$client"
		openssl genrsa -out sa.key 2048 2>/dev/null
		openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
	)
}
kubeconfig() { # file server cert key ca
	cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- cluster: {server: "$2", certificate-authority: "$5"}
  name: local
users:
- user: {client-certificate: "$3", client-key: "$4"}
  name: user
contexts:
- context: {cluster: local, user: user}
  name: local
current-context: local
EOF
}

# 2. The control planes. Each sets kc, the admin kubeconfig, and cp, the control plane's
# processes.
start_quotad() {
	# The kubeconfig line is on stdout, the logs on stderr.
	"$work/quotad" --data-dir "$d/data" --secure-port 0 ${QUOTAD_ARGS:-} >"$d/quotad.out" 2>"$d/quotad.log" &
	pids+=($!)
	proc[quotad]=$!
	kc=""
	for _ in $(seq 1 600); do
		kc=$(sed -n 's/^KUBECONFIG=\([^ ]*\).*/\1/p' "$d/quotad.out" 2>/dev/null | head -n1)
		[[ -n $kc ]] && break
		kill -0 "${proc[quotad]}" 2>/dev/null || { cat "$d/quotad.log" >&2; return 1; }
		sleep 0.1
	done
	[[ -n $kc ]] || { echo "quotad did not print its kubeconfig" >&2; return 1; }
	[[ $kc = /* ]] || kc=$d/data/admin.kubeconfig
	cp=(quotad)
	wait_ready "$kc"
}
start_upstream() {
	local p=$d/pki etcd_port peer_port port
	pki "$p"
	etcd_port=$(free_port)
	peer_port=$(free_port)
	port=$(free_port)
	start etcd "$bin/etcd" --name default --data-dir "$d/etcd" \
		--listen-client-urls "https://127.0.0.1:$etcd_port" --advertise-client-urls "https://127.0.0.1:$etcd_port" \
		--listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
		--initial-cluster "default=http://127.0.0.1:$peer_port" \
		--cert-file "$p/etcd-server.crt" --key-file "$p/etcd-server.key" --trusted-ca-file "$p/ca.crt" --client-cert-auth
	# No endpoint reconciler: it refuses a loopback advertise address, and nothing here reaches
	# the kubernetes Service.
	start kube-apiserver "$bin/kube-apiserver" \
		--etcd-servers "https://127.0.0.1:$etcd_port" --etcd-cafile "$p/ca.crt" \
		--etcd-certfile "$p/apiserver-etcd-client.crt" --etcd-keyfile "$p/apiserver-etcd-client.key" \
		--bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$port" --cert-dir "$p/generated" \
		--tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" --client-ca-file "$p/ca.crt" \
		--service-account-issuer https://kubernetes.default.svc.cluster.local \
		--service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
		--service-cluster-ip-range 10.96.0.0/12 --authorization-mode Node,RBAC --allow-privileged=true \
		--enable-bootstrap-token-auth=true --endpoint-reconciler-type=none ${APISERVER_ARGS:-}
	kc=$d/admin.kubeconfig
	kubeconfig "$kc" "https://127.0.0.1:$port" "$p/admin.crt" "$p/admin.key" "$p/ca.crt"
	kubeconfig "$d/controller-manager.kubeconfig" "https://127.0.0.1:$port" "$p/controller-manager.crt" "$p/controller-manager.key" "$p/ca.crt"
	wait_ready "$kc"
	start kube-controller-manager "$bin/kube-controller-manager" \
		--kubeconfig "$d/controller-manager.kubeconfig" --authentication-kubeconfig "$d/controller-manager.kubeconfig" \
		--authorization-kubeconfig "$d/controller-manager.kubeconfig" --bind-address 127.0.0.1 --secure-port 0 \
		--leader-elect=true --use-service-account-credentials=true --controllers '*,bootstrapsigner,tokencleaner' \
		--service-account-private-key-file "$p/sa.key" --root-ca-file "$p/ca.crt" \
		--cluster-signing-cert-file "$p/ca.crt" --cluster-signing-key-file "$p/ca.key" \
		--service-cluster-ip-range 10.96.0.0/12 ${KCM_ARGS:-}
	cp=(kube-apiserver etcd kube-controller-manager)
}

run_side() { # side n
	local side=$1 n=$2
	d=$work/$side-$n
	rm -rf "$d"
	mkdir -p "$d/home"
	proc=()
	echo "== $side ($n): starting the control plane" >&2
	"start_$side"

	# 3. kube-scheduler, kwok (HOME is the run's: no ~/.kwok changes its stages) and the nodes.
	start kube-scheduler "$bin/kube-scheduler" --kubeconfig="$kc" --leader-elect=true --secure-port=0 ${SCHEDULER_ARGS:-}
	if [[ -n ${KWOK_DEBUG:-} ]]; then
		kwok_args=(--server-address="127.0.0.1:$(free_port)")
		echo "http://${kwok_args[0]#*=}" >"$d/kwok-debug.txt"
	fi
	start kwok env HOME="$d/home" "$bin/kwok" --config="$work/kwok-stages.yaml" --kubeconfig="$kc" \
		--manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
		--node-lease-duration-seconds=40 "${kwok_args[@]}"
	for i in $(seq 0 $((nodes - 1))); do
		cat <<YAML
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: kwok-node-$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok}
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110"}
  capacity: {cpu: "32", memory: 256Gi, pods: "110"}
---
YAML
	done | kubectl --kubeconfig="$kc" apply -f - >/dev/null
	kubectl --kubeconfig="$kc" wait --for=condition=Ready node --all --timeout=300s >/dev/null

	# 4. clusterloader2, between two scrapes of the apiserver's metrics and of the processes'
	# CPU time.
	local c before=() t0 rc=0 load0
	for c in "${cp[@]}" kube-scheduler kwok; do before+=("$(cpu_of "${proc[$c]}")"); done
	load0=$(cut -d' ' -f1 /proc/loadavg)
	kubectl --kubeconfig="$kc" get --raw /metrics >"$d/metrics-before.txt"
	echo "== $side ($n): clusterloader2 (log: $d/cl2.log)" >&2
	t0=$SECONDS
	(cd "$CL2_SRC" && nice -n 0 "$bin/clusterloader2" --kubeconfig="$kc" --nodes="$nodes" \
		--testconfig="$cl2_config" "${overrides[@]}" --report-dir="$d/report" --provider="$provider" \
		--enable-prometheus-server=false --enable-exec-service=false --port="$(free_port)" \
		--v=2) >"$d/cl2.log" 2>&1 || rc=$?
	local secs=$((SECONDS - t0))
	kubectl --kubeconfig="$kc" get --raw /metrics >"$d/metrics-after.txt" || true
	{
		echo "exit=$rc"
		echo "seconds=$secs"
		# The machine's 1-minute load average as the test started and ended: other work on the
		# machine shows here.
		echo "load=$load0 / $(cut -d' ' -f1 /proc/loadavg)"
		local i=0 total=0 rss=0
		for c in "${cp[@]}" kube-scheduler kwok; do
			local now used
			now=$(cpu_of "${proc[$c]}" 2>/dev/null || echo "${before[$i]}")
			used=$(awk -v a="${before[$i]}" -v b="$now" 'BEGIN{printf "%.0f", b - a}')
			echo "$c.cpu=$used"
			echo "$c.rss=$(rss_of "${proc[$c]}" 2>/dev/null || echo -)"
			if [[ " ${cp[*]} " == *" $c "* ]]; then
				total=$((total + used))
				rss=$((rss + $(rss_of "${proc[$c]}" 2>/dev/null || echo 0)))
			fi
			i=$((i + 1))
		done
		echo "control-plane.cpu=$total"
		echo "control-plane.rss=$rss"
	} >"$d/result.txt"
	echo "== $side ($n): clusterloader2 exited $rc after ${secs}s" >&2
	cleanup
}

# SERVE=<side>: only that side's control plane (no scheduler, nodes or clusterloader2), until
# interrupted, printing its kubeconfig: for quotabench against upstream on the same machine.
if [[ -n ${SERVE:-} ]]; then
	d=$work/serve-$SERVE
	rm -rf "$d"
	mkdir -p "$d"
	proc=()
	"start_$SERVE"
	echo "KUBECONFIG=$kc (interrupt to stop)"
	trap 'cleanup; exit 0' INT TERM
	# Until interrupted, or until its processes end (killed one by one): never on to the runs.
	wait || true
	cleanup
	exit 0
fi

runs=()
for n in $(seq 1 "$reps"); do
	for side in $sides; do
		run_side "$side" "$n"
		runs+=("$side-$n=$work/$side-$n")
	done
done
"$bin/cl2report" "${runs[@]}" | tee "$work/report.md"
echo
echo "Reports, logs and metrics: $work"
