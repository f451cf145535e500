# shellcheck shell=bash disable=SC2034
# Shared settings and helpers for the testbed scripts (sourced, not run).
# Everything the testbed creates is named here, so `down` can remove exactly it.

TESTBED="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# ---- versions (the binary cache is keyed by these) -------------------------
K8S_VERSION=v1.36.3
ETCD_VERSION=v3.6.8
CILIUM_VERSION=v1.20.1
PAUSE_VERSION=3
HELM_VERSION=v4.3.2
BPFTOOL_VERSION=7.5.0
# Debian package whose kernel tree bpftool is built from (see lib/build.sh).
BPFTOOL_KSRC=6.12
# Image tarballs are named after a hash of their recipe (content, not mtime:
# a fresh clone must reuse them), so a recipe change rebuilds them.
IMAGE_RECIPE="$(cat "$TESTBED/lib/images.sh" "$TESTBED/images/labrun-sysctl-guard" "$TESTBED/images/cilium-agent" | sha256sum | cut -c1-12)"

# ---- paths ------------------------------------------------------------------
LRT_CACHE="${LRT_CACHE:-/var/cache/labrun-testbed}"   # binaries, image tarballs, chart
STATE="${LRT_STATE:-/var/lib/labrun-testbed}"         # everything of a running testbed
RUNDIR=/run/labrun-testbed                              # namespace files, pidfiles
NSDIR="$RUNDIR/ns"                                      # bind mounts holding the namespaces
UNDERLAY_NETNS="$NSDIR/underlay"                        # the nodes' and the host's bridge
PIDDIR="$RUNDIR/pids"
LOGDIR="$STATE/logs"
PKI="$STATE/pki"
KUBECONFIG_PATH="$STATE/kubeconfig"
VARS_PATH="$STATE/vars.yaml"
NODE_EXEC="$STATE/bin/node-exec"
OUTSIDE_EXEC="$STATE/bin/outside-exec"
# Commands the node's shell has on its PATH besides the machine's (helm,
# kubectl; node-exec puts this directory first).
NODE_BIN="$STATE/bin/node"
CREATED="$STATE/created"   # one line per host-side object the testbed created (for down)

K8S_BIN="$LRT_CACHE/kubernetes-$K8S_VERSION"
ETCD_BIN="$LRT_CACHE/etcd-$ETCD_VERSION"
CILIUM_BIN="$LRT_CACHE/cilium-$CILIUM_VERSION"
# The hubble CLI, from the same module, in a cache of its own: adding it
# kept the agent's cached build.
HUBBLE_BIN="$LRT_CACHE/hubble-$CILIUM_VERSION"
BPFTOOL_BIN="$LRT_CACHE/bpftool-$BPFTOOL_VERSION"
PAUSE_BIN="$LRT_CACHE/pause-$PAUSE_VERSION"
HELM_BIN="$LRT_CACHE/helm-$HELM_VERSION"
# From the github.com/cilium/cilium module (lib/build.sh): its Helm chart
# (install/kubernetes/cilium) and the scripts its image carries for the
# chart's init containers.
CILIUM_SRC="$LRT_CACHE/cilium-src-$CILIUM_VERSION"
CILIUM_CHART="$CILIUM_SRC/cilium"
IMAGES_DIR="$LRT_CACHE/images"
KUBECTL="$K8S_BIN/kubectl"
HELM="$HELM_BIN/helm"

# ---- profiles ---------------------------------------------------------------
# single: one node, native routing (the default; the cca-datapath lab's).
# tunnel: two nodes, VXLAN between them. native: two nodes, native routing
# with autoDirectNodeRoutes. Each has a Helm values file cilium/<profile>.yaml.
PROFILES="single tunnel native"
profile_nodes() { case $1 in single) echo 1 ;; tunnel|native) echo 2 ;; *) return 1 ;; esac; }

# ---- network (k3s' CIDRs; all inside the testbed's own namespaces) --------
# The underlay is a bridge in a network namespace of its own; the host and
# every node have a veth on it. Node i is "labrun-node" (i=1) or
# "labrun-node<i>", with InternalIP 10.250.42.<i+1> on its eth0.
HOST_VETH=lrt0            # host end of the host's veth to the underlay
UNDERLAY_BRIDGE=br0       # the bridge, inside $UNDERLAY_NETNS
NODE_DEV=eth0             # each node's end, inside the node's netns
HOST_IP=10.250.42.1
LINK_PREFIX=24
POD_CIDR=10.42.0.0/16
SVC_CIDR=10.43.0.0/16
KUBERNETES_SVC_IP=10.43.0.1
APISERVER_PORT=6443

# Per node i (1-based). Node 1 keeps the paths of the single-node testbed, so
# playbooks' vars files (bpffs, node-exec) stay valid.
node_name() { if [[ $1 == 1 ]]; then echo labrun-node; else echo "labrun-node$1"; fi; }
node_ip() { echo "10.250.42.$(($1 + 1))"; }
node_nsdir() { if [[ $1 == 1 ]]; then echo "$NSDIR"; else echo "$NSDIR/node$1"; fi; }
node_netns() { echo "$(node_nsdir "$1")/net"; }
node_mntns() { echo "$(node_nsdir "$1")/mnt"; }
# The node's bpffs as the host sees it (read-only; see lib/node.sh).
node_bpffs() { if [[ $1 == 1 ]]; then echo "$STATE/bpffs"; else echo "$STATE/bpffs-node$1"; fi; }
# The node's /var/run/cilium (a tmpfs: the agent's API socket, its state) as
# the host sees it (read-only; see lib/node.sh). A lab's node shell reaches
# the agent's API at /var/run/cilium/cilium.sock; the host reaches node I's
# at "$(node_cilium_run I)/cilium.sock".
node_cilium_run() { if [[ $1 == 1 ]]; then echo "$STATE/cilium-run"; else echo "$STATE/cilium-run-node$1"; fi; }
# The node's state: kubelet dir, /var/log, containerd root, CNI dirs.
node_state() { echo "$STATE/nodes/$(node_name "$1")"; }
# Component names (pidfile and log) of a node's daemons.
node_comp() { if [[ $1 == 1 ]]; then echo "$2"; else echo "$2-node$1"; fi; }
# The veth end of node i on the underlay bridge.
node_port() { echo "node$1"; }

NODE_NAME="$(node_name 1)"
NODE_IP="$(node_ip 1)"
NETNS="$(node_netns 1)"
MNTNS="$(node_mntns 1)"
BPFFS="$(node_bpffs 1)"
AGENT_SOCKET="$(node_cilium_run 1)/cilium.sock"

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

# dev_null_problem: prints what is wrong with the host's /dev/null, if it
# is not the null device. The nodes' mount namespaces share the host's
# /dev, and containerd's shim gives a command exec'd in a pod without stdin
# the node's /dev/null: if something on the machine removed the device and
# a later `>/dev/null` made a regular file there, every such command reads
# whatever was last written to it (seen as `cat` in a pod printing
# kubectl's output). The testbed does not repair the host; it says so.
dev_null_problem() {
  local st
  st="$(stat -c '%F %t:%T' /dev/null 2>&1)"
  [[ $st == "character special file 1:3" ]] && return 0
  echo "/dev/null is not the null device ($st): something on this machine replaced it, and commands in pods would read what was last written to it; restore it with: mknod -m 666 /dev/null.new c 1 3 && mv -f /dev/null.new /dev/null"
}

# in_node_i I CMD...: run CMD in node I's network and mount namespaces.
# (nsenter, not `ip netns exec`: the latter remounts /sys and would hide the
# node's own sysfs/cgroup setup.) in_node: the same on node 1.
in_node_i() { local i=$1; shift; nsenter --net="$(node_netns "$i")" --mount="$(node_mntns "$i")" -- "$@"; }
in_node() { in_node_i 1 "$@"; }
# in_underlay CMD...: run CMD in the underlay's network namespace.
in_underlay() { nsenter --net="$UNDERLAY_NETNS" -- "$@"; }

# kc ARGS...: kubectl against the testbed (from the host, over the veth).
kc() { "$KUBECTL" --kubeconfig "$KUBECONFIG_PATH" "$@"; }

# ns_up [I]: true when node I's (default 1) namespace files are live bind mounts.
ns_up() {
  local i=${1:-1}
  mountpoint -q "$(node_netns "$i")" 2>/dev/null && mountpoint -q "$(node_mntns "$i")" 2>/dev/null
}

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

# view_exposed I HOSTPATH NODEPATH FSTYPE: true when HOSTPATH on the host is
# a mount of type FSTYPE and the same instance as NODEPATH in node I (each
# bpffs or tmpfs instance has its own anonymous device number, so equal
# st_dev means one instance).
view_exposed() {
  local i=$1 path=$2 nodepath=$3 fstype=$4 host node
  mountpoint -q "$path" 2>/dev/null || return 1
  [[ "$(stat -f -c %T "$path")" == "$fstype" ]] || return 1
  host="$(stat -c %d "$path")" || return 1
  node="$(in_node_i "$i" stat -c %d "$nodepath" 2>/dev/null)" || return 1
  [[ $host == "$node" ]]
}

# bpffs_exposed [I]: true when node I's (default 1) bpffs path on the host is
# the node's /sys/fs/bpf.
bpffs_exposed() { view_exposed "${1:-1}" "$(node_bpffs "${1:-1}")" /sys/fs/bpf bpf_fs; }

# cilium_run_exposed [I]: true when node I's (default 1) /var/run/cilium on
# the host is the node's.
cilium_run_exposed() { view_exposed "${1:-1}" "$(node_cilium_run "${1:-1}")" /run/cilium tmpfs; }

# load_env: the running testbed's settings (CG_BASE, PROFILE, NODES), written
# by up.
load_env() {
  [[ -f $STATE/env ]] || return 1
  # shellcheck disable=SC1091
  source "$STATE/env"
}
