#!/usr/bin/env bash
# Runs a cluster whose control plane is quotad: a quotad built from this tree, the real
# kube-scheduler of the version quotad emulates (leader-elected on its kube-system Lease)
# and KWOK simulating NODES nodes with its default stages (pods become Running and Ready,
# Jobs' pods complete). Prints how to use it, then runs until interrupted.
#
#   hack/cluster.sh                    3 KWOK nodes of 4 CPUs and 16Gi each
#   NODES=100 hack/cluster.sh          100 nodes
#   HOLLOW=2 hack/cluster.sh           and 2 hollow kubelets (kubemark --morph=kubelet: the
#                                      kubelet's code, a fake runtime) joining with a bootstrap
#                                      token from `quotad token create`, labelled type=hollow
#   NODE_CPU=8 NODE_MEMORY=32Gi ...    node size
#   QUOTAD_ARGS=--profiling ...        more flags for quotad
#   CONTROL_PLANE=upstream ...         upstream's control plane instead of quotad, as
#                                      hack/clusterloader2.sh runs it (kube-apiserver,
#                                      kube-controller-manager and etcd of the same version):
#                                      the same cluster for comparing the two
#   QUOTAD=path ...                    a quotad built before, instead of building one
#   WORK=dir hack/cluster.sh           where binaries, the data dir and the logs go
#   COMPONENTS_DIR=dir ...             where hack/cluster/build.sh caches kube-scheduler and kwok
#
# The first run builds kube-scheduler and kwok (several minutes; GOFLAGS=-p=1 under nice);
# later runs reuse them.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=${WORK:-$(mktemp -d /tmp/quotad-cluster.XXXXXX)}
nodes=${NODES:-3}
cpu=${NODE_CPU:-4}
memory=${NODE_MEMORY:-16Gi}
mkdir -p "$work/home"

# 1. The components, and quotad.
hollow=${HOLLOW:-0}
extra=()
[[ $hollow -gt 0 ]] && extra=(kubemark)
bin=$("$root/hack/cluster/build.sh" "${extra[@]}" | tail -n1)
if [[ -n ${QUOTAD:-} ]]; then
	cp "$QUOTAD" "$work/quotad"
else
	(cd "$root" && GOFLAGS=-p=1 nice -n 10 go build -o "$work/quotad" ./cmd/quotad)
fi

pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# 2. quotad (or upstream's control plane), then its admin kubeconfig.
if [[ ${CONTROL_PLANE:-quotad} == upstream ]]; then
	SERVE=upstream WORK="$work/upstream" "$root/hack/clusterloader2.sh" >"$work/quotad.out" 2>"$work/upstream.log" &
	log=$work/upstream.log
else
	"$work/quotad" --data-dir "$work/data" --secure-port 0 ${QUOTAD_ARGS:-} >"$work/quotad.out" 2>"$work/quotad.log" &
	log=$work/quotad.log
fi
pids+=($!)
kubeconfig=""
for _ in $(seq 1 3000); do
	kubeconfig=$(sed -n 's/^KUBECONFIG=\([^ ]*\).*/\1/p' "$work/quotad.out" 2>/dev/null | head -n1)
	[[ -n $kubeconfig ]] && break
	kill -0 "${pids[0]}" 2>/dev/null || { cat "$log" >&2; exit 1; }
	sleep 0.1
done
[[ -n $kubeconfig ]] || { echo "the control plane did not print its kubeconfig" >&2; exit 1; }
[[ $kubeconfig = /* ]] || kubeconfig=$work/data/admin.kubeconfig
export KUBECONFIG=$kubeconfig

# 3. kube-scheduler and kwok (HOME is the work dir's: no ~/.kwok configuration changes its stages).
"$bin/kube-scheduler" --kubeconfig="$kubeconfig" --leader-elect=true --secure-port=0 >"$work/kube-scheduler.log" 2>&1 &
pids+=($!)
HOME=$work/home "$bin/kwok" --config="$bin/kwok-stages.yaml" --kubeconfig="$kubeconfig" \
	--manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
	--node-lease-duration-seconds=40 >"$work/kwok.log" 2>&1 &
pids+=($!)

# 4. The nodes.
for i in $(seq 0 $((nodes - 1))); do
	cat <<YAML
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: kwok-node-$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok, node-role.kubernetes.io/agent: ""}
status:
  allocatable: {cpu: "$cpu", memory: $memory, pods: "110"}
  capacity: {cpu: "$cpu", memory: $memory, pods: "110"}
---
YAML
done | kubectl apply -f - >/dev/null
# 5. Hollow kubelets, each with a directory of its own, joining with a bootstrap token.
if [[ $hollow -gt 0 ]]; then
	"$work/quotad" token create --data-dir "$work/data" >"$work/bootstrap.kubeconfig" 2>/dev/null
	for i in $(seq 0 $((hollow - 1))); do
		d=$work/hollow-node-$i
		mkdir -p "$d/tmp"
		TMPDIR=$d/tmp "$bin/kubemark" --morph=kubelet --name="hollow-node-$i" \
			--bootstrap-kubeconfig="$work/bootstrap.kubeconfig" --kubeconfig="$d/kubelet.kubeconfig" \
			--cert-dir="$d/pki" --kubelet-port=$((20250 + i)) --kubelet-read-only-port=0 \
			--use-host-image-service=false --node-labels=type=hollow >"$work/hollow-node-$i.log" 2>&1 &
		pids+=($!)
	done
	for i in $(seq 0 $((hollow - 1))); do
		kubectl wait --for=create "node/hollow-node-$i" --timeout=300s >/dev/null
	done
fi
kubectl wait --for=condition=Ready node --all --timeout=300s >/dev/null
kubectl get nodes

cat <<EOF

quotad, kube-scheduler and kwok are running ($nodes KWOK nodes, $hollow hollow kubelets). In another shell:

  export KUBECONFIG=$kubeconfig
  kubectl create namespace demo
  kubectl create quota compute -n demo --hard=requests.cpu=2,requests.memory=4Gi,pods=10
  kubectl create deployment web -n demo --image=registry.k8s.io/pause:3.10 --replicas=0
  kubectl set resources deployment web -n demo --requests=cpu=250m,memory=256Mi
  kubectl scale deployment web -n demo --replicas=4
  kubectl rollout status deployment/web -n demo
  kubectl get pods -n demo -o wide
  kubectl describe quota compute -n demo
  kubectl create job once --image=registry.k8s.io/pause:3.10   # kwok completes its pod
  kubectl wait --for=condition=Complete job/once

Logs: $work/{quotad,kube-scheduler,kwok,hollow-node-*}.log. Ctrl-C stops everything.
EOF
wait -n "${pids[@]}"
echo "a component exited; see the logs in $work" >&2
exit 1
