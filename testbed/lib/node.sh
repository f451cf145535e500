# shellcheck shell=bash
# The nodes' namespaces, cgroups and processes (sourced by up/down/status).
#
# Layout (see README.md):
# - the underlay: a bridge ($UNDERLAY_BRIDGE) in a network namespace of its
#   own. The host has one veth on it ($HOST_VETH, $HOST_IP); every node has
#   one ($NODE_DEV in the node, its InternalIP). Nothing else is attached, so
#   nothing leaves the machine.
# - per node, one network namespace holding everything of that node:
#   containerd, kubelet, Cilium, the pods' veths (and, on node 1, the
#   control plane).
# - per node, one mount namespace with a private /run, a sysfs of the node's
#   netns, its own bpffs at /sys/fs/bpf, the node's cgroup2 subtree at
#   /run/cilium/cgroupv2, read-only VM-wide /proc/sys, and a few bind mounts
#   so kubelet, containerd and Cilium find their usual paths.
# - the same bpffs instance is also mounted read-only on the host at
#   node_bpffs, so that programs on the host (labrun's bpfmap) can read
#   Cilium's pins of each node.
# - likewise the node's /run/cilium (= /var/run/cilium, a tmpfs of its own)
#   at node_cilium_run, so that the host reaches the agent's API socket
#   (labrun's http action with unixSocket), as a lab's node shell does at
#   /var/run/cilium/cilium.sock.
# - all kept alive by bind mounts of their nsfs files under $NSDIR.
# - one cgroup subtree $CG_BASE in every hierarchy, nested under the cgroup of
#   the process that ran `up`, with one sibling subtree per node (a node's
#   socket-LB programs attach to its subtree and must not cover the other's).

# record KIND PATH: remember a host-side object the testbed created.
record() { echo "$1 $2" >>"$CREATED"; }

# mk_host_dir PATH: create PATH and any missing parent on the host, recording
# each directory created (down removes them, deepest first).
mk_host_dir() {
  local p=$1 missing=()
  while [[ ! -d $p ]]; do missing=("$p" "${missing[@]}"); p="$(dirname "$p")"; done
  for p in "${missing[@]}"; do mkdir "$p"; record dir "$p"; done
}

# mk_cgroup HIERARCHY_MOUNT REL_PATH: create REL_PATH (and any missing parent)
# in one hierarchy, recording each directory it had to create. cpuset v1
# needs cpus/mems filled in before a task can join, so copy the parent's.
mk_cgroup() {
  local m=$1 rel=$2 cur="" part
  local -a parts
  IFS=/ read -ra parts <<<"${rel#/}"
  for part in "${parts[@]}"; do
    [[ -n $part ]] || continue
    cur+="/$part"
    [[ -d $m$cur ]] && continue
    mkdir "$m$cur"
    record cgroup "$m$cur"
    if [[ -f $m$cur/cpuset.cpus ]]; then
      cat "$(dirname "$m$cur")/cpuset.cpus" >"$m$cur/cpuset.cpus"
      cat "$(dirname "$m$cur")/cpuset.mems" >"$m$cur/cpuset.mems"
    fi
  done
}

# node_cg I: node I's cgroup subtree (relative to each hierarchy's root).
node_cg() { echo "$CG_BASE/$(node_name "$1")"; }

setup_cgroups() {
  local m i
  for m in $(cgroup_mounts); do
    for ((i = 1; i <= NODES; i++)); do
      mk_cgroup "$m" "$(node_cg "$i")/system"
      mk_cgroup "$m" "$(node_cg "$i")/node-exec"
    done
  done
}

# cgroup_pids [SUBDIR]: every process in the testbed's cgroup subtree (or its
# SUBDIR), in the unified hierarchy (which runc also uses for containers in
# hybrid mode) and the v1 memory and pids ones for safety. These are all
# processes the testbed started.
cgroup_pids() {
  local m
  for m in /sys/fs/cgroup/unified /sys/fs/cgroup/memory /sys/fs/cgroup/pids; do
    [[ -d $m$CG_BASE/${1:-} ]] || continue
    find "$m$CG_BASE/${1:-}" -name cgroup.procs -exec cat {} + 2>/dev/null
  done | sort -un
}

# remove_cgroups: rmdir the whole subtree (deepest first) in every hierarchy,
# then the parents `up` had to create (recorded in $CREATED).
remove_cgroups() {
  local m
  for m in $(cgroup_mounts); do
    [[ -d $m$CG_BASE ]] && find "$m$CG_BASE" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  if [[ -f $CREATED ]]; then
    local kind path
    tac "$CREATED" | while read -r kind path; do
      [[ $kind == cgroup && -d $path ]] && rmdir "$path" 2>/dev/null || true
    done
  fi
}

# The kubelet sets these VM-wide sysctls when they differ, with no opt-out
# (pkg/kubelet/cm setupKernelTunables). In each node's mount namespace each
# differing one is shadowed by a file holding the value kubelet wants, so it
# reads its value and writes nothing.
KUBELET_SYSCTLS="vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000"

# Paths of a real node that the chart and kubelet use as hostPaths. Each node
# binds its own directory there; on the host they are empty mountpoints that
# up creates if missing (recorded, so down removes them).
NODE_HOST_DIRS="/var/lib/kubelet /etc/cni/net.d /opt/cni/bin /usr/lib/modules"

# Runs INSIDE a new mount namespace (as the child of unshare), with N_BPFFS,
# N_CG and N_STATE naming the node's bpffs mount on the host, cgroup subtree
# and state directory.
node_mount_setup() {
  set -euo pipefail
  # This namespace is a copy of the host's mounts: drop the copies of the
  # testbed's own (other nodes' namespace files and bpffs views), which have
  # no business here and would keep those alive.
  local t
  for t in $(findmnt -rn -o TARGET | grep -E "^($NSDIR|$STATE/bpffs|$STATE/cilium-run)" | sort -r); do
    [[ $t == "$N_BPFFS" || $t == "$N_CILIUM_RUN" ]] || umount -l "$t"
  done
  # Own /run: kubelet, containerd and Cilium use their usual /run paths
  # (/run/containerd, /var/run/cilium, /run/xtables.lock) without touching
  # the host's or another node's.
  mount -t tmpfs -o mode=0755 tmpfs /run
  # /run/cilium: the tmpfs setup_node mounted on the host at N_CILIUM_RUN,
  # moved here as the bpffs is below (one instance; the host's own mount of
  # it stays, read-only, so the host reaches the agent's API socket).
  mkdir /run/cilium
  mount --move "$N_CILIUM_RUN" /run/cilium
  # sysfs of the node netns (so /sys/class/net shows the node's devices),
  # keeping the cgroup tree mounted under it.
  mkdir /run/.cg
  mount --rbind /sys/fs/cgroup /run/.cg
  mount -t sysfs sysfs /sys
  mount --move /run/.cg /sys/fs/cgroup
  rmdir /run/.cg
  # The node's own BPF filesystem: pins never mix with the host's or the
  # other node's. It was mounted on the host at N_BPFFS by setup_node; move
  # this namespace's copy of that mount to the usual place (one instance,
  # seen by the node at /sys/fs/bpf only, and by the host at N_BPFFS only).
  mount --move "$N_BPFFS" /sys/fs/bpf
  # Cilium's --cgroup-root: the node's cgroup2 subtree, so socket LB attaches
  # there and covers exactly the node's processes.
  mkdir -p /run/cilium/cgroupv2
  mount --bind "/sys/fs/cgroup/unified$N_CG" /run/cilium/cgroupv2
  # VM-wide sysctls read-only; net/ stays writable (it is the node netns').
  local d kv
  for d in /proc/sys/*; do
    [[ $d == /proc/sys/net || ! -d $d ]] && continue
    mount --bind "$d" "$d"
    mount -o remount,bind,ro "$d"
  done
  for kv in $KUBELET_SYSCTLS; do
    local k=${kv%%=*} v=${kv#*=}
    [[ -f /proc/sys/$k ]] || continue
    if [[ "$(cat "/proc/sys/$k")" != "$v" ]]; then
      echo "$v" >"$STATE/sysctl/${k//\//.}"
      mount --bind "$STATE/sysctl/${k//\//.}" "/proc/sys/$k"
    fi
  done
  # Usual paths of a node, backed by the node's state dir.
  mount --bind "$N_STATE/var-log" /var/log
  mount --bind "$N_STATE/kubelet" /var/lib/kubelet
  mount --bind "$N_STATE/cni/net.d" /etc/cni/net.d
  mount --bind "$N_STATE/cni/bin" /opt/cni/bin
  # bpftool 7.5 (tcx-aware) as the node's bpftool.
  mount --bind "$BPFTOOL_BIN/bpftool" /usr/sbin/bpftool
  # kubelet/containerd need shared propagation for volume mounts and the
  # agent's Bidirectional /sys/fs/bpf. The namespace was made private first,
  # so nothing propagates back to the host.
  mount --make-rshared /
}

# setup_underlay: the bridge namespace and the host's veth on it.
setup_underlay() {
  mkdir -p "$NSDIR" "$STATE/sysctl"
  # The mnt nsfs files must live on a private mount (else they would pin
  # themselves).
  if ! mountpoint -q "$NSDIR"; then
    mount --bind "$NSDIR" "$NSDIR"
    record mount "$NSDIR"
  fi
  mount --make-private "$NSDIR"
  touch "$UNDERLAY_NETNS"
  unshare --net="$UNDERLAY_NETNS" true
  in_underlay ip link set lo up
  in_underlay ip link add "$UNDERLAY_BRIDGE" type bridge
  in_underlay ip link set "$UNDERLAY_BRIDGE" up
  # veth: created in the host, the bridge end moved into the underlay.
  ip link add "$HOST_VETH" type veth peer name host netns "$UNDERLAY_NETNS"
  record link "$HOST_VETH"
  in_underlay ip link set host master "$UNDERLAY_BRIDGE" up
  ip addr add "$HOST_IP/$LINK_PREFIX" dev "$HOST_VETH"
  ip link set "$HOST_VETH" up
  local d
  for d in $NODE_HOST_DIRS; do mk_host_dir "$d"; done
}

# mount_view PATH MOUNT_ARGS... SOURCE: a fresh filesystem at PATH on the
# host (created and recorded for `down`), for setup_node to hand to a node:
# a stale one there (down normally removes it) is unmounted first.
mount_view() {
  local path=$1; shift
  [[ -d $path ]] || mk_host_dir "$path"
  while mountpoint -q "$path"; do
    log "unmounting a stale view at $path"
    umount "$path"
  done
  mount "$@" "$path"
  record mount "$path"
}

# setup_node I: node I's namespaces, its bpffs (also mounted read-only on the
# host) and its veth on the underlay.
setup_node() {
  local i=$1 nsd st bpffs netns crun
  nsd="$(node_nsdir "$i")"; st="$(node_state "$i")"; bpffs="$(node_bpffs "$i")"
  crun="$(node_cilium_run "$i")"
  netns="$(node_netns "$i")"
  mkdir -p "$nsd" "$st/var-log" "$st/kubelet" "$st/cni/net.d" "$st/cni/bin"
  touch "$netns" "$(node_mntns "$i")"
  # The node's bpffs is created here, in the host's mount namespace, at a
  # path of the testbed's (never the host's /sys/fs/bpf), so that the host
  # can reach it: a bpffs mounted inside the node's namespace could not be
  # bind-mounted out of it. The node's namespace gets it as /sys/fs/bpf
  # (node_mount_setup); once that is done the host's view becomes read-only
  # (nothing can be pinned or unpinned through it). `down` unmounts it.
  mount_view "$bpffs" -t bpf "labrun-testbed-bpffs-$(node_name "$i")"
  # The node's /var/run/cilium, made the same way (a tmpfs, so the agent's
  # state never outlives the testbed).
  mount_view "$crun" -t tmpfs -o mode=0755,size=256m "labrun-testbed-cilium-run-$(node_name "$i")"
  N_BPFFS="$bpffs" N_CILIUM_RUN="$crun" N_CG="$(node_cg "$i")" N_STATE="$st" STATE="$STATE" NSDIR="$NSDIR" \
    BPFTOOL_BIN="$BPFTOOL_BIN" KUBELET_SYSCTLS="$KUBELET_SYSCTLS" \
    unshare --net="$netns" --mount="$(node_mntns "$i")" --propagation private \
    bash -c "$(declare -f node_mount_setup); node_mount_setup"
  mount -o remount,bind,ro "$bpffs"
  mount -o remount,bind,ro "$crun"
  # veth: the underlay end on the bridge, the node end is the node's eth0.
  in_underlay ip link add "$(node_port "$i")" type veth peer name "$NODE_DEV" netns "$netns"
  in_underlay ip link set "$(node_port "$i")" master "$UNDERLAY_BRIDGE" up
  in_node_i "$i" ip link set lo up
  in_node_i "$i" ip addr add "$(node_ip "$i")/$LINK_PREFIX" dev "$NODE_DEV"
  in_node_i "$i" ip link set "$NODE_DEV" up
}

# spawn NAME I CMD...: start CMD as a daemon in node I's namespaces, in the
# cgroup <node I>/system of every hierarchy, its own session (so it outlives
# the calling shell), output appended to $LOGDIR/NAME.log. The pidfile holds
# PID and start time (see pid_alive). Every file descriptor but 0-2 is
# closed first: a daemon must not keep what its starter had open, such as
# the lock a caller holds around testbed/up (`flock LOCK testbed/up`),
# which a daemon inheriting it would hold for as long as it runs.
spawn() {
  local name=$1 i=$2; shift 2
  local procs="" m
  for m in $(cgroup_mounts); do procs+="$m$(node_cg "$i")/system/cgroup.procs "; done
  echo "==== $(date -Is) starting: $*" >>"$LOGDIR/$name.log"
  # bash -c writes its own PID into the cgroups, then execs nsenter, which
  # execs CMD: the PID stays the same all the way.
  NETNS="$(node_netns "$i")" MNTNS="$(node_mntns "$i")" setsid bash -c 'for fd in /proc/$$/fd/*; do fd=${fd##*/}; ((fd > 2)) && eval "exec $fd>&-"; done; for f in $1; do echo $$ >"$f"; done; shift; exec nsenter --net="$NETNS" --mount="$MNTNS" -- "$@"' \
    _ "$procs" "$@" </dev/null >>"$LOGDIR/$name.log" 2>&1 &
  local pid=$!
  echo "$pid $(awk '{print $22}' "/proc/$pid/stat")" >"$PIDDIR/$name.pid"
}

# stop_pid NAME [GRACE]: SIGTERM the component by its pidfile, SIGKILL after
# GRACE seconds (default 15).
stop_pid() {
  local name=$1 grace=${2:-15} pid
  pid_alive "$name" || { rm -f "$PIDDIR/$name.pid"; return 0; }
  read -r pid _ <"$PIDDIR/$name.pid"
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + grace))
  while pid_alive "$name" && ((SECONDS < deadline)); do sleep 0.2; done
  if pid_alive "$name"; then kill -KILL "$pid" 2>/dev/null || true; fi
  while pid_alive "$name"; do sleep 0.1; done
  rm -f "$PIDDIR/$name.pid"
}
