#!/usr/bin/env bash
# Builds the testbed's container images from files of this (Debian) machine
# and the cached binaries, as OCI image-layout tarballs:
#   $IMAGES_DIR/<name>_<tag>.r<recipe>.oci.tar
# Each is one uncompressed layer + config + manifest + index.json whose
# manifest carries the image name in the `io.containerd.image.name`
# annotation, which is what `ctr images import` names the image after.
# No registry is involved; kubelet never pulls (imagePullPolicy Never or
# IfNotPresent, and image GC is off).
#
# Usage: testbed/lib/images.sh   (builds the missing or stale tarballs, removes
# tarballs of older recipes)
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

export LC_ALL=C

# new_rootfs DIR: a Debian-like (merged /usr) skeleton.
new_rootfs() {
  local r=$1
  rm -rf "$r"; mkdir -p "$r"/{usr/bin,usr/sbin,usr/lib/x86_64-linux-gnu,usr/lib64,etc,tmp,root,proc,sys,dev,run,var/tmp}
  chmod 1777 "$r/tmp" "$r/var/tmp"
  ln -s usr/bin "$r/bin"; ln -s usr/sbin "$r/sbin"; ln -s usr/lib "$r/lib"; ln -s usr/lib64 "$r/lib64"
  # As on Debian: the chart mounts the node's /var/run/cilium there, and the
  # agent finds its cgroup root (/run/cilium/cgroupv2) through it.
  ln -s ../run "$r/var/run"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$r/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
  printf 'hosts: files dns\n' >"$r/etc/nsswitch.conf"
}

# add_files ROOT PATH...: copy files (following symlinks for the content, but
# also recreating each symlink of the chain, so names like /usr/bin/clang-19
# keep resolving inside the image).
add_files() {
  local r=$1 p; shift
  for p in "$@"; do
    while [[ -L $p ]]; do
      local t; t="$(readlink "$p")"
      mkdir -p "$r$(dirname "$p")"
      ln -sfn "$t" "$r$p"
      [[ $t == /* ]] || t="$(dirname "$p")/$t"
      p="$(realpath -s "$t")"
    done
    mkdir -p "$r$(dirname "$p")"
    cp -a "$p" "$r$p"
  done
}

# add_bins ROOT BIN...: binaries plus the shared libraries ldd reports.
add_bins() {
  local r=$1; shift
  local libs
  libs="$(ldd "$@" 2>/dev/null | awk '/=> \//{print $3} /^\t\/lib/{print $1}' | sort -u)"
  add_files "$r" "$@"
  # shellcheck disable=SC2086
  [[ -z $libs ]] || add_files "$r" $libs
}

# add_busybox ROOT: busybox-static and a symlink per applet, without
# replacing real tools already in the image.
add_busybox() {
  local r=$1 a
  cp /bin/busybox "$r/usr/bin/busybox"
  for a in $(/bin/busybox --list); do
    [[ -e $r/usr/bin/$a || -L $r/usr/bin/$a || -e $r/usr/sbin/$a ]] || ln -s busybox "$r/usr/bin/$a"
  done
}

# pack ROOTFS IMAGE_REF CONFIG_JSON OUT: write the OCI layout tarball.
# The layer tar is reproducible (sorted, mtime 0, numeric root owner).
pack() {
  local root=$1 ref=$2 cfg=$3 out=$4
  local oci; oci="$(mktemp -d "$IMAGES_DIR/.oci.XXXXXX")"
  mkdir -p "$oci/blobs/sha256"
  tar --format=gnu --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
    -C "$root" -cf "$oci/layer.tar" .
  local ld ls cd cs md ms
  ld="$(sha256sum "$oci/layer.tar" | cut -d' ' -f1)"; ls="$(stat -c %s "$oci/layer.tar")"
  mv "$oci/layer.tar" "$oci/blobs/sha256/$ld"
  jq -c --arg d "sha256:$ld" '{architecture:"amd64", os:"linux", config:., rootfs:{type:"layers", diff_ids:[$d]}, history:[{created_by:"labrun testbed/lib/images.sh"}]}' \
    <<<"$cfg" >"$oci/config.json"
  cd="$(sha256sum "$oci/config.json" | cut -d' ' -f1)"; cs="$(stat -c %s "$oci/config.json")"
  mv "$oci/config.json" "$oci/blobs/sha256/$cd"
  jq -nc --arg cd "sha256:$cd" --argjson cs "$cs" --arg ld "sha256:$ld" --argjson ls "$ls" \
    '{schemaVersion:2, mediaType:"application/vnd.oci.image.manifest.v1+json",
      config:{mediaType:"application/vnd.oci.image.config.v1+json", digest:$cd, size:$cs},
      layers:[{mediaType:"application/vnd.oci.image.layer.v1.tar", digest:$ld, size:$ls}]}' >"$oci/manifest.json"
  md="$(sha256sum "$oci/manifest.json" | cut -d' ' -f1)"; ms="$(stat -c %s "$oci/manifest.json")"
  mv "$oci/manifest.json" "$oci/blobs/sha256/$md"
  jq -nc --arg md "sha256:$md" --argjson ms "$ms" --arg name "$ref" --arg tag "${ref##*:}" \
    '{schemaVersion:2, mediaType:"application/vnd.oci.image.index.v1+json",
      manifests:[{mediaType:"application/vnd.oci.image.manifest.v1+json", digest:$md, size:$ms,
        platform:{architecture:"amd64", os:"linux"},
        annotations:{"io.containerd.image.name":$name, "org.opencontainers.image.ref.name":$tag}}]}' >"$oci/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' >"$oci/oci-layout"
  tar --format=gnu --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$oci" -cf "$out.tmp" oci-layout index.json blobs
  mv "$out.tmp" "$out"
  rm -rf "$oci"
}

PATH_ENV='PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

build_pause_image() {
  local r=$1
  new_rootfs "$r"
  cp "$PAUSE_BIN/pause" "$r/pause"
  pack "$r" "$PAUSE_IMAGE" '{"Entrypoint":["/pause"],"Env":["'"$PATH_ENV"'"]}' "$(tarball_for "$PAUSE_IMAGE")"
}

# python: Debian's python3.11 with its stdlib and the libraries of its
# extension modules, plus busybox (sh, netstat, wget, ...).
build_python_image() {
  local r=$1
  new_rootfs "$r"
  add_bins "$r" /usr/bin/python3.11 /usr/lib/python3.11/lib-dynload/*.so
  ln -s python3.11 "$r/usr/bin/python3"; ln -s python3.11 "$r/usr/bin/python"
  mkdir -p "$r/usr/lib/python3.11"
  tar -C /usr/lib/python3.11 --exclude=test --exclude=tests --exclude=idlelib --exclude=tkinter \
    --exclude=turtledemo --exclude=ensurepip --exclude=lib2to3 --exclude='config-3.11-*' -cf - . \
    | tar -C "$r/usr/lib/python3.11" -xf -
  add_files "$r" /etc/python3.11/sitecustomize.py
  add_busybox "$r"
  mkdir -p "$r/srv/www"; echo "labrun testbed web" >"$r/srv/www/index.html"
  pack "$r" "$PYTHON_IMAGE" '{"Cmd":["python3"],"WorkingDir":"/srv/www","Env":["'"$PATH_ENV"'","LANG=C.UTF-8","PYTHONUNBUFFERED=1"]}' \
    "$(tarball_for "$PYTHON_IMAGE")"
}

build_curl_image() {
  local r=$1
  new_rootfs "$r"
  add_bins "$r" /usr/bin/curl
  add_busybox "$r"
  pack "$r" "$CURL_IMAGE" '{"Cmd":["curl"],"Env":["'"$PATH_ENV"'"]}' "$(tarball_for "$CURL_IMAGE")"
}

# cilium: the agent, cilium-dbg, the hubble CLI (HUBBLE_SERVER: the agent's
# local socket, as in Cilium's own image), operator and CNI plugin; clang 19 for the
# runtime datapath compile (+ its resource headers); the bpf C sources at the
# agent's default --lib-dir; bpftool 7.5 (tcx-aware); iptables (nft backend,
# as on the node, see README), ipset, iproute2; busybox; the scripts the
# Helm chart's init containers run, at the paths of the upstream image
# (/init-container.sh, /install-plugin.sh with bash and /cni/loopback,
# /cni-uninstall.sh); and the sysctl guard that runs first: the chart starts
# `cilium-agent`, which is images/cilium-agent, which runs the real agent
# (/usr/lib/cilium/cilium-agent) through labrun-sysctl-guard.
build_cilium_image() {
  local r=$1
  new_rootfs "$r"
  install -m 0755 "$CILIUM_BIN/cilium-dbg" "$CILIUM_BIN/cilium-operator-generic" "$HUBBLE_BIN/hubble" "$r/usr/bin/"
  mkdir -p "$r/usr/lib/cilium"; install -m 0755 "$CILIUM_BIN/cilium-agent" "$r/usr/lib/cilium/"
  install -m 0755 "$TESTBED/images/cilium-agent" "$r/usr/bin/cilium-agent"
  install -m 0755 "$CILIUM_SRC/image/init-container.sh" "$CILIUM_SRC/image/install-plugin.sh" \
    "$CILIUM_SRC/image/cni-uninstall.sh" "$r/"
  mkdir -p "$r/opt/cni/bin"; install -m 0755 "$CILIUM_BIN/cilium-cni" "$r/opt/cni/bin/"
  mkdir -p "$r/var/lib/cilium"; cp -r "$CILIUM_BIN/bpf" "$r/var/lib/cilium/bpf"
  add_bins "$r" /usr/lib/llvm-19/bin/clang /usr/bin/clang-19 "$BPFTOOL_BIN/bpftool" \
    /usr/sbin/xtables-nft-multi /usr/sbin/xtables-legacy-multi /usr/sbin/ipset \
    /usr/sbin/ip /usr/sbin/tc /usr/bin/ss /usr/lib/x86_64-linux-gnu/xtables/*.so \
    /bin/bash /usr/lib/cni/loopback
  mkdir -p "$r/cni"; mv "$r/usr/lib/cni/loopback" "$r/cni/loopback"
  ln -s clang-19 "$r/usr/bin/clang"
  # bpftool was copied under the cache path; put it on PATH.
  mv "$r$BPFTOOL_BIN/bpftool" "$r/usr/sbin/bpftool"; rm -rf "${r:?}${LRT_CACHE}"
  cp -a /usr/lib/llvm-19/lib/clang "$r/usr/lib/llvm-19/lib/"
  local t
  for t in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore \
           iptables-nft iptables-nft-save iptables-nft-restore ip6tables-nft ip6tables-nft-save ip6tables-nft-restore; do
    ln -sfn xtables-nft-multi "$r/usr/sbin/$t"
  done
  for t in iptables-legacy iptables-legacy-save iptables-legacy-restore ip6tables-legacy ip6tables-legacy-save ip6tables-legacy-restore; do
    ln -sfn xtables-legacy-multi "$r/usr/sbin/$t"
  done
  mkdir -p "$r/etc/iproute2" "$r/usr/local/bin"
  cp -a /etc/iproute2/. "$r/etc/iproute2/" 2>/dev/null || true
  install -m 0755 "$TESTBED/images/labrun-sysctl-guard" "$r/usr/local/bin/labrun-sysctl-guard"
  add_busybox "$r"
  pack "$r" "$CILIUM_IMAGE" '{"Cmd":["cilium-agent"],"Env":["'"$PATH_ENV"'","HUBBLE_SERVER=unix:///var/run/cilium/hubble.sock"]}' \
    "$(tarball_for "$CILIUM_IMAGE")"
}

main() {
  mkdir -p "$IMAGES_DIR"
  # Inputs whose change makes an image stale (binary caches' markers, recipe).
  local -a INPUTS=("$PAUSE_BIN/.complete" "$CILIUM_BIN/.complete" "$HUBBLE_BIN/.complete" "$BPFTOOL_BIN/.complete" "$CILIUM_SRC/.complete")
  local ref fn out work
  for ref in "$PAUSE_IMAGE:build_pause_image" "$PYTHON_IMAGE:build_python_image" \
             "$CURL_IMAGE:build_curl_image" "$CILIUM_IMAGE:build_cilium_image"; do
    fn="${ref##*:}"; ref="${ref%:*}"
    out="$(tarball_for "$ref")"
    # Rebuild when an input is newer than the tarball (a rebuilt binary).
    if [[ -f $out ]]; then
      local stale=0 inp
      for inp in "${INPUTS[@]}"; do [[ $inp -nt $out ]] && stale=1; done
      ((stale)) || continue
    fi
    log "image $ref: building $out"
    work="$(mktemp -d "$IMAGES_DIR/.rootfs.XXXXXX")"
    "$fn" "$work"
    rm -rf "$work"
  done
  # Tarballs of other recipes are dead weight (~750 MB a set).
  local keep f
  keep=" $(tarball_for "$PAUSE_IMAGE") $(tarball_for "$PYTHON_IMAGE") $(tarball_for "$CURL_IMAGE") $(tarball_for "$CILIUM_IMAGE") "
  for f in "$IMAGES_DIR"/*.oci.tar; do
    [[ -e $f && $keep != *" $f "* ]] && rm -f "$f"
  done
  return 0
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then main "$@"; fi
