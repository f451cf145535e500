# shellcheck shell=bash disable=SC2034
# Shared settings and helpers for the testbed scripts (sourced, not run).
# Everything the testbed creates is named here, so `down` can remove exactly it.

TESTBED="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# ---- versions (the binary cache is keyed by these) -------------------------
K8S_VERSION=v1.36.3
ETCD_VERSION=v3.6.8
CILIUM_VERSION=v1.20.1
PAUSE_VERSION=3
BPFTOOL_VERSION=7.5.0
# Debian package whose kernel tree bpftool is built from (see lib/build.sh).
BPFTOOL_KSRC=6.12
# Image tarballs are named after a hash of their recipe (content, not mtime:
# a fresh clone must reuse them), so a recipe change rebuilds them.
IMAGE_RECIPE="$(cat "$TESTBED/lib/images.sh" "$TESTBED/images/labrun-sysctl-guard" | sha256sum | cut -c1-12)"

# ---- paths ------------------------------------------------------------------
LRT_CACHE="${LRT_CACHE:-/var/cache/labrun-testbed}"   # binaries, image tarballs
STATE="${LRT_STATE:-/var/lib/labrun-testbed}"         # everything of a running testbed
RUNDIR=/run/labrun-testbed                              # namespace files, pidfiles
NSDIR="$RUNDIR/ns"                                      # bind mounts holding the namespaces
NETNS="$NSDIR/net"
MNTNS="$NSDIR/mnt"
PIDDIR="$RUNDIR/pids"
LOGDIR="$STATE/logs"
PKI="$STATE/pki"
KUBECONFIG_PATH="$STATE/kubeconfig"
VARS_PATH="$STATE/vars.yaml"
NODE_EXEC="$STATE/bin/node-exec"
# The testbed's own bpffs, seen from the host (read-only view of the instance
# the node has at /sys/fs/bpf; see setup_namespaces in lib/node.sh).
BPFFS="$STATE/bpffs"
CREATED="$STATE/created"   # one line per host-side object the testbed created (for down)

K8S_BIN="$LRT_CACHE/kubernetes-$K8S_VERSION"
ETCD_BIN="$LRT_CACHE/etcd-$ETCD_VERSION"
CILIUM_BIN="$LRT_CACHE/cilium-$CILIUM_VERSION"
BPFTOOL_BIN="$LRT_CACHE/bpftool-$BPFTOOL_VERSION"
PAUSE_BIN="$LRT_CACHE/pause-$PAUSE_VERSION"
IMAGES_DIR="$LRT_CACHE/images"
KUBECTL="$K8S_BIN/kubectl"

# ---- network (k3s' CIDRs; all inside the testbed's own netns) -------------
NODE_NAME=labrun-node
HOST_VETH=lrt0            # host end of the veth pair
NODE_DEV=eth0             # node end, inside the node netns
HOST_IP=10.250.42.1
NODE_IP=10.250.42.2
LINK_PREFIX=24
POD_CIDR=10.42.0.0/16
SVC_CIDR=10.43.0.0/16
KUBERNETES_SVC_IP=10.43.0.1
APISERVER_PORT=6443

# ---- images (local, never pulled; tags are the real upstream versions) ----
PAUSE_IMAGE="labrun.local/pause:$PAUSE_VERSION"
PYTHON_IMAGE="labrun.local/python:3.11.2"
CURL_IMAGE="labrun.local/curl:7.88.1"
CILIUM_IMAGE="labrun.local/cilium:$CILIUM_VERSION"

tarball_for() { # IMAGE_REF -> path of its OCI tarball in the cache
  local ref=$1 base
  base="${ref#*/}"; base="${base//[:\/]/_}"
  echo "$IMAGES_DIR/${base}.r${IMAGE_RECIPE}.oci.tar"
}

log() { printf '[testbed %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

need_root() { [[ $EUID -eq 0 ]] || die "must run as root"; }

# in_node CMD...: run CMD in the node's network and mount namespaces.
# (nsenter, not `ip netns exec`: the latter remounts /sys and would hide the
# node's own sysfs/cgroup setup.)
in_node() { nsenter --net="$NETNS" --mount="$MNTNS" -- "$@"; }

# kc ARGS...: kubectl against the testbed (from the host, over the veth).
kc() { "$KUBECTL" --kubeconfig "$KUBECONFIG_PATH" "$@"; }

# ns_up: true when both namespace files are live bind mounts.
ns_up() { mountpoint -q "$NETNS" 2>/dev/null && mountpoint -q "$MNTNS" 2>/dev/null; }

# pid_alive NAME: true when the pidfile of component NAME names a live process
# that is still the one we started (its start time matches the recorded one,
# so a recycled PID is never mistaken for ours).
pid_alive() {
  local f="$PIDDIR/$1.pid" pid start
  [[ -f $f ]] || return 1
  read -r pid start <"$f" || return 1
  [[ -n ${pid:-} && -d /proc/$pid ]] || return 1
  local st; st="$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null)" || return 1
  # fields after "comm": state is 1st, starttime is the 20th; a zombie is dead.
  [[ ${st%% *} != Z ]] && [[ "$(awk '{print $20}' <<<"$st")" == "$start" ]]
}

# tail_log NAME [N]: last lines of a component's log, for error reports.
tail_log() {
  local f="$LOGDIR/$1.log"
  [[ -f $f ]] || { echo "(no log $f)"; return; }
  echo "---- last ${2:-40} lines of $f ----"
  tail -n "${2:-40}" "$f"
  echo "---- end of $f ----"
}

# wait_for DESC TIMEOUT_S LOGNAME CMD...: poll CMD (every 0.5 s) until it
# succeeds. On timeout, print what was awaited, CMD's last output and the tail
# of the relevant component log, and fail. No fixed sleeps elsewhere.
wait_for() {
  local desc=$1 timeout=$2 logname=$3; shift 3
  local deadline=$((SECONDS + timeout)) out=""
  while :; do
    if out="$("$@" 2>&1)"; then return 0; fi
    if ((SECONDS >= deadline)); then
      log "TIMEOUT after ${timeout}s waiting for: $desc"
      echo "last state (\`$*\`):" >&2
      printf '%s\n' "$out" | tail -n 30 >&2
      if [[ -n $logname ]]; then
        local n; for n in $logname; do tail_log "$n" 40 >&2; done
      fi
      return 1
    fi
    sleep 0.5
  done
}

# The cgroup the testbed lives in. It is nested under the cgroup of the process
# that ran `up` in EVERY hierarchy: kubelet (cgroupfs driver) uses one path for
# all hierarchies, so we take the deepest of the caller's paths (here: memory
# is /process_api/<id>, the others are /) and check the others are its
# prefixes. The chosen path is recorded in $STATE/env so later commands (down,
# node-exec) do not depend on who runs them.
compute_cgroup_base() {
  local deepest="/" line path
  while IFS= read -r line; do
    path="${line#*:*:}"
    [[ ${#path} -gt ${#deepest} ]] && deepest="$path"
  done </proc/self/cgroup
  while IFS= read -r line; do
    path="${line#*:*:}"
    [[ "$deepest/" == "${path%/}/"* ]] || die "cannot nest: cgroup paths $path and $deepest are not on one branch"
  done </proc/self/cgroup
  echo "${deepest%/}/labrun-testbed"
}

# v1 hierarchies mounted here (kubelet and runc use all of them) + unified.
cgroup_mounts() {
  local d
  for d in /sys/fs/cgroup/*; do
    [[ -d $d ]] && mountpoint -q "$d" && echo "$d"
  done
}

# bpffs_exposed: true when $BPFFS is a bpffs mount on the host and the same
# instance as the node's /sys/fs/bpf (bpffs gives each instance its own
# anonymous device number, so equal st_dev means one instance).
bpffs_exposed() {
  mountpoint -q "$BPFFS" 2>/dev/null || return 1
  [[ "$(stat -f -c %T "$BPFFS")" == bpf_fs ]] || return 1
  local host node
  host="$(stat -c %d "$BPFFS")" || return 1
  node="$(in_node stat -c %d /sys/fs/bpf 2>/dev/null)" || return 1
  [[ $host == "$node" ]]
}

load_env() {
  [[ -f $STATE/env ]] || return 1
  # shellcheck disable=SC1091
  source "$STATE/env"
}
