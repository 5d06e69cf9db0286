#!/usr/bin/env bash
# Builds the upstream components a quotad cluster runs, each from a module of its own, and
# prints the directory holding them:
#
#   kube-scheduler, kubemark   k8s.io/kubernetes (hack/cluster/go.mod, the version quotad emulates)
#   kube-apiserver,            the same module: the upstream control plane hack/clusterloader2.sh
#   kube-controller-manager    measures quotad against
#   kwok                       sigs.k8s.io/kwok (hack/cluster/kwok/go.mod)
#   etcd                       etcd's server main from quotad's own module (test/ha/etcdmain), so
#                              the etcd upstream runs on is the one quotad embeds (go.mod's
#                              go.etcd.io/etcd/server/v3)
#   clusterloader2             upstream's scalability test tool, a module of its own whose
#                              source is not in this repo: $CL2_SRC, by default
#                              ../shared/third_party/clusterloader2 from the repo root (perf-tests'
#                              clusterloader2 directory); built from a copy, as its go.mod allows
#   cl2report                  hack/cluster/cl2report: the table hack/clusterloader2.sh prints
#   kwok-stages.yaml           the stages kwokctl gives kwok by default, from that module:
#                              node-initialize, node-heartbeat-with-lease (run kwok with
#                              --node-lease-duration-seconds), pod-ready, pod-complete, pod-delete
#
# Binaries are cached under $COMPONENTS_DIR (default: quotad-components/ next to the Go build
# cache), one directory per hash of the modules' go.mod and go.sum, so a second run builds
# nothing. Builds run with GOFLAGS=-p=1 under nice, to leave the CPU to others, except under
# CI=true, where nothing else runs.
#
#   hack/cluster/build.sh                      kube-scheduler and kwok
#   hack/cluster/build.sh kubemark             kubemark too (a hollow kubelet)
#   hack/cluster/build.sh kube-apiserver kube-controller-manager etcd clusterloader2 cl2report
#                                              what hack/clusterloader2.sh needs besides
#   BUILD=no hack/cluster/build.sh ...         build nothing: exit 3 when one is not built yet
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
want=(kwok kube-scheduler "$@")

# The version of the k8s.io/kubernetes require line, stamped into the binaries as upstream's
# release builds do (kube-scheduler reports it and checks it against the server's).
kv=$(awk '$1=="k8s.io/kubernetes"{print $2} $1=="require" && $2=="k8s.io/kubernetes"{print $3}' "$here/go.mod" | head -n1)
wv=$(awk '$1=="sigs.k8s.io/kwok"{print $2} $1=="require" && $2=="sigs.k8s.io/kwok"{print $3}' "$here/kwok/go.mod" | head -n1)
minor=${kv#v1.}; minor=${minor%%.*}
# The cache key: the modules, and layout, bumped by hand when what this script puts in the
# directory changes (the script itself is not hashed, so editing it rebuilds nothing).
layout=1
key=$({ echo "layout $layout"; cat "$here/go.mod" "$here/go.sum" "$here/kwok/go.mod" "$here/kwok/go.sum"; } | sha256sum | cut -c1-12)
base=${COMPONENTS_DIR:-$(dirname "$(go env GOCACHE)")/quotad-components}
dir=$base/$kv-kwok-$wv-$key
mkdir -p "$dir"

pkg=k8s.io/component-base/version
ldk="-X $pkg.gitVersion=$kv -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
build() { # name module-dir package ldflags [stamp]
	local name=$1 mod=$2 p=$3 ld=$4 stamp=${5:-}
	# A binary built from a module outside the key (etcd, clusterloader2) carries a stamp of
	# what it was built from, and is rebuilt when that changes.
	if [[ -x $dir/$name ]] && [[ -z $stamp || $(cat "$dir/.$name.stamp" 2>/dev/null) == "$stamp" ]]; then
		return
	fi
	if [[ ${BUILD:-} == no ]]; then
		echo "$name is not built yet (hack/cluster/build.sh builds it)" >&2
		exit 3
	fi
	echo "building $name ($p) into $dir" >&2
	local start=$SECONDS
	# Built to a temporary name first: a concurrent or interrupted build never leaves half a binary.
	if [[ ${CI:-} == true ]]; then
		(cd "$mod" && go build -trimpath -ldflags "$ld" -o "$dir/.$name.$$" "$p")
	else
		(cd "$mod" && GOFLAGS="-p=1 ${GOFLAGS:-}" nice -n 19 go build -trimpath -ldflags "$ld" -o "$dir/.$name.$$" "$p")
	fi
	mv "$dir/.$name.$$" "$dir/$name"
	[[ -n $stamp ]] && echo "$stamp" >"$dir/.$name.stamp"
	echo "built $name in $((SECONDS - start))s" >&2
}
for w in "${want[@]}"; do
	case $w in
	kube-scheduler) build kube-scheduler "$here" k8s.io/kubernetes/cmd/kube-scheduler "$ldk" ;;
	kubemark) build kubemark "$here" k8s.io/kubernetes/cmd/kubemark "$ldk" ;;
	kube-apiserver) build kube-apiserver "$here" k8s.io/kubernetes/cmd/kube-apiserver "$ldk" ;;
	kube-controller-manager) build kube-controller-manager "$here" k8s.io/kubernetes/cmd/kube-controller-manager "$ldk" ;;
	kwok) build kwok "$here/kwok" sigs.k8s.io/kwok/cmd/kwok "" ;;
	cl2report) build cl2report "$here" ./cl2report "" "$(cat "$here"/cl2report/*.go | sha256sum | cut -c1-12)" ;;
	etcd)
		ev=$(awk '$1=="go.etcd.io/etcd/server/v3"{print $2}' "$root/go.mod" | head -n1)
		build etcd "$root" ./test/ha/etcdmain "" "$ev"
		;;
	clusterloader2)
		cl2=${CL2_SRC:-$root/../shared/third_party/clusterloader2}
		[[ -f $cl2/go.mod ]] || { echo "no clusterloader2 source at $cl2 (set CL2_SRC)" >&2; exit 2; }
		cl2=$(cd "$cl2" && pwd)
		ck=$(cat "$cl2/go.mod" "$cl2/go.sum" | sha256sum | cut -c1-12)
		# Built from a copy: the source may be read-only, and the go command may complete go.sum.
		if ! [[ -x $dir/clusterloader2 && $(cat "$dir/.clusterloader2.stamp" 2>/dev/null) == "$ck" ]] && [[ ${BUILD:-} != no ]]; then
			tmp=$(mktemp -d)
			cp -r "$cl2/." "$tmp/"
			chmod -R u+w "$tmp"
			GOFLAGS=-mod=mod build clusterloader2 "$tmp" ./cmd "" "$ck"
			rm -rf "$tmp"
		else
			build clusterloader2 "$cl2" ./cmd "" "$ck"
		fi
		;;
	*) echo "unknown component $w" >&2; exit 2 ;;
	esac
done
# kwok alone runs no stages: kwokctl passes these (its getDefaultNodeStages with a lease,
# getDefaultPodStages).
if [[ ! -f $dir/kwok-stages.yaml ]]; then
	src=$(cd "$here/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
	for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
		pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
		echo "---"
		cat "$src/kustomize/stage/$f"
	done >"$dir/.kwok-stages.yaml.$$"
	mv "$dir/.kwok-stages.yaml.$$" "$dir/kwok-stages.yaml"
fi
echo "$dir"
