#!/usr/bin/env bash
# Runs upstream's [sig-api-machinery] conformance specs (e2e.test of k8s.io/kubernetes
# v1.37.x, built from hack/conformance, its own module) against a quotad built from this
# tree, with one Node marked Ready. docs/conformance.md records the last run.
#
#   hack/conformance.sh                 build both, run, write $OUT/{junit_01.xml,summary.txt}
#   E2E_TEST=/path/e2e.test hack/...    reuse a built e2e.test
#   FOCUS=... SKIP=...                  override the spec selection
#   PROCS=4 GINKGO=/path/ginkgo         parallel processes; reuse a built ginkgo CLI
#   WORK=dir OUT=dir                    where binaries, data dir and the report go
#   APPS=1 hack/conformance.sh          upstream's [sig-apps] conformance specs instead
#                                       (e2e.test built with the e2eapps tag), on a cluster
#                                       of hack/cluster.sh: kube-scheduler and 3 KWOK nodes,
#                                       whose default stages run pods and complete Jobs'
#   APPS=1 CONTROL_PLANE=upstream ...   the same specs on the same cluster with upstream's
#                                       control plane (kube-apiserver,
#                                       kube-controller-manager, etcd) instead of quotad
#
# Builds run with GOFLAGS=-p=1 under nice, to leave the CPU to others.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=${WORK:-$(mktemp -d /tmp/quotad-conformance.XXXXXX)}
out=${OUT:-$work/report}
mkdir -p "$work" "$out"

focus='\[sig-api-machinery\].*\[Conformance\]'
tags=()
if [[ -n ${APPS:-} ]]; then
	focus='\[sig-apps\].*\[Conformance\]'
	tags=(-tags e2eapps)
fi
FOCUS=${FOCUS:-$focus}
# Specs that need what quotad does not run: a kubelet running pods (webhook servers, the
# sample API server behind the aggregator, conversion webhooks, a pod that must run).
SKIP=${SKIP:-'AdmissionWebhook|CustomResourceConversionWebhook|Aggregator|sample API Server|CustomResourceFieldSelectors|OrderedNamespaceDeletion|all pods are removed when a namespace is deleted'}

# 1. e2e.test
e2e=${E2E_TEST:-$work/e2e.test}
if [[ ! -x $e2e ]]; then
	# The version of the require line, or of the line in a require block.
	kv=$(awk '$1=="k8s.io/kubernetes"{print $2} $1=="require" && $2=="k8s.io/kubernetes"{print $3}' "$root/hack/conformance/go.mod" | head -n1)
	pkg=k8s.io/component-base/version
	echo "building e2e.test (k8s.io/kubernetes $kv)"
	(cd "$root/hack/conformance" && GOFLAGS=-p=1 nice -n 19 go test "${tags[@]}" -c -o "$e2e" \
		-ldflags "-X $pkg.gitVersion=$kv -X $pkg.gitMajor=1 -X $pkg.gitMinor=37" .)
fi

# The ginkgo CLI of the same module runs the specs in PROCS parallel processes, as upstream's
# conformance runs do ([Serial] specs run alone at the end).
PROCS=${PROCS:-4}
ginkgo=${GINKGO:-$work/ginkgo}
if [[ ! -x $ginkgo ]]; then
	(cd "$root/hack/conformance" && GOFLAGS=-p=1 nice -n 19 go build -o "$ginkgo" github.com/onsi/ginkgo/v2/ginkgo)
fi

# 2. quotad, stamped with the tree's VCS revision
(cd "$root" && GOFLAGS=-p=1 nice -n 10 go build -buildvcs=auto -o "$work/quotad" ./cmd/quotad)
if [[ -n ${APPS:-} ]]; then
	# A cluster: quotad (or upstream's control plane), kube-scheduler, 3 KWOK nodes.
	WORK=$work/cluster QUOTAD=$work/quotad NODES=3 "$root/hack/cluster.sh" >"$work/cluster.out" 2>&1 &
	cluster_pid=$!
	trap 'kill "$cluster_pid" 2>/dev/null || true; wait "$cluster_pid" 2>/dev/null || true' EXIT
	kubeconfig=""
	for _ in $(seq 1 3000); do
		kubeconfig=$(sed -n 's/^ *export KUBECONFIG=\(.*\)$/\1/p' "$work/cluster.out" | head -n1)
		[[ -n $kubeconfig ]] && break
		kill -0 "$cluster_pid" 2>/dev/null || { cat "$work/cluster.out" >&2; exit 1; }
		sleep 0.2
	done
	[[ -n $kubeconfig ]] || { echo "the cluster did not start" >&2; exit 1; }
	export KUBECONFIG=$kubeconfig
	kubectl get nodes
else
"$work/quotad" --data-dir "$work/data" --secure-port 0 >"$work/quotad.out" 2>"$work/quotad.log" &
quotad_pid=$!
trap 'kill "$quotad_pid" 2>/dev/null || true; wait "$quotad_pid" 2>/dev/null || true' EXIT

kubeconfig=""
for _ in $(seq 1 600); do
	kubeconfig=$(sed -n 's/^KUBECONFIG=\([^ ]*\).*/\1/p' "$work/quotad.out" "$work/quotad.log" 2>/dev/null | head -n1)
	[[ -n $kubeconfig ]] && break
	kill -0 "$quotad_pid" 2>/dev/null || { cat "$work/quotad.log" >&2; exit 1; }
	sleep 0.1
done
[[ -n $kubeconfig ]] || { echo "quotad did not print its kubeconfig" >&2; exit 1; }
[[ $kubeconfig = /* ]] || kubeconfig=$work/$kubeconfig
[[ -f $kubeconfig ]] || kubeconfig=$work/data/admin.kubeconfig
export KUBECONFIG=$kubeconfig
kubectl wait --for=create namespace/default --timeout=60s >/dev/null 2>&1 || true
kubectl get --raw /readyz >/dev/null
kubectl version

# 3. One Node, Ready (quotad runs no kubelet: the condition is written as a kubelet would).
cat <<'EOF' | kubectl apply -f -
apiVersion: v1
kind: Node
metadata:
  name: node-1
  labels:
    kubernetes.io/hostname: node-1
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
spec: {}
EOF
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
kubectl patch node node-1 --subresource=status --type=merge -p "{\"status\":{
  \"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",\"message\":\"kubelet is posting ready status\",\"lastHeartbeatTime\":\"$now\",\"lastTransitionTime\":\"$now\"}],
  \"capacity\":{\"cpu\":\"8\",\"memory\":\"32Gi\",\"pods\":\"110\",\"ephemeral-storage\":\"100Gi\"},
  \"allocatable\":{\"cpu\":\"8\",\"memory\":\"32Gi\",\"pods\":\"110\",\"ephemeral-storage\":\"100Gi\"},
  \"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.0.0.1\"},{\"type\":\"Hostname\",\"address\":\"node-1\"}],
  \"nodeInfo\":{\"kubeletVersion\":\"v1.37.2\",\"kubeProxyVersion\":\"v1.37.2\",\"operatingSystem\":\"linux\",\"architecture\":\"amd64\",\"containerRuntimeVersion\":\"containerd://2.0.0\",\"osImage\":\"quotad\",\"kernelVersion\":\"6.1\",\"machineID\":\"\",\"systemUUID\":\"\",\"bootID\":\"\"}}}"
kubectl get nodes
# A kubelet renews its node's Lease every 10 s; without that, the node lifecycle controller
# marks the node Unknown and taints it unreachable after --node-monitor-grace-period (50 s),
# and every spec's cleanup, which waits for all nodes to be Ready, fails. The Lease is
# renewed here for as long as the specs run.
renew_lease() {
	local now
	now=$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)
	kubectl apply -f - >/dev/null <<EOL
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: node-1
  namespace: kube-node-lease
spec:
  holderIdentity: node-1
  leaseDurationSeconds: 40
  renewTime: "$now"
EOL
}
renew_lease
(while sleep 10; do renew_lease || true; done) &
lease_pid=$!
trap 'kill "$lease_pid" 2>/dev/null || true; kill "$quotad_pid" 2>/dev/null || true; wait "$quotad_pid" 2>/dev/null || true' EXIT
kubectl get lease -n kube-node-lease node-1
# The framework reads the cluster's IP family from the `kubernetes` Service; a quotad that
# does not create it yet gets one here.
kubectl get service kubernetes -n default >/dev/null 2>&1 ||
	kubectl create service clusterip kubernetes -n default --tcp=443:443
fi

# 4. The specs
set +e
nice -n 5 "$ginkgo" --procs="$PROCS" --focus="$FOCUS" --skip="$SKIP" \
	--timeout=3h --no-color -v --output-interceptor-mode=none \
	"$e2e" -- --provider=skeleton --kubeconfig="$KUBECONFIG" \
	--report-dir="$out" --allowed-not-ready-nodes=0 \
	>"$out/e2e.log" 2>&1
rc=$?
set -e

# 5. Summary: one line per spec, from the JUnit report.
python3 - "$out/junit_01.xml" >"$out/summary.txt" <<'EOF'
import sys, xml.etree.ElementTree as ET
tree = ET.parse(sys.argv[1])
rows = []
for tc in tree.iter('testcase'):
    name = tc.get('name')
    if tc.find('skipped') is not None or not name.startswith('[It]'):
        continue
    failure = tc.find('failure')
    if failure is None:
        failure = tc.find('error')
    if failure is not None:
        msg = (failure.get('message') or failure.text or '').strip().splitlines()
        rows.append(('FAIL', name, msg[0][:300] if msg else ''))
    else:
        rows.append(('PASS', name, ''))
for r in rows:
    print('\t'.join(r))
print('passed %d, failed %d' % (sum(r[0] == 'PASS' for r in rows), sum(r[0] == 'FAIL' for r in rows)))
EOF
tail -n1 "$out/summary.txt"
echo "report: $out (e2e.log, junit_01.xml, summary.txt); logs: $work/quotad.log, $work/cluster/"
exit $rc
