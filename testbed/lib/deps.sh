#!/usr/bin/env bash
# Installs the Debian packages the testbed needs, if any is missing.
# (Machines are not kept between sessions: the project's files must install
# what they use.)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# The images and the bpftool build take this release's files by version
# (python3.11, curl 7.88, linux-source-6.12): say so plainly elsewhere.
. /etc/os-release
[[ ${VERSION_CODENAME:-} == bookworm ]] ||
  die "the test cluster is built from Debian 12 (bookworm) packages; this machine is ${PRETTY_NAME:-unknown}"

PKGS=(
  # node runtime
  containerd runc containernetworking-plugins
  # node tools the labs use in the node's shell (node-exec); tcpdump for
  # the capture action's tcpdump source
  iptables nftables bpftool iproute2 ipset curl socat conntrack busybox-static tcpdump
  # Cilium compiles its datapath at runtime with clang >= 18
  clang-19 llvm-19
  # images are assembled from this machine's files
  python3.11 jq
  # certificates; namespaces (unshare/nsenter)
  openssl util-linux
  # the CA bundle labrun's image carries (make image)
  ca-certificates
  # building bpftool 7.5 from Debian's kernel source package
  make gcc libc6-dev libelf-dev zlib1g-dev libcap-dev pkg-config xz-utils
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v go >/dev/null || die "go is required to build the binaries"
