#!/usr/bin/env bash
# Imports labrun's own image into the running test cluster, the way
# testbed/up imports the testbed's images: `ctr -n k8s.io images import`
# in each node's namespaces, so its kubelet runs it without a registry
# (imagePullPolicy Never or IfNotPresent). The image is the OCI
# image-layout tarball `make image` writes (cmd/labrun-image), named
# labrun.local/labrun:<commit's first 12 hex digits> and :latest by its
# io.containerd.image.name annotations; importing a newer one moves
# :latest to it.
#
# Usage: testbed/lib/labrun-image.sh [TARBALL]
#   (as root, with the testbed up; TARBALL defaults to the checkout's
#   bin/labrun-image.oci.tar)
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

main() {
  local tar=${1:-$TESTBED/../bin/labrun-image.oci.tar} i
  need_root
  [[ -f $tar ]] || die "no image tarball at $tar: run make image"
  # The nodes' mount namespaces see the host's files by the same paths
  # (but /run, which is each node's own).
  tar="$(realpath "$tar")"
  load_env || die "the testbed is not up ($STATE/env missing): run testbed/up"
  for ((i = 1; i <= ${NODES:-1}; i++)); do
    ns_up "$i" || die "the namespaces of $(node_name "$i") are gone: run testbed/up"
    log "importing $tar into $(node_name "$i")"
    in_node_i "$i" ctr --address /run/containerd/containerd.sock -n k8s.io images import --no-unpack=false "$tar" ||
      die "import of $tar into $(node_name "$i") failed"
  done
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then main "$@"; fi
