#!/usr/bin/env bash
# Builds (or reuses) every binary the testbed runs. Binaries are cached OUTSIDE
# the clone, keyed by component and version, under $LRT_CACHE/<name>-<version>/:
# a directory counts only once its ".complete" marker exists, so an interrupted
# build is redone instead of half-used. The Go build and module caches are the
# user's defaults, so relinks after a cold build take seconds.
#
# Usage: testbed/lib/build.sh [k8s|etcd|cilium|hubble|chart|helm|pause|bpftool|all]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=common.sh
source "$HERE/common.sh"

export CGO_ENABLED=0
export GOFLAGS="${GOFLAGS:-} -buildvcs=false -trimpath"

# cached DIR: true when DIR holds a finished build.
cached() { [[ -f "$1/.complete" ]]; }

build_k8s() {
  local out="$LRT_CACHE/kubernetes-$K8S_VERSION"
  cached "$out" && { log "kubernetes $K8S_VERSION: cached in $out"; return; }
  log "kubernetes $K8S_VERSION: building into $out (cold: ~15 min on 2 cores)"
  mkdir -p "$out"
  local minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
  # kubectl refuses to talk to a server whose version it cannot parse, so stamp
  # the version the way the Kubernetes release build does (both copies).
  local ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    ld+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  ( cd "$TESTBED/build/k8s" && time go build -ldflags "$ld" -o "$out/" \
      k8s.io/kubernetes/cmd/kube-apiserver \
      k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler \
      k8s.io/kubernetes/cmd/kubelet \
      k8s.io/kubernetes/cmd/kubectl )
  touch "$out/.complete"
}

build_etcd() {
  local out="$LRT_CACHE/etcd-$ETCD_VERSION"
  cached "$out" && { log "etcd $ETCD_VERSION: cached in $out"; return; }
  log "etcd $ETCD_VERSION: building into $out"
  mkdir -p "$out"
  ( cd "$TESTBED/build/etcd" && time go build -ldflags "-s -w" -o "$out/etcd" . )
  touch "$out/.complete"
}

build_cilium() {
  local out="$LRT_CACHE/cilium-$CILIUM_VERSION"
  cached "$out" && { log "cilium $CILIUM_VERSION: cached in $out"; return; }
  log "cilium $CILIUM_VERSION: building into $out (cold: ~15 min on 2 cores)"
  mkdir -p "$out"
  ( cd "$TESTBED/build/cilium"
    # The release build stamps "<version> <short commit> <author date>"
    # (Makefile.defs FULL_BUILD_VERSION); `cilium-dbg version` and status
    # print it. The module proxy's Origin gives the tag's commit and time.
    local info hash when
    info="$(go mod download -json "github.com/cilium/cilium@$CILIUM_VERSION")"
    hash="$(jq -r '.Origin.Hash // empty' <<<"$info" | cut -c1-10)"
    when="$(jq -r '.Time' "$(jq -r '.Info' <<<"$info")" | sed 's/Z$/+00:00/')"
    local ld="-s -w -X 'github.com/cilium/cilium/pkg/version.ciliumVersion=${CILIUM_VERSION#v} ${hash:-unknown} $when'"
    # osusergo: pure-Go user lookups (no cgo). The operator's IPAM mode is a
    # build tag; "generic" has no cloud IPAM, which is what a single node needs.
    time go build -tags osusergo -ldflags "$ld" -o "$out/" \
      github.com/cilium/cilium/daemon \
      github.com/cilium/cilium/cilium-dbg \
      github.com/cilium/cilium/plugins/cilium-cni
    time go build -tags osusergo,ipam_provider_operator -ldflags "$ld" \
      -o "$out/cilium-operator-generic" github.com/cilium/cilium/operator
    mv "$out/daemon" "$out/cilium-agent"
    # The agent compiles its datapath at runtime from the C sources that ship
    # in the module; keep a copy next to the binaries for the image.
    local mod; mod="$(go list -m -f '{{.Dir}}' github.com/cilium/cilium)"
    rm -rf "$out/bpf"; cp -r "$mod/bpf" "$out/bpf"; chmod -R u+w "$out/bpf"
  )
  touch "$out/.complete"
}

# hubble: the Hubble CLI (github.com/cilium/cilium/hubble, the same module
# and version as the agent), for the agent's image: `hubble observe` on the
# agent's local socket is how a lab reads Hubble's flows. Its own cache
# directory, so that the agent's cached build above is kept. Stamped as the
# release build stamps it (hubble/Makefile): `hubble --version` prints the
# version. Cold (an empty Go build cache), ~5 CPU-minutes: ~13 min of wall
# time on 2 busy cores; after the agent's build, which shares most of its
# packages, much less.
build_hubble() {
  local out="$HUBBLE_BIN"
  cached "$out" && { log "hubble $CILIUM_VERSION: cached in $out"; return; }
  log "hubble $CILIUM_VERSION: building into $out"
  mkdir -p "$out"
  ( cd "$TESTBED/build/cilium"
    local info hash
    info="$(go mod download -json "github.com/cilium/cilium@$CILIUM_VERSION")"
    hash="$(jq -r '.Origin.Hash // empty' <<<"$info" | cut -c1-10)"
    time go build -tags osusergo -ldflags "-s -w -X github.com/cilium/cilium/hubble/pkg.Version=$CILIUM_VERSION \
      -X github.com/cilium/cilium/hubble/pkg.GitHash=${hash:-unknown}" \
      -o "$out/hubble" github.com/cilium/cilium/hubble )
  "$out/hubble" --version | grep -qF "hubble $CILIUM_VERSION" || die "unexpected hubble version: $("$out/hubble" --version)"
  touch "$out/.complete"
}

# bpftool: Debian bookworm's bpftool is 7.1, which predates tcx and so shows
# nothing for Cilium's tcx-attached programs in `bpftool net show`. Debian
# also ships the 6.12 kernel source as a package (linux-source-6.12, in
# bookworm-security); bpftool 7.5 is built from its tools/ tree. Only the
# binary is kept. LLVM disassembly is left out so the binary needs only
# libelf, zlib and libcap (it also goes into the Cilium image).
build_bpftool() {
  local out="$LRT_CACHE/bpftool-$BPFTOOL_VERSION"
  cached "$out" && { log "bpftool $BPFTOOL_VERSION: cached in $out"; return; }
  log "bpftool $BPFTOOL_VERSION: building from Debian linux-source-$BPFTOOL_KSRC"
  local work="$LRT_CACHE/src/bpftool-build"
  rm -rf "$work"; mkdir -p "$work" "$out"
  ( cd "$work"
    apt-get download "linux-source-$BPFTOOL_KSRC" >/dev/null
    dpkg-deb --fsys-tarfile linux-source-"$BPFTOOL_KSRC"_*.deb \
      | tar -xO "./usr/src/linux-source-$BPFTOOL_KSRC.tar.xz" | xz -dc \
      | tar -x --wildcards "linux-source-$BPFTOOL_KSRC/tools/*" \
          "linux-source-$BPFTOOL_KSRC/kernel/bpf/*" "linux-source-$BPFTOOL_KSRC/include/*" \
          "linux-source-$BPFTOOL_KSRC/scripts/*" "linux-source-$BPFTOOL_KSRC/Makefile" \
          "linux-source-$BPFTOOL_KSRC/arch/x86/include/*"
    make -s -C "linux-source-$BPFTOOL_KSRC/tools/bpf/bpftool" -j"$(nproc)" \
      CLANG=clang-19 LLVM_STRIP=llvm-strip-19 \
      FEATURE_TESTS="clang-bpf-co-re libcap" FEATURE_DISPLAY="clang-bpf-co-re libcap" >/dev/null
    install -m 0755 "linux-source-$BPFTOOL_KSRC/tools/bpf/bpftool/bpftool" "$out/bpftool"
  )
  rm -rf "$work"; rmdir "$LRT_CACHE/src" 2>/dev/null || true
  "$out/bpftool" version | grep -q "bpftool v$BPFTOOL_VERSION" || die "unexpected bpftool version"
  touch "$out/.complete"
}

# helm: the command users install Cilium with, from the helm.sh/helm/v4 Go
# module (wrapper module build/helm), stamped with its release version so
# `helm version` prints what a release binary prints.
build_helm() {
  local out="$LRT_CACHE/helm-$HELM_VERSION"
  cached "$out" && { log "helm $HELM_VERSION: cached in $out"; return; }
  log "helm $HELM_VERSION: building into $out"
  mkdir -p "$out"
  ( cd "$TESTBED/build/helm"
    time go build -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION \
      -X helm.sh/helm/v4/internal/version.gitTreeState=clean" \
      -o "$out/helm" helm.sh/helm/v4/cmd/helm )
  "$out/helm" version --template '{{.Version}}' | grep -qxF "$HELM_VERSION" || die "unexpected helm version"
  touch "$out/.complete"
}

# Cilium's Helm chart and the scripts of its image that the chart's init
# containers run, copied out of the module (the same version as the binaries).
build_cilium_src() {
  local out="$CILIUM_SRC"
  cached "$out" && { log "cilium chart $CILIUM_VERSION: cached in $out"; return; }
  log "cilium chart $CILIUM_VERSION: copying into $out"
  rm -rf "$out"; mkdir -p "$out/image"
  local mod
  mod="$(cd "$TESTBED/build/cilium" && go mod download -json "github.com/cilium/cilium@$CILIUM_VERSION" | jq -r .Dir)"
  cp -r "$mod/install/kubernetes/cilium" "$out/cilium"
  cp "$mod/images/cilium/init-container.sh" "$mod/plugins/cilium-cni/install-plugin.sh" \
    "$mod/plugins/cilium-cni/cni-uninstall.sh" "$out/image/"
  chmod -R u+w "$out"
  touch "$out/.complete"
}

build_pause() {
  local out="$LRT_CACHE/pause-$PAUSE_VERSION"
  cached "$out" && { log "pause $PAUSE_VERSION: cached in $out"; return; }
  mkdir -p "$out"
  ( cd "$TESTBED/build/pause" && go build -ldflags "-s -w" -o "$out/pause" . )
  touch "$out/.complete"
}

what="${1:-all}"
case "$what" in
  k8s) build_k8s ;;
  etcd) build_etcd ;;
  cilium) build_cilium ;;
  hubble) build_hubble ;;
  helm) build_helm ;;
  chart) build_cilium_src ;;
  pause) build_pause ;;
  bpftool) build_bpftool ;;
  all) build_pause; build_bpftool; build_etcd; build_k8s; build_cilium; build_hubble; build_cilium_src; build_helm ;;
  *) die "unknown build target: $what" ;;
esac
